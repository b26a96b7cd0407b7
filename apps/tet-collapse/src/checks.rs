//! The robustness checks of section 4.1 of the paper, run on every mesh
//! the collapse writes, and the boundary surface they and the boundary
//! rules (section 3.1, [`crate::boundary`]) start from:
//!
//! - [`check_valid`]: the topological checks (every triangle a face of one
//!   or two tetrahedra, of two with opposite orientations) and the
//!   geometric ones (no inverted tetrahedron, no duplicated vertex), each
//!   failure an [`Invalid`] naming the element;
//! - [`boundary_surface`]: the triangles that are a face of exactly one
//!   tetrahedron, oriented outward, and their topology
//!   ([`BoundarySurface::topology`]: components, Euler characteristic,
//!   genus, closed, manifold), which a collapse must keep;
//! - [`hausdorff`]: how far a collapse moved the boundary, the symmetric
//!   Hausdorff distance between two boundary surfaces sampled at their
//!   vertices, with a bounding volume hierarchy of the triangles (no crate
//!   for it is available offline here).
//!
//! Everything runs in parallel (rayon); sums and comparisons of positions
//! are in `f64`.

use cavity_tet_collapse_kernels::geometry::{dot, is_valid_tet, longest_edge_squared, sub};
use rayon::prelude::*;

use crate::TetMesh;
use crate::mesh::signed_volume;
use crate::quality::corners;

/// Why a mesh failed [`check_valid`] (section 4.1), naming the element.
/// The checks run in the order of the variants; within one check the
/// report is deterministic: the first failing tetrahedron in their order,
/// the least failing triangle by its vertices, or the first duplicate
/// pair in a sort by position.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Invalid {
    /// A tetrahedron names a vertex past the positions.
    #[error("tetrahedron {tet} names vertex {vertex}, but the mesh has {vertices} vertices")]
    VertexOutOfRange {
        /// The tetrahedron's index.
        tet: usize,
        /// The vertex it names.
        vertex: u32,
        /// The number of positions.
        vertices: usize,
    },
    /// A tetrahedron names a vertex twice.
    #[error("tetrahedron {tet} names a vertex twice: {vertices:?}")]
    RepeatedVertex {
        /// The tetrahedron's index.
        tet: usize,
        /// Its vertices.
        vertices: [u32; 4],
    },
    /// A tetrahedron's signed volume is not positive (inverted or flat,
    /// or a position is not finite).
    #[error("tetrahedron {tet} {vertices:?} is inverted or flat: signed volume {volume:e}")]
    Inverted {
        /// The tetrahedron's index.
        tet: usize,
        /// Its vertices.
        vertices: [u32; 4],
        /// Its signed volume, model units cubed.
        volume: f64,
    },
    /// A tetrahedron's signed volume is positive but below `ratio` times
    /// the cube of its longest edge (`is_valid_tet`).
    #[error(
        "tetrahedron {tet} {vertices:?} is too flat: signed volume {volume:e} is below \
         {ratio:e} times its longest edge cubed ({least:e})"
    )]
    TooFlat {
        /// The tetrahedron's index.
        tet: usize,
        /// Its vertices.
        vertices: [u32; 4],
        /// Its signed volume, model units cubed.
        volume: f64,
        /// The ratio asked for.
        ratio: f64,
        /// `ratio` times its longest edge cubed.
        least: f64,
    },
    /// A triangle is a face of more than two tetrahedra.
    #[error(
        "triangle {triangle:?} is a face of {count} tetrahedra (the first three: {tets:?}), \
         at most two may share a face"
    )]
    SharedFace {
        /// The triangle's vertices, ascending.
        triangle: [u32; 3],
        /// How many tetrahedra have it as a face.
        count: usize,
        /// The first three of them.
        tets: [usize; 3],
    },
    /// Two tetrahedra have a triangle as a face with the same
    /// orientation: they lie on the same side of it and overlap.
    #[error(
        "triangle {triangle:?} is a face of tetrahedra {} and {} with the same \
         orientation: they lie on the same side of it",
        tets[0],
        tets[1]
    )]
    SameOrientation {
        /// The triangle's vertices, ascending.
        triangle: [u32; 3],
        /// The two tetrahedra.
        tets: [usize; 2],
    },
    /// Two distinct vertices named by tetrahedra have the same position.
    #[error("vertices {} and {} are both at {position:?}", vertices[0], vertices[1])]
    DuplicateVertex {
        /// The two vertices, ascending.
        vertices: [u32; 2],
        /// Their position.
        position: [f32; 3],
    },
}

