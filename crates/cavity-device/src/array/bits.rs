//! Compaction of a bitmask: the set bits of `words` words (32 elements a
//! word, bit `i % 32` of word `i / 32` for element `i`) listed in order,
//! by a count per word ([`CountBits`]), an exclusive scan of the counts
//! and a fill ([`ListBits`]). A bit per element makes the marks 32 times
//! smaller than a word each, so that kernels setting them at random hit
//! the GPU's L2 cache, and the scan runs over a word per 32 elements.

use super::{BOUNDS, In, InOut, chunk};

crate::kernel! {
    @core
    /// Writes the number of set bits of each of the `words` words of
    /// `bits` to `counts`.
    ///
    /// # Safety
    /// Checked: `bits` is only read; each word of `counts` is written by
    /// the one thread its index names.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountBits(launch, bits: In<u32>, words: u32, counts: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, words);
        launch.block.for_each(end - start, |k| {
            let w = start + k;
            // SAFETY: one thread writes each count.
            unsafe { counts.set_unshared(w, bits.get(w).count_ones()) };
        });
    }
}

crate::kernel! {
    @core
    /// Writes the element of each set bit of the `words` words of `bits`
    /// to `out`, from `offsets[w]` (the exclusive scan of the words'
    /// counts) for word `w`, in ascending order.
    ///
    /// # Safety
    /// Checked: the inputs are only read; `out` is written by atomic
    /// stores.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel ListBits(launch, bits: In<u32>, offsets: In<u32>, words: u32, out: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, words);
        launch.block.for_each(end - start, |k| {
            let w = start + k;
            let (mut set, mut at) = (bits.get(w), offsets.get(w));
            while set != 0 {
                out.set(at, 32 * w + set.trailing_zeros());
                set &= set - 1;
                at = at.wrapping_add(1);
            }
        });
    }
}
