//! Buffers on a backend (`cavity::backend::buffer`): copies of every size
//! both ways (on the GPU, uploads and downloads from
//! `cavity::backend::cuda::staging::STAGED_FROM` bytes go through the
//! pinned staging buffers, in pieces of `staging::FIRST_PIECE` bytes,
//! or of `staging::PIECE` once the larger pair asked for is pinned;
//! downloads of a prefix too; each pair on its own; downloads into
//! prepared memory), checked through a scan that reads them on the device;
//! the memory of freed buffers counted as free; the compaction of marks and
//! of a bitmask; views cut apart for one launch; a checked kernel given an
//! array too short for its launch stops instead of reaching past it.
//!
//! The backend comes from `CAVITY_TEST_DEVICE` (`cpu` by default, `cuda`
//! on the GPU machine).

use cavity::backend::Backend;
use cavity::backend::buffer::Buffer;
use cavity::backend::cuda::staging::{FIRST_PIECE, PIECE, STAGED_FROM, Staging};
use cudarc::driver::DevicePtrMut;

mod common;
use cavity_device::array::{AddChunkOffsets, CountBits};
use common::test_backend;

/// Word `i` of the test arrays.
fn word(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) >> 28
}

/// Each staging pair on its own (the backend's copies meet the first only
/// until the second is pinned): bytes across every piece boundary, up and
/// back into an uninitialised array.
#[test]
fn each_staging_pair_round_trips() {
    let d = test_backend();
    let Backend::Cuda(gpu) = &d else { return };
    let stream = gpu.stream();
    for size in [FIRST_PIECE, PIECE] {
        let mut staging = Staging::new(stream.context(), size).unwrap();
        assert_eq!(staging.piece(), size);
        for n in [size - 1, size, size + 1, 2 * size + 12_345] {
            let data: Vec<u8> = (0..n).map(|i| word(i) as u8 ^ (i >> 8) as u8).collect();
            let mut dev = stream.alloc_zeros::<u8>(n).unwrap();
            let mut back = vec![std::mem::MaybeUninit::<u8>::uninit(); n];
            {
                let (ptr, _record) = dev.device_ptr_mut(stream);
                // SAFETY: `dev` holds `n` bytes and only this stream uses it.
                unsafe {
                    staging.upload(stream, &data, ptr).unwrap();
                    staging.download(stream, ptr, &mut back).unwrap();
                }
            }
            // SAFETY: the download wrote every byte.
            let back: Vec<u8> = back
                .into_iter()
                .map(|b| unsafe { b.assume_init() })
                .collect();
            assert!(back == data, "{n} bytes through pieces of {size}");
        }
    }
}

/// Downloads into host memory prepared beforehand (`Backend::landing`):
/// with room for them (that memory taken, which its capacity shows on the
/// GPU), with too little or none (a new array), of a prefix; 36 MB, so
/// that huge pages are asked for.
#[test]
fn downloads_land_in_prepared_memory() {
    let d = &test_backend();
    let n = 9_000_000;
    let data: Vec<u32> = (0..n).map(word).collect();
    for (room, len) in [(0, n), (n / 2, n), (n, n), (n + 100, n), (n, n / 3)] {
        let words = d.upload(&data).unwrap();
        let back = d.download_into(words, len, d.landing(room)).unwrap();
        assert!(back == data[..len], "{len} words into room for {room}");
        if matches!(d, Backend::Cuda(_)) && room >= len {
            assert!(back.capacity() >= room, "{len} words into room for {room}");
        }
    }
}

