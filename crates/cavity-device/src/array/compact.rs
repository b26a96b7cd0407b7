//! Compaction: the marked ones of `n` elements listed in order, after an
//! exclusive scan of their 0/1 marks.

use super::{BOUNDS, In, InOut, chunk};

crate::kernel! {
    @core
    /// Lists the kept ones of `n` elements: `offsets` is the exclusive scan
    /// of their 0/1 marks over `n + 1` words (so element `i` is kept when
    /// `offsets[i + 1] > offsets[i]`), and each kept `i` goes to
    /// `out[offsets[i]]`, complemented (`!i`) where `complement[i]` is not
    /// 0 (an empty `complement`: none is; the ternary entries' sign -1).
    ///
    /// # Safety
    /// Checked: the inputs are only read; `out` is written by atomic
    /// stores.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CompactMarked(launch, offsets: In<u32>, complement: In<u32>, n: u32, out: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let i = start + k;
            let at = offsets.get(i);
            if offsets.get(i + 1) > at {
                let flip = !complement.is_empty() && complement.get(i) != 0;
                out.set(at, if flip { !i } else { i });
            }
        });
    }
}
