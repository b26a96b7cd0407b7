//! Shared mesh generators and the query checker used by the workspace tests:
//! every query of a backend against the CPU reference mesh.
//!
//! The backend comes from `CAVITY_TEST_DEVICE` (`cpu` by default, `cuda` on
//! the GPU machine, `cpu-racing` for the CPU backend with racing dynamic
//! rounds): the same test binaries run on all of them.

use std::collections::{BTreeSet, HashSet};

use cavity::backend::cpu::{CpuBackend, Schedule};
use cavity::backend::{Backend, BackendError, DeviceChoice};
use cavity::dynamic::DynamicMesh;
use cavity::{Kind, PatchedMesh, Query, TriMesh};
use cavity_reference::{MeshStats, ReferenceMesh};
use proptest::prelude::*;

/// The backend named by `CAVITY_TEST_DEVICE` (default `cpu`), with the
/// tests' kernel crate added (`Backend::add_kernels`: the operations the
/// tests run live in `tests/kernels`, not in the core; a test of an
/// application's kernels adds them, [`with_kernels`]). Panics when
/// `cuda` is asked for and no GPU is usable, so a GPU run cannot pass on
/// the CPU.
pub fn test_backend() -> Backend {
    let choice: DeviceChoice = std::env::var("CAVITY_TEST_DEVICE")
        .unwrap_or_else(|_| "cpu".into())
        .parse()
        .expect("CAVITY_TEST_DEVICE");
    let backend = Backend::select(choice).expect("backend").0;
    backend
        .add_kernels(TEST_KERNELS_PTX)
        .expect("the kernel crate's PTX loads");
    backend
}

/// `backend` with the kernels that `add` adds (an application's
/// `add_kernels`).
///
/// # Panics
/// When they do not load.
pub fn with_kernels(backend: Backend, add: fn(&Backend) -> Result<(), BackendError>) -> Backend {
    add(&backend).expect("the kernels' PTX loads");
    backend
}

/// [`test_backend`] with dynamic rounds in `schedule` when it is the CPU
/// backend (the GPU's blocks always race): the tests of the concurrent
/// machinery (locks, expansion, slicing) run the racing schedule on the
/// CPU, and the deterministic one as well where a parameter picks it.
pub fn test_backend_with(schedule: Schedule) -> Backend {
    match test_backend() {
        Backend::Cpu(_) => Backend::Cpu(CpuBackend::with_schedule(schedule)),
        gpu => gpu,
    }
}

/// The PTX of the tests' kernel crate (`tests/kernels`, a kernel crate
/// outside the core as a user writes one), built by the build script
/// (empty when the build had no PTX toolchain).
pub const TEST_KERNELS_PTX: &str =
    include_str!(concat!(env!("OUT_DIR"), "/cavity_test_kernels.ptx"));

/// The median length of `mesh`'s edges (1 without edges).
pub fn median_edge_length(mesh: &TriMesh) -> f32 {
    let r = ReferenceMesh::new(mesh).expect("valid");
    let mut lengths: Vec<f32> = (0..r.num_edges() as u32)
        .map(|e| {
            let [a, b] = r.edge_vertices(e).map(|v| mesh.positions[v as usize]);
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        })
        .collect();
    lengths.sort_by(f32::total_cmp);
    lengths.get(lengths.len() / 2).copied().unwrap_or(1.0)
}

/// An `n × m` grid of quads split into triangles (diagonal direction from
/// `flip`), `wrap` joining opposite sides into a torus (closed, every vertex
/// manifold interior), faces listed in `holes` removed.
pub fn grid(n: u32, m: u32, flip: &[bool], wrap: bool, holes: &[usize]) -> TriMesh {
    let (cols, rows) = if wrap { (n, m) } else { (n + 1, m + 1) };
    let id = |i: u32, j: u32| (j % rows) * cols + (i % cols);
    let mut positions = Vec::new();
    for j in 0..rows {
        for i in 0..cols {
            let (x, y) = (i as f32, j as f32);
            if wrap {
                let (a, b) = (
                    x / n as f32 * std::f32::consts::TAU,
                    y / m as f32 * std::f32::consts::TAU,
                );
                let r = 3.0 + b.cos();
                positions.push([r * a.cos(), r * a.sin(), b.sin()]);
            } else {
                positions.push([x, y, 0.0]);
            }
        }
    }
    let mut faces = Vec::new();
    for j in 0..m {
        for i in 0..n {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            if flip
                .get((j * n + i) as usize % flip.len().max(1))
                .copied()
                .unwrap_or(false)
            {
                faces.push([a, b, d]);
                faces.push([b, c, d]);
            } else {
                faces.push([a, b, c]);
                faces.push([a, c, d]);
            }
        }
    }
    let holes: BTreeSet<usize> = holes.iter().map(|h| h % faces.len().max(1)).collect();
    let faces = faces
        .into_iter()
        .enumerate()
        .filter(|(k, _)| !holes.contains(k))
        .map(|(_, f)| f)
        .collect();
    TriMesh { positions, faces }
}