/// Checks `mesh` as section 4.1 does:
///
/// 1. every tetrahedron names four distinct vertices within the
///    positions ([`Invalid::VertexOutOfRange`],
///    [`Invalid::RepeatedVertex`]);
/// 2. every tetrahedron `p` passes `is_valid_tet(p, ratio)`
///    (`cavity_tet_collapse_kernels::geometry`): `ratio = 0.0` asks only
///    for a positive signed volume ([`Invalid::Inverted`]), a positive
///    one also for a volume of at least `ratio` times the longest edge
///    cubed ([`Invalid::TooFlat`]);
/// 3. every triangle is a face of one or two tetrahedra
///    ([`Invalid::SharedFace`]), and of two with opposite orientations
///    ([`Invalid::SameOrientation`]);
/// 4. no two distinct vertices named by tetrahedra are at the same
///    position ([`Invalid::DuplicateVertex`]). The paper calls two
///    vertices duplicates when they differ by less than `1e-13` on every
///    axis; here the positions are `f32` (the output's type), whose
///    spacing at unit scale is about `1e-7`, so that test means exact
///    equality there, and exact equality also keeps the check scale-free
///    (an absolute tolerance would call every vertex of a mesh scaled by
///    `1e-30` a duplicate). `-0.0` and `0.0` are equal.
///
/// Unreferenced positions are not checked.
///
/// # Errors
/// The first failure, in the order above.
pub fn check_valid(mesh: &TetMesh, ratio: f64) -> Result<(), Invalid> {
    let n = mesh.positions.len();
    let bad_indices = mesh
        .tets
        .par_iter()
        .enumerate()
        .find_map_first(|(tet, &t)| {
            if let Some(&vertex) = t.iter().find(|&&v| v as usize >= n) {
                return Some(Invalid::VertexOutOfRange {
                    tet,
                    vertex,
                    vertices: n,
                });
            }
            let repeated = (0..4).any(|i| (i + 1..4).any(|j| t[i] == t[j]));
            repeated.then_some(Invalid::RepeatedVertex { tet, vertices: t })
        });
    if let Some(e) = bad_indices {
        return Err(e);
    }
    let bad_tet = mesh
        .tets
        .par_iter()
        .enumerate()
        .find_map_first(|(tet, &t)| {
            let p = corners(&mesh.positions, t);
            if is_valid_tet(p, ratio) {
                return None;
            }
            let volume = signed_volume(&mesh.positions, t);
            Some(if volume > 0.0 {
                Invalid::TooFlat {
                    tet,
                    vertices: t,
                    volume,
                    ratio,
                    least: ratio * longest_edge_squared(p).powf(1.5),
                }
            } else {
                Invalid::Inverted {
                    tet,
                    vertices: t,
                    volume,
                }
            })
        });
    if let Some(e) = bad_tet {
        return Err(e);
    }
    let faces = sorted_faces(mesh);
    let bad_face = faces
        .par_chunk_by(|a, b| a.key == b.key)
        .find_map_first(|g| match g {
            [a, b, c, ..] => Some(Invalid::SharedFace {
                triangle: a.key,
                count: g.len(),
                tets: [a.tet as usize, b.tet as usize, c.tet as usize],
            }),
            [a, b] if a.even == b.even => Some(Invalid::SameOrientation {
                triangle: a.key,
                tets: [a.tet as usize, b.tet as usize],
            }),
            _ => None,
        });
    if let Some(e) = bad_face {
        return Err(e);
    }
    // Referenced vertices by position (`+ 0.0` makes `-0.0` equal `0.0`),
    // then by index: duplicates are neighbours.
    let mut at: Vec<([u32; 3], u32)> = referenced(mesh.tets.par_iter().flat_map_iter(|t| *t))
        .into_par_iter()
        .map(|v| (mesh.positions[v as usize].map(|x| (x + 0.0).to_bits()), v))
        .collect();
    at.par_sort_unstable();
    match at.par_windows(2).find_first(|w| w[0].0 == w[1].0) {
        Some(w) => Err(Invalid::DuplicateVertex {
            vertices: [w[0].1, w[1].1],
            position: mesh.positions[w[0].1 as usize],
        }),
        None => Ok(()),
    }
}

