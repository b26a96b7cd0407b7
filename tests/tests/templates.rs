//! The cavity templates beyond the edge flip, each driven by a small
//! application on the CPU backend with four racing workers and `validate()`
//! after every round: edge split (EdgeFaces), face split 1 to 3 (Face),
//! edge collapse (EdgeStar, with the link condition checked on the
//! boundary loop), vertex delete (VertexStar, the hole re-triangulated as a
//! fan) and face delete (Face, no fill-in).

use cavity::TriMesh;
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::reference::ReferenceMesh;
use cavity::rounds::{CpuRounds, RunReport, sweeps};
use cavity_device::block::Block;
use cavity_device::dynamic::cavity::{CavityApp, Ctx, FillIn, HalfEdge, Template};
use cavity_device::layout::Kind;
use cavity_tests::grid;

fn length<B: Block>(ctx: &Ctx<'_, B>, e: u32) -> f32 {
    let [a, b] = ctx.edge_vertices(e);
    let (p, q) = (ctx.position(a), ctx.position(b));
    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
}

/// Whether the boundary is a closed loop through distinct vertices.
fn simple_loop<B: Block>(fill: &FillIn<'_, B>) -> bool {
    let n = fill.boundary_len();
    fill.is_closed()
        && (0..n).all(|i| (i + 1..n).all(|j| fill.boundary_vertex(i) != fill.boundary_vertex(j)))
}

/// Fills a closed boundary loop with a new vertex at `at` joined to every
/// boundary vertex (a star of triangles).
fn star_fill<B: Block>(fill: &mut FillIn<'_, B>, at: [f32; 3]) -> bool {
    let n = fill.boundary_len();
    let Some(m) = fill.add_vertex(&at) else {
        return false;
    };
    let mut spokes = [0u32; 32];
    for i in 0..n {
        let Some(e) = fill.add_edge(m, fill.boundary_vertex(i)) else {
            return false;
        };
        spokes[i as usize] = e;
    }
    (0..n).all(|i| {
        let next = fill.boundary_vertex((i + 1) % n);
        let h = fill.boundary_edge(i);
        let to_m = fill.half_edge(spokes[((i + 1) % n) as usize], next);
        let from_m = fill.half_edge(spokes[i as usize], m);
        fill.add_face([h, to_m, from_m]).is_some()
    })
}

fn centroid<B: Block>(fill: &FillIn<'_, B>) -> [f32; 3] {
    let n = fill.boundary_len();
    let mut c = [0.0f32; 3];
    for i in 0..n {
        let p = fill.ctx.position(fill.boundary_vertex(i));
        for k in 0..3 {
            c[k] += p[k] / n as f32;
        }
    }
    c
}

/// Edge split: interior edges longer than `max` get a midpoint.
struct SplitLong {
    max: f32,
}

impl CavityApp for SplitLong {
    const TEMPLATE: Template = Template::EdgeFaces;
    const MAX_NEW: [u32; 3] = [1, 4, 4];
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        ctx.edge_faces(e).0 == 2 && length(ctx, e) > self.max
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        if !simple_loop(fill) || fill.boundary_len() != 4 {
            return false;
        }
        let [a, b] = fill.ctx.edge_vertices(fill.seed());
        let (p, q) = (fill.ctx.position(a), fill.ctx.position(b));
        star_fill(fill, [0, 1, 2].map(|k| 0.5 * (p[k] + q[k])))
    }
}

/// Face split 1 to 3: faces of area above `max` get a centroid.
struct SplitFaces {
    max: f32,
}

fn area(p: [[f32; 3]; 3]) -> f32 {
    let (u, v) = (
        [0, 1, 2].map(|k| p[1][k] - p[0][k]),
        [0, 1, 2].map(|k| p[2][k] - p[0][k]),
    );
    let c = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    0.5 * (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt()
}

impl CavityApp for SplitFaces {
    const TEMPLATE: Template = Template::Face;
    const MAX_NEW: [u32; 3] = [1, 3, 3];
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, f: u32) -> bool {
        area(ctx.face_vertices(f).map(|v| ctx.position(v))) > self.max
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        if !simple_loop(fill) || fill.boundary_len() != 3 {
            return false;
        }
        let c = centroid(fill);
        star_fill(fill, c)
    }
}

/// Edge collapse: interior edges shorter than `min` become their midpoint,
/// when the link condition holds (the loop around the two stars visits
/// distinct vertices).
struct CollapseShort {
    min: f32,
}

impl CavityApp for CollapseShort {
    const TEMPLATE: Template = Template::EdgeStar;
    const MAX_NEW: [u32; 3] = [1, 32, 32];
    fn max_new(&self, boundary: u32) -> [u32; 3] {
        [1, boundary, boundary]
    }
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        ctx.edge_faces(e).0 == 2 && length(ctx, e) < self.min
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        let n = fill.boundary_len();
        if !simple_loop(fill) || !(3..=32).contains(&n) {
            return false;
        }
        let [a, b] = fill.ctx.edge_vertices(fill.seed());
        let (p, q) = (fill.ctx.position(a), fill.ctx.position(b));
        star_fill(fill, [0, 1, 2].map(|k| 0.5 * (p[k] + q[k])))
    }
}