/// A fan of `k` triangles around a center vertex, closed when `closed`.
pub fn fan(k: u32, closed: bool) -> TriMesh {
    let mut positions = vec![[0.0, 0.0, 0.0]];
    let rim = if closed { k } else { k + 1 };
    for i in 0..rim {
        let a = i as f32 / rim as f32 * std::f32::consts::TAU;
        positions.push([a.cos(), a.sin(), 0.0]);
    }
    let faces = (0..k).map(|i| [0, 1 + i, 1 + (i + 1) % rim]).collect();
    TriMesh { positions, faces }
}

/// Concatenates meshes (several components).
pub fn concat(parts: &[TriMesh]) -> TriMesh {
    let mut out = TriMesh::default();
    for p in parts {
        let base = out.positions.len() as u32;
        out.positions.extend(&p.positions);
        out.faces.extend(
            p.faces
                .iter()
                .map(|f| [f[0] + base, f[1] + base, f[2] + base]),
        );
    }
    out
}

/// Adds `k` triangles hinged on the edge of face 0's first two corners
/// (non-manifold edge), and `isolated` vertices referenced by no face.
pub fn add_defects(mut mesh: TriMesh, k: u32, isolated: u32) -> TriMesh {
    if let Some(&[a, b, _]) = mesh.faces.first() {
        for i in 0..k {
            let v = mesh.positions.len() as u32;
            mesh.positions.push([0.5, 0.5, 1.0 + i as f32]);
            mesh.faces.push([b, a, v]);
        }
    }
    for i in 0..isolated {
        mesh.positions.push([-1.0 - i as f32, 0.0, 0.0]);
    }
    mesh
}

/// Renumbers vertices and reorders faces by the permutations from `seed`,
/// rotating each face's corners too.
pub fn shuffle(mesh: &TriMesh, seed: u64) -> TriMesh {
    let mut s = seed | 1;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let nv = mesh.positions.len();
    let mut perm: Vec<u32> = (0..nv as u32).collect();
    for i in (1..nv).rev() {
        perm.swap(i, rnd() as usize % (i + 1));
    }
    let mut positions = vec![[0.0; 3]; nv];
    for (v, &p) in perm.iter().enumerate() {
        positions[p as usize] = mesh.positions[v];
    }
    let mut faces: Vec<[u32; 3]> = mesh
        .faces
        .iter()
        .map(|f| {
            let r = (rnd() % 3) as usize;
            [0, 1, 2].map(|k| perm[f[(k + r) % 3] as usize])
        })
        .collect();
    let nf = faces.len();
    for i in (1..nf).rev() {
        faces.swap(i, rnd() as usize % (i + 1));
    }
    TriMesh { positions, faces }
}

/// A unit sphere: an icosahedron subdivided `levels` times (20 × 4^levels
/// faces), every vertex projected on the sphere.
pub fn unit_sphere(levels: u32) -> TriMesh {
    let t = (1.0 + 5f32.sqrt()) / 2.0;
    let mut mesh = TriMesh {
        positions: vec![
            [-1.0, t, 0.0],
            [1.0, t, 0.0],
            [-1.0, -t, 0.0],
            [1.0, -t, 0.0],
            [0.0, -1.0, t],
            [0.0, 1.0, t],
            [0.0, -1.0, -t],
            [0.0, 1.0, -t],
            [t, 0.0, -1.0],
            [t, 0.0, 1.0],
            [-t, 0.0, -1.0],
            [-t, 0.0, 1.0],
        ],
        faces: vec![
            [0, 11, 5],
            [0, 5, 1],
            [0, 1, 7],
            [0, 7, 10],
            [0, 10, 11],
            [1, 5, 9],
            [5, 11, 4],
            [11, 10, 2],
            [10, 7, 6],
            [7, 1, 8],
            [3, 9, 4],
            [3, 4, 2],
            [3, 2, 6],
            [3, 6, 8],
            [3, 8, 9],
            [4, 9, 5],
            [2, 4, 11],
            [6, 2, 10],
            [8, 6, 7],
            [9, 8, 1],
        ],
    };
    for _ in 0..levels {
        mesh = mesh.subdivide();
        for p in &mut mesh.positions {
            let l = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
            *p = p.map(|c| c / l);
        }
    }
    mesh
}

