//! Kernels of a kernel crate outside the core crates (`tests/kernels`, as
//! a user writes one; issue 25 item 2) on the test backend: its PTX,
//! built by the build script with `cavity-ptx-builder`, is added to the
//! backend (`Backend::add_kernels`); the CPU backend runs the same bodies.
//! Each result is checked against a plain serial computation.

use std::collections::{HashMap, HashSet};

use cavity::Kind;
use cavity::attributes::AttributeLayout;
use cavity::backend::Backend;
use cavity::dynamic::NEW_ELEMENT;
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::rounds::sweeps;
use cavity::{PatchedMesh, Query, TriMesh};
use cavity_device::kernel::Kernel;
use cavity_test_kernels::{FlipToShorter, NEW_LABEL, SplitInterpolating, Valences};
use cavity_tests::{TEST_KERNELS_PTX, grid, test_backend};

#[test]
fn each_ptx_holds_its_own_crates_entry_points() {
    if TEST_KERNELS_PTX.is_empty() {
        eprintln!("no PTX toolchain at build time: nothing to check");
        return;
    }
    let entries = |ptx: &str| -> Vec<String> {
        ptx.lines()
            .filter_map(|l| l.split(".entry ").nth(1))
            .map(|r| r.split('(').next().unwrap_or("").trim().to_string())
            .collect()
    };
    let user = entries(TEST_KERNELS_PTX);
    assert!(
        user.iter().all(|e| e.starts_with("cavity_test_kernels_")),
        "the kernel crate's PTX holds its own kernels only: {user:?}"
    );
    for name in [
        "cavity_test_kernels_ForEachLaplacian",
        "cavity_test_kernels_ForEachRingProbeRing",
        "cavity_test_kernels_UpdateSplitInterpolating",
        "cavity_test_kernels_SurveySplitVertices",
        "cavity_test_kernels_Valences",
    ] {
        assert!(user.iter().any(|e| e == name), "the test PTX lacks {name}");
    }
    let core = entries(cavity::backend::cuda::PTX);
    for name in ["cavity_device_Refill", "cavity_device_Compact"] {
        assert!(core.iter().any(|e| e == name), "the core PTX lacks {name}");
    }
    assert!(core.iter().all(|e| e.starts_with("cavity_device_")));
    // Each application's kernels are in its own module, not the core's.
    let delaunay = entries(cavity_delaunay::PTX);
    assert!(
        delaunay
            .iter()
            .any(|e| e == "cavity_delaunay_kernels_UpdateDelaunay")
    );
    assert!(
        !delaunay
            .iter()
            .any(|e| e.starts_with("cavity_mcf_kernels_"))
    );
    assert!(!core.iter().any(|e| e.contains("Delaunay")));
}

/// A planar grid with holes, its interior vertices moved off the lattice
/// (a few faces of a small grid fold over; the 24 × 24 grid has none).
fn jittered(n: u32, holes: &[usize]) -> TriMesh {
    let mut mesh = grid(n, n, &[false, true], false, holes);
    for (i, p) in mesh.positions.iter_mut().enumerate() {
        let (x, y) = (p[0], p[1]);
        if x > 0.0 && y > 0.0 && x < n as f32 && y < n as f32 {
            p[0] += 0.35 * ((i as f32) * 1.7).sin();
            p[1] += 0.35 * ((i as f32) * 2.3).cos();
        }
    }
    mesh
}

/// The undirected edges of `mesh` with the faces on each.
fn edge_faces(mesh: &TriMesh) -> HashMap<(u32, u32), Vec<usize>> {
    let mut edges: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
    for (f, t) in mesh.faces.iter().enumerate() {
        for i in 0..3 {
            let (a, b) = (t[i], t[(i + 1) % 3]);
            edges.entry((a.min(b), a.max(b))).or_default().push(f);
        }
    }
    edges
}

/// Every vertex's valence (distinct neighbours through edges), by input
/// index.
fn valences(mesh: &TriMesh) -> Vec<u32> {
    let mut v = vec![0; mesh.positions.len()];
    for &(a, b) in edge_faces(mesh).keys() {
        v[a as usize] += 1;
        v[b as usize] += 1;
    }
    v
}