/// The distinct vertices of `corners`, ascending.
fn referenced(corners: impl ParallelIterator<Item = u32>) -> Vec<u32> {
    let mut vertices: Vec<u32> = corners.collect();
    vertices.par_sort_unstable();
    vertices.dedup();
    vertices
}

/// The outward loops of a tetrahedron's four faces, as corner indices
/// (see [`crate::TetMesh`]).
const TET_FACES: [[usize; 3]; 4] = [[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]];

/// A face of a tetrahedron: its vertices ascending, whether its outward
/// loop is an even permutation of them (the same cyclic order), and the
/// tetrahedron.
#[derive(Clone, Copy, Debug)]
struct Face {
    key: [u32; 3],
    even: bool,
    tet: u32,
}

/// Every face of every tetrahedron of `mesh`, sorted by vertices and
/// then tetrahedron: the faces of one triangle are neighbours.
fn sorted_faces(mesh: &TetMesh) -> Vec<Face> {
    let mut faces: Vec<Face> = mesh
        .tets
        .par_iter()
        .enumerate()
        .flat_map_iter(|(tet, t)| {
            TET_FACES.iter().map(move |f| {
                let [a, b, c] = f.map(|i| t[i]);
                let inversions = u32::from(a > b) + u32::from(a > c) + u32::from(b > c);
                let mut key = [a, b, c];
                key.sort_unstable();
                Face {
                    key,
                    even: inversions % 2 == 0,
                    tet: tet as u32,
                }
            })
        })
        .collect();
    faces.par_sort_unstable_by_key(|f| (f.key, f.tet));
    faces
}

/// The boundary surface of a tetrahedral mesh (section 4.1; the input of
/// the boundary rules of section 3.1): the triangles that are a face of
/// exactly one tetrahedron, and the vertices they name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoundarySurface {
    /// The boundary triangles, each the loop of its tetrahedron's face
    /// (outward, counter-clockwise seen from outside for a positively
    /// oriented tetrahedron), sorted by their vertices.
    pub triangles: Vec<[u32; 3]>,
    /// The vertices of the boundary triangles, ascending.
    pub vertices: Vec<u32>,
}

/// The [`BoundarySurface`] of `mesh`. A triangle of three or more
/// tetrahedra is not on it (see [`check_valid`]). Positions are not
/// read.
pub fn boundary_surface(mesh: &TetMesh) -> BoundarySurface {
    let faces = sorted_faces(mesh);
    let triangles: Vec<[u32; 3]> = faces
        .par_chunk_by(|a, b| a.key == b.key)
        .filter_map(|g| match g {
            [f] => {
                let [a, b, c] = f.key;
                Some(if f.even { [a, b, c] } else { [a, c, b] })
            }
            _ => None,
        })
        .collect();
    let vertices = referenced(triangles.par_iter().flat_map_iter(|t| *t));
    BoundarySurface {
        triangles,
        vertices,
    }
}

