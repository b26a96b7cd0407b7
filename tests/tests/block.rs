//! The block abstraction's index mappings: every thread layout visits each
//! index once.

use cavity_device::block::{WARP, spread_start};

/// `for_each_spread`'s first indices are a permutation of the threads, for
/// blocks of whole warps (the GPU's) and others (the host's one thread),
/// and a block of whole warps gives index `i < warps` to lane 0 of warp `i`.
#[test]
fn spread_start_is_a_permutation() {
    for dim in [1, 7, WARP, 2 * WARP, 100, 256, 1024] {
        let mut seen = vec![false; dim as usize];
        for t in 0..dim {
            let i = spread_start(t, dim) as usize;
            assert!(
                i < dim as usize && !seen[i],
                "block of {dim}: thread {t} gets {i} again"
            );
            seen[i] = true;
        }
        if dim.is_multiple_of(WARP) {
            for warp in 0..dim / WARP {
                assert_eq!(spread_start(warp * WARP, dim), warp, "block of {dim}");
            }
        }
    }
}