#[test]
fn a_user_kernel_computes_valences() {
    let mesh = jittered(12, &[5, 40, 41]);
    let patched = PatchedMesh::new(&mesh, 16).expect("patches");
    let n = patched.to_input(Kind::Vertex).len();
    let smem = patched.query_shared_bytes(Query::VV, Valences::BOUNDS.threads);
    let grid = patched.num_patches();
    let by_handle = match test_backend() {
        Backend::Cpu(cpu) => {
            let mut out = vec![0u32; n];
            let params = (patched.raw(), out.as_mut_ptr() as u64, n as u32);
            let smem = patched.query_shared_bytes(Query::VV, 1);
            // SAFETY: the mesh's arrays and `out` (one entry per vertex
            // handle) live through the call; the shared memory is VV's.
            unsafe { cpu.launch::<Valences>(grid, smem, params) };
            out
        }
        Backend::Cuda(gpu) => {
            let dm = gpu.upload_mesh(&patched).expect("upload");
            let out = gpu.upload(&vec![0u32; n]).expect("output");
            let kernel = gpu.load::<Valences>(smem).expect("the user kernel loads");
            let addr = gpu.address(&out);
            // SAFETY: `dm` is `patched` on the device and `out` holds one
            // entry per vertex handle; both live until the download.
            unsafe { gpu.launch(&kernel, grid, (dm.raw(), addr, n as u32)) }.expect("launch");
            gpu.download(&out, n).expect("download")
        }
    };
    let expected = valences(&mesh);
    for (h, &input) in patched.to_input(Kind::Vertex).iter().enumerate() {
        assert_eq!(
            by_handle[h], expected[input as usize],
            "vertex {input} (handle {h})"
        );
    }
}

/// `a c b d` strictly convex (f64, in the plane of the two triangles).
fn convex(p: [[f64; 3]; 4]) -> bool {
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let cross = |u: [f64; 3], v: [f64; 3]| {
        [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ]
    };
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let [a, b, c, d] = p;
    let n = sub(cross(sub(b, a), sub(c, a)), cross(sub(b, a), sub(d, a)));
    let side = |q: [f64; 3]| dot(cross(sub(d, c), sub(q, c)), n);
    // Clearly on opposite sides, relative to the quad's size (the kernel
    // decides in f32).
    let scale = dot(n, n).sqrt() * dot(sub(d, c), sub(d, c)).sqrt();
    side(a) < -1e-4 * scale && side(b) > 1e-4 * scale
        || side(a) > 1e-4 * scale && side(b) < -1e-4 * scale
}

/// Twice the signed area of every face of a mesh in the plane z = 0.
fn signed_areas(mesh: &TriMesh) -> Vec<f64> {
    mesh.faces
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| mesh.positions[v as usize].map(f64::from));
            (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
        })
        .collect()
}

