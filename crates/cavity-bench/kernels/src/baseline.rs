//! The global-memory baselines the query benchmark compares against, one
//! thread per source element, no shared memory (RXMesh section 7):
//!
//! - [`csr_sum`]: the query's answer stored as a CSR in global memory and
//!   summed (the cheapest possible consumer of a precomputed relation);
//! - [`pde_sum`]: Parallel Directed Edges (PDE), RXMesh's GPU baseline, a
//!   GPU port of Directed Edges (Campagna et al. 1998): half-edges implicit
//!   per face, `h = 3f + i` from corner `i` to corner `i + 1`, with a twin
//!   array, and vertex queries walking the half-edges around the vertex.

use cavity_device::block::Scatter;
use cavity_device::kernel::{ELEMENT_BOUNDS, slice_at};
use cavity_device::query::{self, Query};

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

/// "No half-edge": the twin of a boundary half-edge, the outgoing half-edge
/// of an isolated vertex.
pub const NO_HALF_EDGE: u32 = u32::MAX;

/// A Directed Edges mesh in input numbering. Shapes: `fv[3F]` (the face
/// list: half-edge `h` starts at `fv[h]`), `twin[3F]`, `edge[3F]` (the
/// undirected edge of each half-edge), `outgoing[V]` (one half-edge out of
/// each vertex; for a boundary vertex the one without twin, so that a walk
/// covers the whole fan), `edge_half[E]` (one half-edge of each edge).
/// Defined for edge- and vertex-manifold, consistently oriented meshes only
/// (PDE's restriction, RXMesh section 7).
#[derive(Clone, Copy)]
pub struct DirectedEdges<'a> {
    /// Half-edge origins.
    pub fv: &'a [u32],
    /// Opposite half-edge or [`NO_HALF_EDGE`].
    pub twin: &'a [u32],
    /// Undirected edge of each half-edge.
    pub edge: &'a [u32],
    /// One outgoing half-edge per vertex.
    pub outgoing: &'a [u32],
    /// One half-edge per edge.
    pub edge_half: &'a [u32],
}

/// The next half-edge in the same face.
#[inline(always)]
fn next(h: u32) -> u32 {
    if h % 3 == 2 { h - 2 } else { h + 1 }
}

/// The previous half-edge in the same face.
#[inline(always)]
fn prev(h: u32) -> u32 {
    if h % 3 == 0 { h + 2 } else { h - 1 }
}

/// `out[i] = Σ attr[n]` over the results `n` of `query` for element `i`
/// (input numbering), computed from the Directed Edges arrays alone. The
/// vertex walk visits at most `max_valence` half-edges (a guard; on a
/// manifold mesh the walk ends by itself).
#[inline(always)]
pub fn pde_sum(
    query: Query,
    i: u32,
    de: &DirectedEdges,
    max_valence: u32,
    attr: &[f32],
    out: &Scatter<f32>,
) {
    let a = |x: u32| attr[x as usize];
    let mut sum = 0.0;
    match query {
        Query::VV | Query::VE | Query::VF => {
            let start = de.outgoing[i as usize];
            let mut h = start;
            let mut steps = 0;
            while h != NO_HALF_EDGE && steps < max_valence {
                sum += match query {
                    Query::VV => a(de.fv[next(h) as usize]),
                    Query::VE => a(de.edge[h as usize]),
                    _ => a(h / 3),
                };
                let p = prev(h);
                let t = de.twin[p as usize];
                if t == NO_HALF_EDGE {
                    sum += match query {
                        Query::VV => a(de.fv[p as usize]),
                        Query::VE => a(de.edge[p as usize]),
                        _ => 0.0,
                    };
                }
                h = if t == start { NO_HALF_EDGE } else { t };
                steps += 1;
            }
        }
        Query::EV | Query::EF => {
            let h = de.edge_half[i as usize];
            if query == Query::EV {
                sum = a(de.fv[h as usize]) + a(de.fv[next(h) as usize]);
            } else {
                let t = de.twin[h as usize];
                sum = a(h / 3) + if t == NO_HALF_EDGE { 0.0 } else { a(t / 3) };
            }
        }
        Query::FV | Query::FE | Query::FF => {
            for h in 3 * i..3 * i + 3 {
                sum += match query {
                    Query::FV => a(de.fv[h as usize]),
                    Query::FE => a(de.edge[h as usize]),
                    _ => {
                        let t = de.twin[h as usize];
                        if t == NO_HALF_EDGE { 0.0 } else { a(t / 3) }
                    }
                };
            }
        }
    }
    out.write(i as usize, sum);
}