/// One connected component of a [`BoundarySurface`]: triangles connected
/// through shared edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Component {
    /// Its vertices (a vertex where components touch counts in each).
    pub vertices: usize,
    /// Its edges.
    pub edges: usize,
    /// Its triangles.
    pub triangles: usize,
    /// Its Euler characteristic `V - E + F`.
    pub euler: i64,
    /// Every edge of it is an edge of exactly two boundary triangles.
    pub closed: bool,
    /// No two of its triangles run along an edge in the same direction.
    pub oriented: bool,
    /// Closed, and at each of its vertices the boundary triangles form one
    /// cycle around it (one fan, not two touching at the vertex).
    pub manifold: bool,
    /// For a closed, manifold and oriented component, `(2 - χ) / 2`, the
    /// number of handles (0 for a sphere, 1 for a torus); otherwise
    /// `None`.
    pub genus: Option<u32>,
}

/// The topology of a [`BoundarySurface`] ([`BoundarySurface::topology`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SurfaceTopology {
    /// The connected components, in the order of their first triangle.
    pub components: Vec<Component>,
}

/// A union-find's root of `i`, with path halving.
fn root(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let p = parent[parent[i as usize] as usize];
        parent[i as usize] = p;
        i = p;
    }
    i
}

/// Whether the link of a vertex, the edges `(a, b)` of its triangles
/// opposite it, is one cycle: every link vertex in exactly two link
/// edges, and all connected.
fn one_cycle(link: &[[u32; 2]]) -> bool {
    let degree_two = link.iter().flatten().all(|&v| {
        let uses = link.iter().flatten().filter(|&&w| w == v).count();
        uses == 2
    });
    if !degree_two || link.is_empty() {
        return false;
    }
    let mut reached = vec![false; link.len()];
    reached[0] = true;
    let mut frontier = vec![0];
    while let Some(e) = frontier.pop() {
        for (f, r) in reached.iter_mut().enumerate() {
            if !*r && link[f].iter().any(|v| link[e].contains(v)) {
                *r = true;
                frontier.push(f);
            }
        }
    }
    reached.iter().all(|&r| r)
}

impl BoundarySurface {
    /// The surface's connected components (through shared edges), each
    /// with its Euler characteristic, whether it is closed, oriented and
    /// manifold, and its genus ([`Component`]).
    pub fn topology(&self) -> SurfaceTopology {
        let tris = &self.triangles;
        // Half-edges (low, high, forward, triangle), grouped by edge.
        let mut half: Vec<(u32, u32, bool, u32)> = tris
            .par_iter()
            .enumerate()
            .flat_map_iter(|(i, t)| {
                (0..3).map(move |k| {
                    let (a, b) = (t[k], t[(k + 1) % 3]);
                    (a.min(b), a.max(b), a < b, i as u32)
                })
            })
            .collect();
        half.par_sort_unstable();
        let edges: Vec<&[(u32, u32, bool, u32)]> =
            half.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)).collect();
        let mut parent: Vec<u32> = (0..tris.len() as u32).collect();
        for e in &edges {
            for h in &e[1..] {
                let (a, b) = (root(&mut parent, e[0].3), root(&mut parent, h.3));
                parent[a.max(b) as usize] = a.min(b);
            }
        }
        // Component numbers in the order of their first triangle: a root
        // is the least triangle of its component.
        let mut component = vec![0u32; tris.len()];
        let mut count = 0;
        for i in 0..tris.len() {
            let r = root(&mut parent, i as u32);
            component[i] = if r == i as u32 {
                count += 1;
                count - 1
            } else {
                component[r as usize]
            };
        }
        let mut out = vec![
            Component {
                vertices: 0,
                edges: 0,
                triangles: 0,
                euler: 0,
                closed: true,
                oriented: true,
                manifold: true,
                genus: None,
            };
            count as usize
        ];
        for &c in &component {
            out[c as usize].triangles += 1;
        }
        for e in &edges {
            let c = &mut out[component[e[0].3 as usize] as usize];
            c.edges += 1;
            c.closed &= e.len() == 2;
            let forward = e.iter().filter(|h| h.2).count();
            c.oriented &= forward <= 1 && e.len() - forward <= 1;
        }
        // Corners (vertex, next, previous), grouped by vertex: each
        // vertex's link and its components.
        let mut corners: Vec<(u32, [u32; 2], u32)> = tris
            .par_iter()
            .enumerate()
            .flat_map_iter(|(i, t)| {
                (0..3).map(move |k| (t[k], [t[(k + 1) % 3], t[(k + 2) % 3]], i as u32))
            })
            .collect();
        corners.par_sort_unstable();
        let per_vertex: Vec<(bool, Vec<u32>)> = corners
            .par_chunk_by(|x, y| x.0 == y.0)
            .map(|g| {
                let link: Vec<[u32; 2]> = g.iter().map(|c| c.1).collect();
                let mut of: Vec<u32> = g.iter().map(|c| component[c.2 as usize]).collect();
                of.sort_unstable();
                of.dedup();
                (one_cycle(&link), of)
            })
            .collect();
        for (manifold, of) in per_vertex {
            for c in of {
                let c = &mut out[c as usize];
                c.vertices += 1;
                c.manifold &= manifold;
            }
        }
        for c in &mut out {
            c.euler = c.vertices as i64 - c.edges as i64 + c.triangles as i64;
            c.manifold &= c.closed;
            let twice = 2 - c.euler;
            c.genus = (c.manifold && c.oriented && twice >= 0 && twice % 2 == 0)
                .then_some((twice / 2) as u32);
        }
        SurfaceTopology { components: out }
    }
}