#[test]
fn a_user_cavity_flips_until_no_shorter_diagonal_is_left() {
    let app = FlipToShorter { ratio: 0.9 };
    let input = jittered(24, &[30, 31, 200, 420]);
    let mut dynamic =
        DynamicMesh::new(&input, 32, CapacityFactors::default()).expect("dynamic mesh");
    let report = test_backend()
        .run_rounds(&mut dynamic, |r| sweeps(r, &app, false, None), |e| e)
        .expect("the flips run")
        .value;
    assert!(report.flips > 0, "some edge flipped: {report:?}");
    dynamic.validate(true).expect("a valid dynamic mesh");
    let out = dynamic.to_mesh();
    assert_eq!(out.faces.len(), input.faces.len());
    // Only convex quads flipped: no face folds over, and the faces still
    // cover the same area.
    let before = signed_areas(&input);
    assert!(before.iter().all(|&a| a > 0.0), "the input folds nowhere");
    let after = signed_areas(&out);
    assert!(after.iter().all(|&a| a > 0.0), "a flip folded a face over");
    let (sum0, sum1): (f64, f64) = (before.iter().sum(), after.iter().sum());
    assert!(
        (sum0 - sum1).abs() < 1e-6 * sum0,
        "area {sum0} became {sum1}"
    );
    // Serially: no interior edge is left whose flip the criterion allows.
    let edges = edge_faces(&out);
    let existing: HashSet<(u32, u32)> = edges.keys().copied().collect();
    let p = |v: u32| out.positions[v as usize].map(f64::from);
    let len = |a: u32, b: u32| {
        let (x, y) = (p(a), p(b));
        ((x[0] - y[0]).powi(2) + (x[1] - y[1]).powi(2) + (x[2] - y[2]).powi(2)).sqrt()
    };
    let mut checked = 0;
    for (&(a, b), faces) in &edges {
        let [f0, f1] = faces[..] else { continue };
        let opposite = |f: usize| {
            out.faces[f]
                .into_iter()
                .find(|&v| v != a && v != b)
                .expect("a third vertex")
        };
        let (c, d) = (opposite(f0), opposite(f1));
        if c == d || existing.contains(&(c.min(d), c.max(d))) {
            continue;
        }
        if convex([p(a), p(b), p(c), p(d)]) {
            checked += 1;
            assert!(
                len(c, d) >= f64::from(app.ratio) * len(a, b) * (1.0 - 1e-4),
                "edge {a}-{b} ({}) still has a shorter diagonal {c}-{d} ({})",
                len(a, b),
                len(c, d)
            );
        }
    }
    let interior = edges.values().filter(|f| f.len() == 2).count();
    assert!(
        checked * 2 > interior,
        "only {checked} of {interior} interior edges checked"
    );
}

/// `x + 2y + 3z`: linear, so a midpoint's value is the mean of its edge's.
fn linear(p: [f32; 3]) -> f64 {
    p[0] as f64 + 2.0 * p[1] as f64 + 3.0 * p[2] as f64
}

#[test]
fn a_user_cavity_sets_the_attributes_of_what_it_adds() {
    let input = jittered(12, &[10, 11, 60]);
    let mut layout = AttributeLayout::new();
    let value = layout.vertex::<f64, 1>("value").unwrap();
    let label = layout.face::<u32, 1>("label").unwrap();
    let factors = CapacityFactors {
        elements: 2.0,
        patches: 16.0,
    };
    let mut dynamic =
        DynamicMesh::with_attributes(&input, 16, factors, &layout).expect("dynamic mesh");
    let values: Vec<[f64; 1]> = input.positions.iter().map(|&p| [linear(p)]).collect();
    dynamic.set_attribute(&value, &values).unwrap();
    let labels: Vec<[u32; 1]> = (0..input.faces.len()).map(|f| [f as u32 + 100]).collect();
    dynamic.set_attribute(&label, &labels).unwrap();
    let app = SplitInterpolating {
        max_length: 0.3,
        value,
        label,
    };
    let report = test_backend()
        .run_rounds(&mut dynamic, |r| sweeps(r, &app, false, None), |e| e)
        .expect("the splits run")
        .value;
    assert!(report.flips > input.faces.len() as u64, "{report:?}");
    dynamic.validate(true).expect("a valid dynamic mesh");
    let (out, _) = dynamic.to_mesh_with_sources();
    let got = dynamic.attribute(&value).unwrap();
    for (v, (&p, x)) in out.positions.iter().zip(&got).enumerate() {
        let want = linear(p);
        assert!(
            (x[0] - want).abs() <= 1e-5 * want.abs().max(1.0),
            "vertex {v}: {} for {want}",
            x[0]
        );
    }
    let sources = dynamic.sources(Kind::Face);
    let got = dynamic.attribute(&label).unwrap();
    for (f, (&s, l)) in sources.iter().zip(&got).enumerate() {
        let want = if s == NEW_ELEMENT { NEW_LABEL } else { s + 100 };
        assert_eq!(l[0], want, "face {f} (input {s})");
    }
    assert!(sources.contains(&NEW_ELEMENT));
}