/// A mix of generated meshes: grids with holes (open or torus), fans,
/// non-manifold edges, isolated vertices, several components, shuffled.
pub fn any_mesh() -> impl Strategy<Value = TriMesh> {
    (
        1u32..14,
        1u32..14,
        proptest::collection::vec(any::<bool>(), 1..16),
        any::<bool>(),
        proptest::collection::vec(any::<usize>(), 0..12),
        0u32..4,
        0u32..3,
        0u32..9,
        any::<u64>(),
    )
        .prop_map(|(n, m, flip, wrap, holes, nm, iso, fan_k, seed)| {
            let wrap = wrap && n >= 3 && m >= 3;
            let mut parts = vec![add_defects(grid(n, m, &flip, wrap, &holes), nm, iso)];
            if fan_k >= 3 {
                parts.push(fan(fan_k, fan_k % 2 == 0));
            }
            shuffle(&concat(&parts), seed)
        })
}

/// Small random triangle soups: 4 to 9 vertices, up to 12 distinct-corner
/// faces in any orientation, so edges shared by three or more faces,
/// repeated faces, faces meeting at a vertex only and inconsistent
/// orientations are common.
pub fn soup() -> impl Strategy<Value = TriMesh> {
    (4u32..10).prop_flat_map(|nv| {
        let corner = 0..nv;
        let face = (corner.clone(), corner.clone(), corner)
            .prop_filter("distinct corners", |(a, b, c)| a != b && b != c && a != c)
            .prop_map(|(a, b, c)| [a, b, c]);
        proptest::collection::vec(face, 1..13).prop_map(move |faces| TriMesh {
            positions: (0..nv).map(|i| [i as f32, (i * i) as f32, 0.0]).collect(),
            faces,
        })
    })
}

/// The bundled real mesh, `assets/dragon.obj`.
pub fn bundled_mesh() -> TriMesh {
    asset_mesh("dragon.obj")
}