/// Vertex delete: interior vertices whose position's x rounds to a multiple
/// of 3 are removed and their hole fanned from its first vertex.
struct DeleteVertices;

impl CavityApp for DeleteVertices {
    const TEMPLATE: Template = Template::VertexStar;
    const MAX_NEW: [u32; 3] = [0, 16, 16];
    fn max_new(&self, boundary: u32) -> [u32; 3] {
        [0, boundary.saturating_sub(3), boundary.saturating_sub(2)]
    }
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, v: u32) -> bool {
        let p = ctx.position(v);
        (p[0].round() as i32).rem_euclid(3) == 0 && (p[1].round() as i32).rem_euclid(3) == 0
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        let n = fill.boundary_len();
        if !simple_loop(fill) || !(3..=16).contains(&n) {
            return false;
        }
        let x0 = fill.boundary_vertex(0);
        if (2..n - 1).any(|i| fill.ctx.has_edge(x0, fill.boundary_vertex(i))) {
            return false;
        }
        // Diagonals x0–x_i, i = 2..n-2; triangles (x0, x_i, x_{i+1}).
        let mut prev: HalfEdge = fill.boundary_edge(0);
        for i in 1..n - 1 {
            let xi1 = fill.boundary_vertex(i + 1);
            let closing = if i == n - 2 {
                fill.boundary_edge(n - 1)
            } else {
                let Some(d) = fill.add_edge(x0, xi1) else {
                    return false;
                };
                fill.half_edge(d, xi1)
            };
            if fill
                .add_face([prev, fill.boundary_edge(i), closing])
                .is_none()
            {
                return false;
            }
            prev = HalfEdge {
                edge: closing.edge,
                reversed: !closing.reversed,
            };
        }
        true
    }
}

/// Face delete: faces whose centroid lies in a disk are removed (no
/// fill-in: the cavity stays a hole).
struct DeleteFaces;

impl CavityApp for DeleteFaces {
    const TEMPLATE: Template = Template::Face;
    const MAX_NEW: [u32; 3] = [0, 0, 0];
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, f: u32) -> bool {
        let c = ctx.face_vertices(f).map(|v| ctx.position(v));
        let (x, y) = (
            (c[0][0] + c[1][0] + c[2][0]) / 3.0,
            (c[0][1] + c[1][1] + c[2][1]) / 3.0,
        );
        (x - 8.0).powi(2) + (y - 8.0).powi(2) < 9.0
    }
    fn fill<B: Block>(&self, _fill: &mut FillIn<'_, B>) -> bool {
        true
    }
}

/// Room for meshes that grow several times over without slicing.
const ROOMY: CapacityFactors = CapacityFactors {
    elements: 8.0,
    patches: 2.0,
};

/// A user-defined cavity: a seed face and its three edges, so the three
/// faces across them go too; the hexagonal hole gets a vertex at its
/// centroid (faces larger than `min_area` with three interior edges).
struct FaceAndNeighbours {
    min_area: f32,
}

impl CavityApp for FaceAndNeighbours {
    const TEMPLATE: Template = Template::Custom(Kind::Face);
    const MAX_NEW: [u32; 3] = [1, 6, 6];
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, f: u32) -> bool {
        let interior = (0..3).all(|i| ctx.edge_faces(ctx.copy.face_edge(f, i).0).0 == 2);
        interior && area(ctx.face_vertices(f).map(|v| ctx.position(v))) > self.min_area
    }
    fn deleted<B: Block>(&self, ctx: &Ctx<'_, B>, f: u32, mut delete: impl FnMut(Kind, u32)) {
        for i in 0..3 {
            delete(Kind::Edge, ctx.copy.face_edge(f, i).0);
        }
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        if !simple_loop(fill) || fill.boundary_len() != 6 || fill.deleted_faces().count() != 4 {
            return false;
        }
        let c = centroid(fill);
        star_fill(fill, c)
    }
}

/// Runs `app` to completion on four racing workers, validating after every
/// round; returns the report and the result.
fn run<A: CavityApp + Sync + Send>(
    input: &TriMesh,
    patch_size: u32,
    app: A,
    manifold: bool,
) -> (RunReport, TriMesh) {
    run_with(input, patch_size, ROOMY, app, manifold)
}

fn run_with<A: CavityApp + Sync + Send>(
    input: &TriMesh,
    patch_size: u32,
    factors: CapacityFactors,
    app: A,
    manifold: bool,
) -> (RunReport, TriMesh) {
    let mut dynamic = DynamicMesh::new(input, patch_size, factors).expect("dynamic mesh");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .expect("pool");
    let report = pool.install(|| {
        let mut rounds = 0;
        let mut check = |m: &DynamicMesh| {
            rounds += 1;
            if let Err(e) = m.validate(manifold) {
                panic!("invalid after round {rounds}: {e}");
            }
        };
        let mut r = CpuRounds::new(&mut dynamic, app);
        sweeps(&mut r, false, Some(&mut check)).expect("run")
    });
    (report, dynamic.to_mesh())
}

