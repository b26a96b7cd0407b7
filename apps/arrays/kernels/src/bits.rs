//! Compaction of a bitmask: the set bits of `words` words (32 elements a
//! word, bit `i % 32` of word `i / 32` for element `i`) listed in order,
//! by a count per word ([`CountBits`]), an exclusive scan of the counts
//! and a fill ([`ListBits`]). A bit per element makes the marks 32 times
//! smaller than a word each, so that kernels setting them at random hit
//! the GPU's L2 cache, and the scan runs over a word per 32 elements.

use crate::{BOUNDS, arrays, chunk};

cavity_device::kernel! {
    /// Writes the number of set bits of each of the `words` words of
    /// `bits` to `counts`.
    ///
    /// # Safety
    /// `bits` and `counts` hold `words` words.
    #[launch_bounds = BOUNDS]
    pub kernel CountBits(launch, bits: u64, words: u32, counts: u64) {
        // SAFETY: the kernel's contract.
        let [bits, counts] = unsafe { arrays([bits, counts]) };
        let (start, end) = chunk(launch.block_idx, words);
        launch.block.for_each(end - start, |k| {
            let w = start + k;
            // SAFETY: read only input; one thread writes each count.
            unsafe { counts.store_unshared(w, bits.load_unshared(w).count_ones()) };
        });
    }
}

cavity_device::kernel! {
    /// Lists the set bits of the `words` words of `bits`: `offsets` is the
    /// exclusive scan of their counts ([`CountBits`]), and the elements of
    /// word `w` go, ascending, to `out` from `offsets[w]`.
    ///
    /// # Safety
    /// `bits` and `offsets` hold `words` words, `out` the total.
    #[launch_bounds = BOUNDS]
    pub kernel ListBits(launch, bits: u64, offsets: u64, words: u32, out: u64) {
        // SAFETY: the kernel's contract.
        let [bits, offsets, out] = unsafe { arrays([bits, offsets, out]) };
        let (start, end) = chunk(launch.block_idx, words);
        launch.block.for_each(end - start, |k| {
            let w = start + k;
            // SAFETY: read only inputs; one thread writes each listed
            // place.
            unsafe {
                let (mut set, mut at) = (bits.load_unshared(w), offsets.load_unshared(w));
                while set != 0 {
                    out.store_unshared(at, 32 * w + set.trailing_zeros());
                    set &= set - 1;
                    at += 1;
                }
            }
        });
    }
}