/// The symmetric Hausdorff distance between the triangle surfaces `a`
/// (at `a_positions`) and `b` (at `b_positions`), model units, sampled at
/// the vertices: the largest distance from a vertex of either surface to
/// the other surface's triangles (exact point-triangle distances in
/// `f64`). 0 when both are empty, infinite when only one is.
///
/// Each direction builds a bounding volume hierarchy of the target's
/// triangles (median splits along the widest axis of the centroids, four
/// triangles a leaf; subtrees built in parallel) and queries every vertex
/// in parallel, nearer child first; a query stops as soon as it finds a
/// triangle no farther than the largest distance its worker has seen,
/// since such a vertex cannot raise the maximum.
///
/// # Panics
/// When a triangle names a vertex past its positions.
pub fn hausdorff(
    a: &BoundarySurface,
    a_positions: &[[f32; 3]],
    b: &BoundarySurface,
    b_positions: &[[f32; 3]],
) -> f64 {
    let (ab, ba) = rayon::join(
        || one_sided(a, a_positions, b, b_positions),
        || one_sided(b, b_positions, a, a_positions),
    );
    ab.max(ba)
}

/// The largest distance from a vertex of `from` to the triangles of
/// `to` (0 without vertices).
fn one_sided(
    from: &BoundarySurface,
    from_positions: &[[f32; 3]],
    to: &BoundarySurface,
    to_positions: &[[f32; 3]],
) -> f64 {
    if from.vertices.is_empty() {
        return 0.0;
    }
    if to.triangles.is_empty() {
        return f64::INFINITY;
    }
    let bvh = Bvh::new(&to.triangles, to_positions);
    from.vertices
        .par_iter()
        .fold(
            || 0.0f64,
            |most, &v| most.max(bvh.distance(from_positions[v as usize].map(f64::from), most)),
        )
        .reduce(|| 0.0, f64::max)
}

/// Triangles per leaf of a [`Bvh`] at most.
const LEAF: usize = 4;

/// Subtrees of more triangles than this are built beside their sibling
/// (rayon::join).
const PARALLEL_BUILD: usize = 4096;

/// A node of a [`Bvh`]: its box, and either (a leaf, `count > 0`) its
/// triangles `first..first + count` or (`count == 0`) its children, the
/// next node and node `right`.
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    lo: [f64; 3],
    hi: [f64; 3],
    first: u32,
    count: u32,
    right: u32,
}

/// A bounding volume hierarchy of triangles for nearest-distance
/// queries: nodes in depth-first order, the triangles' corners in leaf
/// order.
struct Bvh {
    nodes: Vec<Node>,
    triangles: Vec<[[f64; 3]; 3]>,
}

