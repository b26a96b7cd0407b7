//! Compaction: the marked ones of `n` elements listed in order, after an
//! exclusive scan of their 0/1 marks.

use crate::{BOUNDS, arrays, chunk};

cavity_device::kernel! {
    /// Lists the kept ones of `n` elements: `offsets` is the exclusive scan
    /// of their 0/1 marks over `n + 1` words (so element `i` is kept when
    /// `offsets[i + 1] > offsets[i]`), and each kept `i` goes to
    /// `out[offsets[i]]`, complemented (`!i`) where `complement[i]` is not
    /// 0 (`complement` 0: none is; the ternary entries' sign -1).
    ///
    /// # Safety
    /// `offsets` holds `n + 1` words, `complement` (unless 0) `n`, and `out`
    /// the total.
    #[launch_bounds = BOUNDS]
    pub kernel Compact(launch, offsets: u64, complement: u64, n: u32, out: u64) {
        // SAFETY: the kernel's contract.
        let [offsets, flags, out] = unsafe { arrays([offsets, complement, out]) };
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let i = start + k;
            // SAFETY: read only inputs; one thread writes each kept place.
            unsafe {
                let at = offsets.load_unshared(i);
                if offsets.load_unshared(i + 1) > at {
                    let flip = complement != 0 && flags.load_unshared(i) != 0;
                    out.store_unshared(at, if flip { !i } else { i });
                }
            }
        });
    }
}
