//! The naive global-memory baseline the query benchmark compares against:
//! one thread per element walking a CSR adjacency in global memory, as in
//! the papers' comparison with PDE (RXMesh section 7).

use crate::block::Scatter;

/// `out[i] = Σ attr[adj[k]]` for `k` in `offsets[i]..offsets[i + 1]`.
#[inline(always)]
pub fn csr_sum(i: u32, offsets: &[u32], adj: &[u32], attr: &[f32], out: &Scatter<f32>) {
    let i = i as usize;
    let mut sum = 0.0;
    for k in offsets[i]..offsets[i + 1] {
        sum += attr[adj[k as usize] as usize];
    }
    out.write(i, sum);
}