/// The mesh `assets/<name>` (see assets/README.md).
pub fn asset_mesh(name: &str) -> TriMesh {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../assets")
        .join(name);
    cavity::io::read_mesh(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .mesh
}

/// The reference mesh's result of `query` for element `src` (input numbering).
pub fn reference_row(reference: &ReferenceMesh, query: Query, src: u32) -> Vec<u32> {
    match query {
        Query::VV => reference.vv(src),
        Query::VE => reference.ve(src),
        Query::VF => reference.vf(src),
        Query::EV => reference.ev(src),
        Query::EF => reference.ef(src),
        Query::FV => reference.fv(src).to_vec(),
        Query::FE => reference.fe(src).to_vec(),
        Query::FF => reference.ff(src),
    }
}

fn set(v: impl IntoIterator<Item = u32>) -> Vec<u32> {
    let mut v: Vec<u32> = v.into_iter().collect();
    v.sort_unstable();
    v
}

/// Runs every query of `backend` on `mesh` patched with `patch_size` and
/// compares it with the reference mesh: as sets, and in rotational order
/// around manifold interior vertices (VV; VE and VF consistent with VV).
/// Returns a description of the first mismatch.
pub fn check_queries(mesh: &TriMesh, patch_size: u32, backend: &Backend) -> Result<(), String> {
    let reference = ReferenceMesh::new(mesh).map_err(|e| e.to_string())?;
    let patched = PatchedMesh::new(mesh, patch_size).map_err(|e| e.to_string())?;
    check_patching(mesh, &patched)?;
    let to_in = |k: Kind, h: u32| patched.to_input(k)[h as usize];
    // Patched edge ids are input edges as vertex pairs; map to the reference's.
    let ref_edge = |h: u32| {
        let [a, b] = patched.input_edges()[to_in(Kind::Edge, h) as usize];
        reference
            .edge_index(a, b)
            .expect("edge exists in reference")
    };
    let map = |k: Kind, h: u32| match k {
        Kind::Edge => ref_edge(h),
        _ => to_in(k, h),
    };
    for query in Query::ALL {
        let result = backend.query(&patched, query).map_err(|e| e.to_string())?;
        let n = patched.count(query.source());
        if result.offsets.len() != n + 1 {
            return Err(format!(
                "{}: {} rows for {n} sources",
                query.name(),
                result.offsets.len() - 1
            ));
        }
        for h in 0..n as u32 {
            let row: Vec<u32> = result
                .row(h)
                .iter()
                .map(|&x| map(query.target(), x))
                .collect();
            let src = map(query.source(), h);
            let expected = reference_row(&reference, query, src);
            let ordered = matches!(query, Query::FV | Query::FE);
            let same = if ordered {
                row == expected
            } else {
                set(row.clone()) == set(expected.clone())
            };
            if !same {
                return Err(format!(
                    "{} of {:?} {src}: got {row:?}, expected {expected:?}",
                    query.name(),
                    query.source()
                ));
            }
            if query == Query::VV
                && reference.is_manifold_interior_vertex(src)
                && !reference.is_rotational_order(src, &row)
            {
                return Err(format!(
                    "VV of vertex {src} not in rotational order: {row:?}"
                ));
            }
        }
    }
    check_ring_consistency(&patched, backend, &reference)
}

/// VE[i] joins v and VV[i]; VF[i] holds v, VV[i] and VV[i+1] around
/// manifold interior vertices.
fn check_ring_consistency(
    patched: &PatchedMesh,
    backend: &Backend,
    reference: &ReferenceMesh,
) -> Result<(), String> {
    let vv = backend
        .query(patched, Query::VV)
        .map_err(|e| e.to_string())?;
    let ve = backend
        .query(patched, Query::VE)
        .map_err(|e| e.to_string())?;
    let vf = backend
        .query(patched, Query::VF)
        .map_err(|e| e.to_string())?;
    let fv = backend
        .query(patched, Query::FV)
        .map_err(|e| e.to_string())?;
    let ev = backend
        .query(patched, Query::EV)
        .map_err(|e| e.to_string())?;
    for v in 0..patched.count(Kind::Vertex) as u32 {
        let input = patched.to_input(Kind::Vertex)[v as usize];
        if !reference.is_manifold_interior_vertex(input) {
            continue;
        }
        let ring = vv.row(v);
        let k = ring.len();
        for i in 0..k {
            let e = ev.row(ve.row(v)[i]);
            if !(e.contains(&v) && e.contains(&ring[i])) {
                return Err(format!(
                    "VE[{i}] of vertex {input} does not join it to VV[{i}]"
                ));
            }
            let f = fv.row(vf.row(v)[i]);
            if !(f.contains(&v) && f.contains(&ring[i]) && f.contains(&ring[(i + 1) % k])) {
                return Err(format!(
                    "VF[{i}] of vertex {input} is not between VV[{i}] and VV[{}]",
                    (i + 1) % k
                ));
            }
        }
    }
    Ok(())
}

/// Patching invariants: handles are bijections; every patch's owned faces
/// are one connected component; masks agree with the owned counts.
pub fn check_patching(mesh: &TriMesh, patched: &PatchedMesh) -> Result<(), String> {
    for kind in [Kind::Vertex, Kind::Edge, Kind::Face] {
        let mut seen = vec![false; patched.count(kind)];
        for &h in patched.to_handle(kind) {
            if std::mem::replace(&mut seen[h as usize], true) {
                return Err(format!("{kind:?} handle {h} owned twice"));
            }
        }
        if seen.iter().any(|s| !s) {
            return Err(format!("a {kind:?} handle is owned by no element"));
        }
    }
    if patched.count(Kind::Vertex) != mesh.positions.len()
        || patched.count(Kind::Face) != mesh.faces.len()
    {
        return Err("element counts differ from the input".into());
    }
    let view = patched.view();
    for (p, info) in patched.patches().iter().enumerate() {
        for kind in [Kind::Vertex, Kind::Edge, Kind::Face] {
            for l in 0..info.count(kind) {
                if view.mask_bit(info, kind, false, l) != (l < info.owned(kind)) {
                    return Err(format!("patch {p}: owned mask of {kind:?} {l} is wrong"));
                }
                if !view.mask_bit(info, kind, true, l) {
                    return Err(format!("patch {p}: {kind:?} {l} inactive"));
                }
            }
        }
        if info.owned_faces > patched.patch_size() {
            return Err(format!(
                "patch {p} has {} faces > {}",
                info.owned_faces,
                patched.patch_size()
            ));
        }
        // Connectivity of owned faces through shared local edges.
        let fe = &patched.fe()[info.fe_offset as usize..][..3 * info.num_faces as usize];
        let nf = info.owned_faces as usize;
        if nf == 0 {
            continue;
        }
        let mut reached = vec![false; nf];
        reached[0] = true;
        let mut stack = vec![0usize];
        while let Some(f) = stack.pop() {
            for g in 0..nf {
                if !reached[g]
                    && (0..3).any(|a| (0..3).any(|b| fe[3 * f + a] >> 1 == fe[3 * g + b] >> 1))
                {
                    reached[g] = true;
                    stack.push(g);
                }
            }
        }
        if reached.iter().any(|r| !r) {
            return Err(format!("patch {p} is not connected"));
        }
    }
    Ok(())
}

/// Proptest cases: `PROPTEST_CASES` when set (longer runs on the device
/// machine), else `default` (what CI runs).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A round hook for `cavity::rounds::sweeps` that runs
/// `DynamicMesh::validate(manifold)` and panics with the round number on
/// the first problem.
pub fn validate_each_round(manifold: bool) -> impl FnMut(&DynamicMesh) {
    let mut rounds = 0;
    move |m: &DynamicMesh| {
        rounds += 1;
        if let Err(e) = m.validate(manifold) {
            panic!("invalid after round {rounds}: {e}");
        }
    }
}

/// Topology that remeshing and tracking keep: Euler characteristic,
/// components, boundary loops and non-manifold elements.
pub fn topology(s: &MeshStats) -> [i64; 4] {
    [
        s.euler_characteristic,
        s.components as i64,
        s.boundary_loops as i64,
        (s.non_manifold_edges + s.non_manifold_vertices) as i64,
    ]
}

/// Whether no directed edge is used twice (consistently oriented).
pub fn oriented(m: &TriMesh) -> bool {
    let mut seen = HashSet::new();
    m.faces
        .iter()
        .all(|f| (0..3).all(|k| seen.insert((f[k], f[(k + 1) % 3]))))
}

/// Smallest face area of `m`.
pub fn smallest_area(m: &TriMesh) -> f64 {
    m.faces
        .iter()
        .map(|t| {
            let p = t.map(|v| glam::DVec3::from(m.positions[v as usize].map(f64::from)));
            0.5 * (p[1] - p[0]).cross(p[2] - p[0]).length()
        })
        .fold(f64::INFINITY, f64::min)
}

/// What [`dirty_mesh`] did to its clean mesh.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dirt {
    /// Faces added again (half of them the other way round).
    pub duplicate_faces: usize,
    /// Zero-area slivers folded into an edge (a vertex at the edge's
    /// midpoint, the sliver on the edge).
    pub slivers: usize,
    /// Vertices moved onto a neighbour (a zero-length edge, two zero-area
    /// faces).
    pub collapsed_edges: usize,
    /// Vertices given an unmerged copy at the same position (a seam, as an
    /// STL-style scan leaves) or an unused one.
    pub coincident: usize,
    /// Faces removed by walks over face neighbours (jagged holes).
    pub hole_faces: usize,
    /// The power of ten the coordinates were scaled by.
    pub scale_exponent: i32,
}