/// The addresses and lengths of a [`DirectedEdges`] mesh: the PDE kernel's
/// parameter.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct RawDirectedEdges {
    /// Address of `fv` (`n_half` entries).
    pub fv: u64,
    /// Address of `twin` (`n_half` entries).
    pub twin: u64,
    /// Address of `edge` (`n_half` entries).
    pub edge: u64,
    /// Address of `outgoing` (`n_vertices` entries).
    pub outgoing: u64,
    /// Address of `edge_half` (`n_edges` entries).
    pub edge_half: u64,
    /// Half-edges.
    pub n_half: u32,
    /// Vertices.
    pub n_vertices: u32,
    /// Edges.
    pub n_edges: u32,
    /// The walk's guard ([`pde_sum`]).
    pub max_valence: u32,
}

cavity_device::kernel! {
    /// The naive baseline ([`csr_sum`]): one thread per element over a CSR
    /// adjacency in global memory, element-wise.
    ///
    /// # Safety
    /// `offsets` holds `n + 1` entries, `adj` `n_adj`, `attr` `n_attr`,
    /// `out` `n` (written).
    #[launch_bounds = ELEMENT_BOUNDS]
    pub kernel BaselineCsrSum(
        launch,
        n: u32,
        offsets: u64,
        adj: u64,
        n_adj: u32,
        attr: u64,
        n_attr: u32,
        out: u64,
    ) {
        // SAFETY: the kernel's contract.
        let (offsets, adj, attr, out) = unsafe {
            (
                slice_at(offsets, n + 1),
                slice_at(adj, n_adj),
                slice_at(attr, n_attr),
                Scatter::from_raw(out as *mut f32, n as usize),
            )
        };
        let (mut i, stride) = launch.grid_stride();
        while i < n {
            csr_sum(i, offsets, adj, attr, &out);
            i += stride;
        }
    }
}

cavity_device::kernel! {
    /// The PDE baseline ([`pde_sum`]): one thread per element of `query`'s
    /// (a `Query` code) source kind over the Directed Edges arrays,
    /// element-wise.
    ///
    /// # Safety
    /// `mesh`'s addresses are valid for their lengths, `attr` for `n_attr`
    /// entries, `out` for `n` (written).
    #[launch_bounds = ELEMENT_BOUNDS]
    pub kernel BaselinePdeSum(
        launch,
        query: u32,
        n: u32,
        mesh: RawDirectedEdges,
        attr: u64,
        n_attr: u32,
        out: u64,
    ) {
        // SAFETY: the kernel's contract.
        let (de, attr, out) = unsafe {
            (
                DirectedEdges {
                    fv: slice_at(mesh.fv, mesh.n_half),
                    twin: slice_at(mesh.twin, mesh.n_half),
                    edge: slice_at(mesh.edge, mesh.n_half),
                    outgoing: slice_at(mesh.outgoing, mesh.n_vertices),
                    edge_half: slice_at(mesh.edge_half, mesh.n_edges),
                },
                slice_at(attr, n_attr),
                Scatter::from_raw(out as *mut f32, n as usize),
            )
        };
        let Some(query) = Query::from_u32(query) else {
            return;
        };
        let (mut i, stride) = launch.grid_stride();
        query::specialize(query, |q| {
            while i < n {
                pde_sum(q, i, &de, mesh.max_valence, attr, &out);
                i += stride;
            }
        });
    }
}
