//! Host memory made ready for a download while the device works
//! ([`Landing`]). A download's new array is faulted in by the copy
//! itself, a page at a time (issue 55, on an H200's host: 465 MB copied
//! back in 43-52 ms into fresh memory, 15-17 ms into memory already
//! faulted in); a command that knows, before the device's last steps,
//! about how much it will copy back has the host's idle threads fault the
//! array in while those steps run ([`crate::backend::Backend::landing`],
//! [`crate::backend::Backend::download_into`]).

use std::mem::MaybeUninit;
use std::thread::JoinHandle;

use rayon::prelude::*;

use super::cuda::staging::STAGED_FROM;

/// Bytes of a page the preparation touches (the smallest page size).
const PAGE: usize = 4096;

/// The spare capacity of `array` as bytes that may be uninitialised (its
/// elements' bytes, for a [`bytemuck::Pod`] download or the pages'
/// touches), borrowed from the array.
pub(crate) fn spare_bytes<T>(array: &mut Vec<T>) -> &mut [MaybeUninit<u8>] {
    let spare = array.spare_capacity_mut();
    let bytes = std::mem::size_of_val(spare);
    // SAFETY: the same memory as `spare`, borrowed as long, as bytes of no
    // validity requirement (`MaybeUninit<u8>`), alignment 1.
    unsafe { std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast::<MaybeUninit<u8>>(), bytes) }
}

/// Arrays of at least these bytes ask for huge pages
/// ([`advise_huge_pages`]).
pub(crate) const HUGE_PAGES_FROM: usize = 32 << 20;

/// Host memory for up to a number of elements of `T`, its pages being
/// faulted in on a thread of its own; the download it is given to
/// ([`crate::backend::Backend::download_into`]) waits for it. A
/// landing of no elements prepares nothing.
pub struct Landing<T: Send + 'static> {
    prepared: Option<JoinHandle<Vec<T>>>,
}

impl<T: Send + 'static> Landing<T> {
    /// Nothing prepared: the download allocates its array itself.
    pub fn none() -> Landing<T> {
        Landing { prepared: None }
    }

    /// An empty array with room for `n` elements, whose pages the host's
    /// threads (rayon's pool) touch in the background, each thread a run
    /// of whole pages, after asking for huge pages under them from
    /// [`HUGE_PAGES_FROM`] bytes. Nothing is prepared for arrays of fewer
    /// than [`STAGED_FROM`] bytes, which a download copies through pageable
    /// memory into an array of its own; nor when the memory cannot be had
    /// (the download then tries for itself).
    pub(crate) fn prepare(n: usize) -> Landing<T> {
        if n.saturating_mul(std::mem::size_of::<T>()) < STAGED_FROM {
            return Landing::none();
        }
        let prepared = std::thread::Builder::new().spawn(move || {
            let mut array: Vec<T> = Vec::new();
            if array.try_reserve_exact(n).is_err() {
                return array;
            }
            let raw = spare_bytes(&mut array);
            if raw.len() >= HUGE_PAGES_FROM {
                advise_huge_pages(raw);
            }
            let run = raw
                .len()
                .div_ceil(rayon::current_num_threads().max(1))
                .next_multiple_of(PAGE);
            raw.par_chunks_mut(run).for_each(|pages| {
                for page in pages.chunks_mut(PAGE) {
                    page[0].write(0);
                }
            });
            array
        });
        Landing {
            prepared: prepared.ok(),
        }
    }

    /// The prepared array (empty; room for the elements asked for, or none
    /// when nothing was prepared or the preparation failed), once its
    /// pages are in. Not to be called from within a rayon task: the
    /// preparation runs on rayon's pool, which such a wait could leave
    /// without a free thread.
    pub(crate) fn take(self) -> Vec<T> {
        self.prepared
            .and_then(|p| p.join().ok())
            .unwrap_or_default()
    }
}

/// Asks Linux for transparent huge pages (2 MB) under the whole 2 MB
/// pages of `bytes`, a new array about to be written: each fresh 4 KB page
/// costs a fault, a huge page one for 512 of them. Advice only: where the
/// kernel gives none (`never`, or no huge page free), nothing changes.
pub(crate) fn advise_huge_pages(bytes: &mut [MaybeUninit<u8>]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let first = bytes.as_ptr() as usize;
        let (start, end) = (
            first.next_multiple_of(HUGE),
            (first + bytes.len()) / HUGE * HUGE,
        );
        if end > start {
            // SAFETY: the range lies within `bytes`, memory the caller
            // owns; the advice changes how its pages are backed, never
            // their content.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_landing_has_room_and_no_elements() {
        let n = STAGED_FROM;
        let array = Landing::<u32>::prepare(n).take();
        assert!(array.is_empty() && array.capacity() >= n);
        // Too small to be staged, or nothing: no room prepared.
        assert_eq!(Landing::<u32>::prepare(1000).take().capacity(), 0);
        assert_eq!(Landing::<u32>::prepare(0).take().capacity(), 0);
        assert_eq!(Landing::<u32>::none().take().capacity(), 0);
        let mut array = Landing::<u8>::prepare(HUGE_PAGES_FROM + 5).take();
        assert!(spare_bytes(&mut array).len() >= HUGE_PAGES_FROM + 5);
    }
}