/// The larger staging pair asked for (`Backend::stage_larger`, twice: the
/// second does nothing) while copies across its pieces go on, and after.
#[test]
fn copies_go_on_while_the_staging_grows() {
    let d = &test_backend();
    let n = 3 * PIECE / 4 + 7;
    let data: Vec<u32> = (0..n).map(word).collect();
    d.stage_larger();
    for round in 0..4 {
        d.stage_larger();
        let words = d.upload(&data).unwrap();
        assert!(d.read_back(&words, n).unwrap() == data, "round {round}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn copies_of_every_size_round_trip_and_reach_the_kernels() {
    let d = &test_backend();
    let (staged, first, piece) = (STAGED_FROM / 4, FIRST_PIECE / 4, PIECE / 4);
    for n in [
        0,
        1,
        1000,
        staged - 1,
        staged,
        first - 1,
        first + 1,
        2 * first + 12_345,
        piece - 1,
        piece,
        piece + 1,
        2 * piece + 12_345,
        3 * piece + 7,
    ] {
        let data: Vec<u32> = (0..n).map(word).collect();
        let words = d.upload(&data).unwrap();
        assert_eq!(d.read_back(&words, n).unwrap(), data, "{n} words back");
        // A prefix only, then the scan of the whole array on the device:
        // each word the kernels read is the one uploaded.
        let half = n / 2 + usize::from(n % 2 == 1);
        assert_eq!(
            d.read_back(&words, half).unwrap(),
            data[..half],
            "{half} of {n} words"
        );
        let mut scanned = d.copy(&words, n).unwrap();
        d.exclusive_scan(&mut scanned, n as u32).unwrap();
        let want: Vec<u32> = data
            .iter()
            .scan(0u32, |s, &x| {
                let before = *s;
                *s = s.wrapping_add(x);
                Some(before)
            })
            .collect();
        assert_eq!(d.download(scanned, n).unwrap(), want, "scan of {n} words");
    }
}

/// The GPU's memory pool keeps the memory of freed buffers for the next
/// allocations; the free memory a backend reports counts it, so that a
/// capacity check after a large buffer was freed does not refuse work the
/// device has room for. (On the CPU backend there is no device memory to
/// report.)
#[test]
fn memory_freed_counts_as_free() {
    let d = &test_backend();
    let Some(before) = d.free_device_memory().unwrap() else {
        assert!(matches!(d, Backend::Cpu(_)), "the GPU reports its memory");
        return;
    };
    let gib = 1u64 << 30;
    let words = (gib / 2) as usize;
    let big = d.zeros::<u32>(words).unwrap();
    assert_eq!(d.element(&big, words - 1).unwrap(), 0);
    let held = d.free_device_memory().unwrap().unwrap();
    drop(big);
    // A read waits for the stream, after the free.
    let one = d.upload(&[1u32]).unwrap();
    assert_eq!(d.element(&one, 0).unwrap(), 1);
    let after = d.free_device_memory().unwrap().unwrap();
    // Other tests of this binary allocate meanwhile: a margin of 1 GiB.
    assert!(held + gib <= before, "2 GiB held: {held} of {before} free");
    assert!(
        after + gib >= before,
        "freed: {after} free, {before} before"
    );
    assert!(
        after >= held + gib,
        "2 GiB freed: {after} free, {held} while held"
    );
}

#[test]
fn a_bitmask_compacts_into_its_set_bits_in_order() {
    let d = &test_backend();
    let words = 3 * 2048 + 17;
    let bits: Vec<u32> = (0..words)
        .map(|w| word(w).wrapping_mul(0x0101_0101) ^ (w as u32))
        .collect();
    let want: Vec<u32> = (0..32 * words as u32)
        .filter(|&i| bits[(i / 32) as usize] >> (i % 32) & 1 != 0)
        .collect();
    let (list, count) = d
        .compact_bits(&d.upload(&bits).unwrap(), words as u32)
        .unwrap();
    assert_eq!(count as usize, want.len());
    assert_eq!(d.download(list, want.len()).unwrap(), want);
}

#[test]
fn marks_compact_into_their_indices_with_complements() {
    let d = &test_backend();
    let n = 5000u32;
    let marks: Vec<u32> = (0..=n)
        .map(|i| u32::from(i < n && word(i as usize) % 3 == 0))
        .collect();
    let flips: Vec<u32> = (0..n).map(|i| i % 2).collect();
    let mut on_device = d.upload(&marks).unwrap();
    let flips_on_device = d.upload(&flips).unwrap();
    let (list, count) = d
        .compact(&mut on_device, Some(&flips_on_device), n)
        .unwrap();
    let want: Vec<u32> = (0..n)
        .filter(|&i| marks[i as usize] == 1)
        .map(|i| if i % 2 == 1 { !i } else { i })
        .collect();
    assert_eq!(count as usize, want.len());
    assert_eq!(d.download(list, want.len()).unwrap(), want);
}

#[test]
fn views_cut_apart_take_one_launch_each_part() {
    let d = &test_backend();
    let mut out: Buffer<u32> = d.zeros(10).unwrap();
    let (one, ten) = (d.upload(&[1u32]).unwrap(), d.upload(&[10u32]).unwrap());
    {
        let (head, tail) = out.view_mut().split_at(4);
        d.launch::<AddChunkOffsets>(1, (0, 0), (head, 4, &one))
            .unwrap();
        d.launch::<AddChunkOffsets>(1, (0, 0), (tail.range(1..6), 5, &ten))
            .unwrap();
    }
    assert_eq!(
        d.download(out, 10).unwrap(),
        [1, 1, 1, 1, 0, 10, 10, 10, 10, 10]
    );
}

#[test]
fn a_kernel_given_too_short_an_array_stops_before_it() {
    let d = &test_backend();
    if !matches!(d, Backend::Cpu(_)) {
        eprintln!("checked on the CPU backend only: a trap ends the GPU's context");
        return;
    }
    let bits = d.upload(&[u32::MAX; 100]).unwrap();
    // One count word short: the last thread's store is past the end.
    let mut counts: Buffer<u32> = d.zeros(99).unwrap();
    let stopped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        d.launch::<CountBits>(1, (0, 0), (&bits, 100, &mut counts))
    }));
    assert!(stopped.is_err(), "the launch ran past the array");
    assert_eq!(d.read_back(&counts, 99).unwrap(), vec![32; 99]);
}