/// `(leaves(n), leaves(n + 1))` of a tree whose nodes of more than
/// [`LEAF`] triangles split into `n / 2` and `n - n / 2` (O(log n): the
/// sizes at one depth differ by at most one).
fn leaves(n: usize) -> (usize, usize) {
    if n <= LEAF {
        return (1, if n < LEAF { 1 } else { 2 });
    }
    let (a, b) = leaves(n / 2);
    if n % 2 == 0 {
        (2 * a, a + b)
    } else {
        (a + b, 2 * b)
    }
}

/// The nodes of the tree of `n > 0` triangles.
fn node_count(n: usize) -> usize {
    2 * leaves(n).0 - 1
}

/// A triangle's centroid and index while building.
#[derive(Clone, Copy, Debug)]
struct Item {
    centroid: [f64; 3],
    triangle: u32,
}

impl Bvh {
    /// The hierarchy of `triangles` (at least one) at `positions`.
    fn new(triangles: &[[u32; 3]], positions: &[[f32; 3]]) -> Bvh {
        let corners: Vec<[[f64; 3]; 3]> = triangles
            .par_iter()
            .map(|t| t.map(|v| positions[v as usize].map(f64::from)))
            .collect();
        let mut items: Vec<Item> = corners
            .par_iter()
            .enumerate()
            .map(|(i, c)| Item {
                centroid: std::array::from_fn(|k| (c[0][k] + c[1][k] + c[2][k]) / 3.0),
                triangle: i as u32,
            })
            .collect();
        let mut nodes = vec![Node::default(); node_count(items.len())];
        build(&mut nodes, 0, &mut items, 0, &corners);
        let triangles = items
            .par_iter()
            .map(|i| corners[i.triangle as usize])
            .collect();
        Bvh { nodes, triangles }
    }

    /// The distance from `p` to the nearest triangle, exact when it is
    /// above `enough`; otherwise some distance at most `enough` (the
    /// search stops there).
    fn distance(&self, p: [f64; 3], enough: f64) -> f64 {
        let enough2 = enough * enough;
        let mut best2 = f64::INFINITY;
        // (node, squared distance to its box); depth ≤ 33 for u32 counts.
        let mut stack = [(0u32, 0.0f64); 64];
        let mut depth = 1;
        stack[0] = (0, box_distance2(&self.nodes[0], p));
        while depth > 0 {
            depth -= 1;
            let (i, d2) = stack[depth];
            if d2 >= best2 {
                continue;
            }
            let node = &self.nodes[i as usize];
            if node.count > 0 {
                let range = node.first as usize..(node.first + node.count) as usize;
                for t in &self.triangles[range] {
                    best2 = best2.min(triangle_distance2(p, t));
                }
                if best2 <= enough2 {
                    return best2.sqrt();
                }
                continue;
            }
            let (l, r) = (i + 1, node.right);
            let (dl, dr) = (
                box_distance2(&self.nodes[l as usize], p),
                box_distance2(&self.nodes[r as usize], p),
            );
            // The nearer child on top, searched first.
            let (near, far) = if dl <= dr {
                ((l, dl), (r, dr))
            } else {
                ((r, dr), (l, dl))
            };
            for next in [far, near] {
                if next.1 < best2 {
                    stack[depth] = next;
                    depth += 1;
                }
            }
        }
        best2.sqrt()
    }
}