/// Scan-like dirty meshes: an [`any_mesh`] with jagged holes (walks of
/// removed faces), zero-area slivers and zero-length edges, coincident
/// vertices (unmerged seams and unused copies), duplicate faces (some the
/// other way round), scaled by a power of ten from 1e-30 to 1e30 and moved
/// off the origin by a few times its size. Returns the mesh and what was
/// done to it.
pub fn dirty_mesh() -> impl Strategy<Value = (TriMesh, Dirt)> {
    (
        any_mesh(),
        (0usize..3, 1usize..12),
        0usize..3,
        0usize..3,
        0usize..4,
        0usize..3,
        -30i32..=30,
        any::<u64>(),
    )
        .prop_map(
            |(mesh, (walks, steps), slivers, collapsed, coincident, duplicates, exp, seed)| {
                let mut rnd = xorshift(seed);
                let mut dirt = Dirt {
                    scale_exponent: exp,
                    ..Dirt::default()
                };
                let mut m = mesh;
                for _ in 0..walks {
                    dirt.hole_faces += jagged_hole(&mut m, steps, &mut rnd);
                }
                for _ in 0..slivers {
                    dirt.slivers += fold_sliver(&mut m, &mut rnd) as usize;
                }
                for _ in 0..collapsed {
                    dirt.collapsed_edges += collapse_onto_neighbour(&mut m, &mut rnd) as usize;
                }
                for i in 0..coincident {
                    dirt.coincident += unmerge(&mut m, i % 2 == 0, &mut rnd) as usize;
                }
                for i in 0..duplicates {
                    if m.faces.is_empty() {
                        break;
                    }
                    let [a, b, c] = m.faces[rnd() as usize % m.faces.len()];
                    m.faces.push(if i % 2 == 0 { [a, b, c] } else { [a, c, b] });
                    dirt.duplicate_faces += 1;
                }
                let s = 10f64.powi(exp);
                let shift = [3.0, -2.0, 5.0];
                for p in &mut m.positions {
                    for (c, o) in p.iter_mut().zip(shift) {
                        *c = ((*c as f64 + o) * s) as f32;
                    }
                }
                (m, dirt)
            },
        )
}

