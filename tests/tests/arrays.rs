//! Arrays of words on a backend (`cavity-arrays`): copies of every size
//! both ways (on the GPU, uploads from `cavity::backend::cuda::staging::STAGED_FROM`
//! bytes go through the pinned staging buffers, in pieces of
//! `staging::PIECE` bytes; downloads of a prefix too), checked
//! through a scan that reads them on the device; the compaction of a
//! bitmask.

use cavity::backend::cuda::staging::{PIECE, STAGED_FROM};
use cavity_arrays::Device;
use cavity_tests::test_backend;

/// Word `i` of the test arrays.
fn word(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) >> 28
}

#[test]
fn copies_of_every_size_round_trip_and_reach_the_kernels() {
    let backend = test_backend();
    cavity_arrays::add_kernels(&backend).unwrap();
    let d = Device::new(&backend);
    let (staged, piece) = (STAGED_FROM / 4, PIECE / 4);
    for n in [
        0,
        1,
        1000,
        staged - 1,
        staged,
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

#[test]
fn a_bitmask_compacts_into_its_set_bits_in_order() {
    let backend = test_backend();
    cavity_arrays::add_kernels(&backend).unwrap();
    let d = Device::new(&backend);
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