/// Builds the subtree of `items` (triangles `first..` in leaf order) into
/// `nodes` (exactly [`node_count`] of them), its root `nodes[0]` the
/// node numbered `index`.
fn build(
    nodes: &mut [Node],
    index: u32,
    items: &mut [Item],
    first: u32,
    corners: &[[[f64; 3]; 3]],
) {
    let n = items.len();
    if n <= LEAF {
        let mut node = Node {
            lo: [f64::INFINITY; 3],
            hi: [f64::NEG_INFINITY; 3],
            first,
            count: n as u32,
            right: 0,
        };
        for c in items.iter().flat_map(|i| &corners[i.triangle as usize]) {
            for k in 0..3 {
                node.lo[k] = node.lo[k].min(c[k]);
                node.hi[k] = node.hi[k].max(c[k]);
            }
        }
        nodes[0] = node;
        return;
    }
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for i in items.iter() {
        for k in 0..3 {
            lo[k] = lo[k].min(i.centroid[k]);
            hi[k] = hi[k].max(i.centroid[k]);
        }
    }
    let axis = (0..3)
        .max_by(|&a, &b| (hi[a] - lo[a]).total_cmp(&(hi[b] - lo[b])))
        .unwrap_or(0);
    let half = n / 2;
    items.select_nth_unstable_by(half, |a, b| a.centroid[axis].total_cmp(&b.centroid[axis]));
    let (left_items, right_items) = items.split_at_mut(half);
    let (root, children) = nodes.split_at_mut(1);
    let (left, right) = children.split_at_mut(node_count(half));
    let right_index = index + 1 + left.len() as u32;
    let right_first = first + half as u32;
    if n > PARALLEL_BUILD {
        rayon::join(
            || build(left, index + 1, left_items, first, corners),
            || build(right, right_index, right_items, right_first, corners),
        );
    } else {
        build(left, index + 1, left_items, first, corners);
        build(right, right_index, right_items, right_first, corners);
    }
    let (l, r) = (&left[0], &right[0]);
    root[0] = Node {
        lo: std::array::from_fn(|k| l.lo[k].min(r.lo[k])),
        hi: std::array::from_fn(|k| l.hi[k].max(r.hi[k])),
        first: 0,
        count: 0,
        right: right_index,
    };
}

/// The squared distance from `p` to `node`'s box (0 inside).
fn box_distance2(node: &Node, p: [f64; 3]) -> f64 {
    (0..3)
        .map(|k| {
            let d = (node.lo[k] - p[k]).max(p[k] - node.hi[k]).max(0.0);
            d * d
        })
        .sum()
}

/// `a + s d`.
fn along(a: [f64; 3], d: [f64; 3], s: f64) -> [f64; 3] {
    std::array::from_fn(|k| a[k] + s * d[k])
}

/// The squared distance from `p` to `q`.
fn distance2(p: [f64; 3], q: [f64; 3]) -> f64 {
    let d = sub(p, q);
    dot(d, d)
}

/// The squared distance from `p` to segment `a b`.
fn segment_distance2(p: [f64; 3], a: [f64; 3], b: [f64; 3]) -> f64 {
    let ab = sub(b, a);
    let length2 = dot(ab, ab);
    let t = if length2 > 0.0 {
        (dot(sub(p, a), ab) / length2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    distance2(p, along(a, ab, t))
}

/// The squared distance from `p` to triangle `[a, b, c]`: the closest
/// point by the Voronoi regions of its corners, edges and face (Ericson,
/// "Real-Time Collision Detection", 2005, section 5.1.5); a triangle of
/// no area, whose face region is empty, by its three edges.
fn triangle_distance2(p: [f64; 3], [a, b, c]: &[[f64; 3]; 3]) -> f64 {
    let (a, b, c) = (*a, *b, *c);
    let (ab, ac, ap) = (sub(b, a), sub(c, a), sub(p, a));
    let (d1, d2) = (dot(ab, ap), dot(ac, ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return distance2(p, a);
    }
    let bp = sub(p, b);
    let (d3, d4) = (dot(ab, bp), dot(ac, bp));
    if d3 >= 0.0 && d4 <= d3 {
        return distance2(p, b);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return distance2(p, along(a, ab, d1 / (d1 - d3)));
    }
    let cp = sub(p, c);
    let (d5, d6) = (dot(ab, cp), dot(ac, cp));
    if d6 >= 0.0 && d5 <= d6 {
        return distance2(p, c);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return distance2(p, along(a, ac, d2 / (d2 - d6)));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return distance2(p, along(b, sub(c, b), w));
    }
    let sum = va + vb + vc;
    if !(sum > 0.0 && sum.is_finite()) {
        return segment_distance2(p, a, b)
            .min(segment_distance2(p, b, c))
            .min(segment_distance2(p, c, a));
    }
    let (v, w) = (vb / sum, vc / sum);
    distance2(p, along(along(a, ab, v), ac, w))
}