/// A xorshift generator seeded by `seed`.
fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// Removes up to `steps` faces along a random walk over edge-adjacent faces
/// (never the last face); returns how many.
fn jagged_hole(m: &mut TriMesh, steps: usize, rnd: &mut impl FnMut() -> u64) -> usize {
    if m.faces.len() < 2 {
        return 0;
    }
    let Ok(r) = ReferenceMesh::new(m) else {
        return 0;
    };
    let mut gone = BTreeSet::new();
    let mut f = (rnd() as usize % m.faces.len()) as u32;
    for _ in 0..steps.min(m.faces.len() - 1) {
        gone.insert(f);
        let next: Vec<u32> = r.ff(f).into_iter().filter(|g| !gone.contains(g)).collect();
        if next.is_empty() {
            break;
        }
        f = next[rnd() as usize % next.len()];
    }
    let mut i = 0;
    m.faces.retain(|_| {
        i += 1;
        !gone.contains(&(i - 1))
    });
    gone.len()
}

/// Splits a random face's first edge at its midpoint and folds a zero-area
/// sliver onto the edge: `[a, b, c]` becomes `[a, m, c]`, `[m, b, c]` and
/// the sliver `[a, b, m]` (orientation kept). Returns whether it did.
fn fold_sliver(m: &mut TriMesh, rnd: &mut impl FnMut() -> u64) -> bool {
    if m.faces.is_empty() {
        return false;
    }
    let f = rnd() as usize % m.faces.len();
    let [a, b, c] = m.faces[f];
    let [pa, pb] = [a, b].map(|v| m.positions[v as usize]);
    let v = m.positions.len() as u32;
    m.positions.push([0, 1, 2].map(|k| 0.5 * (pa[k] + pb[k])));
    m.faces[f] = [a, v, c];
    m.faces.push([v, b, c]);
    m.faces.push([a, b, v]);
    true
}

/// Moves a random face's first vertex onto its second (a zero-length edge,
/// zero-area faces around it). Returns whether it did.
fn collapse_onto_neighbour(m: &mut TriMesh, rnd: &mut impl FnMut() -> u64) -> bool {
    if m.faces.is_empty() {
        return false;
    }
    let [a, b, _] = m.faces[rnd() as usize % m.faces.len()];
    m.positions[a as usize] = m.positions[b as usize];
    true
}

/// Gives a random face's first vertex a coincident copy: used by that face
/// alone (`seam`: the face comes loose along the vertex, as an unmerged
/// STL-style scan does) or by nothing. Returns whether it did.
fn unmerge(m: &mut TriMesh, seam: bool, rnd: &mut impl FnMut() -> u64) -> bool {
    if m.faces.is_empty() {
        return false;
    }
    let f = rnd() as usize % m.faces.len();
    let v = m.faces[f][0];
    let copy = m.positions.len() as u32;
    m.positions.push(m.positions[v as usize]);
    if seam {
        m.faces[f][0] = copy;
    }
    true
}

/// Runs `work` in a rayon pool of `n` workers (the CPU backend's blocks
/// and the host stages run there).
pub fn on_workers<T: Send>(n: usize, work: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("thread pool")
        .install(work)
}