fn euler(m: &TriMesh) -> i64 {
    ReferenceMesh::new(m).expect("valid").euler_characteristic()
}

fn longest(m: &TriMesh) -> f32 {
    let r = ReferenceMesh::new(m).expect("valid");
    (0..r.num_edges() as u32)
        .map(|e| {
            let [a, b] = r.edge_vertices(e);
            let (p, q) = (m.positions[a as usize], m.positions[b as usize]);
            ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
        })
        .fold(0.0, f32::max)
}

#[test]
fn edge_split_until_short() {
    for patch_size in [8, 64] {
        // Torus segments are about 3.1 (outer), 1.6 (inner) and 0.8 (minor).
        let input = grid(8, 8, &[false, true], true, &[]);
        let (report, out) = run(&input, patch_size, SplitLong { max: 1.7 }, true);
        assert!(report.flips > 0);
        assert_eq!(
            out.positions.len(),
            input.positions.len() + report.flips as usize
        );
        assert_eq!(
            out.faces.len(),
            input.faces.len() + 2 * report.flips as usize
        );
        assert_eq!(euler(&out), euler(&input));
        assert_eq!(
            &out.positions[..input.positions.len()],
            &input.positions[..]
        );
    }
}

#[test]
fn face_split_one_to_three() {
    let input = grid(6, 6, &[true, false], false, &[]);
    let (report, out) = run(&input, 8, SplitFaces { max: 0.2 }, true);
    // Every face (area 0.5) split once, none of the children (1/6).
    assert_eq!(report.flips as usize, input.faces.len());
    assert_eq!(out.faces.len(), 3 * input.faces.len());
    assert_eq!(euler(&out), euler(&input));
    assert_eq!(longest(&out), longest(&input));
}

#[test]
fn edge_collapse_keeps_topology() {
    // A torus whose v-direction is squeezed: the short edges collapse.
    let mut input = grid(12, 24, &[false, true], true, &[]);
    for p in &mut input.positions {
        p[2] *= 0.2;
    }
    for patch_size in [8, 64] {
        let (report, out) = run(&input, patch_size, CollapseShort { min: 0.3 }, true);
        assert!(report.flips > 0, "{report:?}");
        assert_eq!(
            out.faces.len(),
            input.faces.len() - 2 * report.flips as usize
        );
        assert_eq!(euler(&out), euler(&input));
    }
}

#[test]
fn vertex_delete_refills_the_hole() {
    let input = grid(16, 16, &[false, true], true, &[]);
    let (report, out) = run(&input, 16, DeleteVertices, true);
    assert!(report.flips > 0);
    assert_eq!(
        out.faces.len(),
        input.faces.len() - 2 * report.flips as usize
    );
    assert_eq!(euler(&out), euler(&input));
}

#[test]
fn face_delete_opens_holes() {
    let input = grid(16, 16, &[false, true], false, &[]);
    let (report, out) = run(&input, 16, DeleteFaces, false);
    assert!(report.flips > 0);
    assert_eq!(out.faces.len(), input.faces.len() - report.flips as usize);
}

#[test]
fn growth_slices_patches() {
    // Tight patches (capacity factor 1) and a mesh that grows about 20
    // times: patches run out of room and are sliced again and again.
    let input = grid(16, 16, &[false, true], true, &[]);
    let factors = CapacityFactors {
        elements: 1.0,
        patches: 64.0,
    };
    for patch_size in [16, 64] {
        let (report, out) = run_with(&input, patch_size, factors, SplitLong { max: 0.8 }, true);
        eprintln!("patch size {patch_size}: {report:?}");
        assert!(report.slices > 0, "{report:?}");
        assert!(
            report.patches > input.faces.len() as u32 / patch_size,
            "{report:?}"
        );
        assert_eq!(
            out.faces.len(),
            input.faces.len() + 2 * report.flips as usize
        );
        assert!(out.faces.len() > 4 * input.faces.len(), "{report:?}");
        assert_eq!(euler(&out), euler(&input));
        assert!(longest(&out) <= 0.8, "{report:?}");
        assert_eq!(
            &out.positions[..input.positions.len()],
            &input.positions[..]
        );
    }
}

#[test]
fn user_defined_cavity() {
    let input = grid(12, 12, &[false, true], false, &[]);
    for patch_size in [8, 64] {
        // Input faces have area 0.5; a filled cavity's six faces share the
        // four deleted ones' area 2 (each op: four faces out, six in).
        let (report, out) = run(&input, patch_size, FaceAndNeighbours { min_area: 0.45 }, true);
        assert!(report.flips > 0, "{report:?}");
        assert_eq!(
            out.faces.len(),
            input.faces.len() + 2 * report.flips as usize
        );
        assert_eq!(
            out.positions.len(),
            input.positions.len() + report.flips as usize
        );
        assert_eq!(euler(&out), euler(&input));
    }
}
