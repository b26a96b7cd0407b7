//! User attributes on vertices, edges and faces of the dynamic mesh
//! (issue 25 item 3) on the test backend: declared in a layout, written
//! and read in the input's order, carried with their elements through
//! cavities, migration, ownership changes and slicing (checked after
//! every round on random meshes: the value of every surviving element is
//! its input value, and the element is still the input's element), zero
//! on new elements, and reduced (dot, norm, sum, max, axpy, xpay) on either
//! backend against serial sums.

use cavity::TriMesh;
use cavity::attributes::{Attr, AttributeError, AttributeLayout, MAX_USER_WORDS, ReduceOp};
use cavity::backend::cpu::Schedule;
use cavity::dynamic::{CapacityFactors, DynamicMesh, NEW_ELEMENT};
use cavity::rounds::{Rounds, RunError, sweeps};
use cavity::{Kind, PatchedMesh};
use cavity_device::attribute::{AttrWords, Reduction};
use cavity_device::dynamic::update::CavityKernels;
use cavity_remesh_kernels::split::SplitLongEdges;
use cavity_test_kernels::operations::{CollapseShortEdges, SplitLargeFaces};
use cavity_tests::{any_mesh, cases, grid, median_edge_length, shuffle};
use proptest::prelude::*;

/// The tests' backend with the remeshing's kernels (its edge split is
/// these tests' workload).
fn test_backend() -> cavity::backend::Backend {
    cavity_tests::with_kernels(cavity_tests::test_backend(), cavity_remesh::add_kernels)
}

/// [`test_backend`] with dynamic rounds in `schedule` on the CPU backend.
fn test_backend_with(schedule: cavity::backend::cpu::Schedule) -> cavity::backend::Backend {
    let backend = cavity_tests::test_backend_with(schedule);
    cavity_tests::with_kernels(backend, cavity_remesh::add_kernels)
}

/// The attributes every test declares.
#[derive(Clone, Copy)]
struct Attrs {
    point: Attr<f32, 3>,
    tag: Attr<u32, 1>,
    edge: Attr<u32, 2>,
    face: Attr<f64, 2>,
}

impl Attrs {
    fn layout() -> (AttributeLayout, Attrs) {
        let mut layout = AttributeLayout::new();
        let attrs = Attrs {
            point: layout.vertex("point").unwrap(),
            tag: layout.vertex("tag").unwrap(),
            edge: layout.edge("edge").unwrap(),
            face: layout.face("face").unwrap(),
        };
        (layout, attrs)
    }
}

fn point_of(s: u32) -> [f32; 3] {
    [s as f32, -(s as f32), 0.5]
}
fn tag_of(s: u32) -> [u32; 1] {
    [3 * s + 1]
}
fn edge_of(s: u32) -> [u32; 2] {
    [s, !s]
}
fn face_of(s: u32) -> [f64; 2] {
    [s as f64 + 0.25, 1e10 + s as f64]
}

/// A dynamic mesh of `input` with the attributes set from the input
/// indices.
fn with_values(input: &TriMesh, patch_size: u32, factors: CapacityFactors) -> (DynamicMesh, Attrs) {
    let (layout, a) = Attrs::layout();
    let mut m = DynamicMesh::with_attributes(input, patch_size, factors, &layout).expect("mesh");
    let set = |kind| m.sources(kind);
    let (vs, es, fs) = (set(Kind::Vertex), set(Kind::Edge), set(Kind::Face));
    m.set_attribute(
        &a.point,
        &vs.iter().map(|&s| point_of(s)).collect::<Vec<_>>(),
    )
    .unwrap();
    m.set_attribute(&a.tag, &vs.iter().map(|&s| tag_of(s)).collect::<Vec<_>>())
        .unwrap();
    m.set_attribute(&a.edge, &es.iter().map(|&s| edge_of(s)).collect::<Vec<_>>())
        .unwrap();
    m.set_attribute(&a.face, &fs.iter().map(|&s| face_of(s)).collect::<Vec<_>>())
        .unwrap();
    (m, a)
}

fn sorted([a, b]: [u32; 2]) -> [u32; 2] {
    [a.min(b), a.max(b)]
}

/// The face's corners rotated to start at the smallest.
fn rotated(f: [u32; 3]) -> [u32; 3] {
    let i = (0..3).min_by_key(|&i| f[i]).unwrap();
    [f[i], f[(i + 1) % 3], f[(i + 2) % 3]]
}

/// Every surviving input element has its input values and is still the
/// input's element (same vertices); every new element has zeros.
fn check(
    m: &DynamicMesh,
    a: &Attrs,
    input: &TriMesh,
    input_edges: &[[u32; 2]],
) -> Result<(), String> {
    let err = |e: AttributeError| e.to_string();
    // Element order: the surviving input elements by input index, then
    // the added ones.
    for kind in Kind::ALL {
        let src = m.sources(kind);
        let inputs = src.iter().take_while(|&&s| s != NEW_ELEMENT).count();
        // The added ones in patch order.
        let owners = m.owner_patches(kind);
        if !src[..inputs].windows(2).all(|w| w[0] <= w[1])
            || src[inputs..].iter().any(|&s| s != NEW_ELEMENT)
            || !owners[inputs..].windows(2).all(|w| w[0] <= w[1])
        {
            return Err(format!(
                "{kind:?}: the sources are not the input elements in order, then the added ones"
            ));
        }
    }
    let (out, vsrc) = m.to_mesh_with_sources();
    if m.vertex_positions() != (out.positions.clone(), vsrc.clone()) {
        return Err("vertex_positions differs from to_mesh_with_sources".into());
    }
    let points = m.attribute(&a.point).map_err(err)?;
    let tags = m.attribute(&a.tag).map_err(err)?;
    for (i, &s) in vsrc.iter().enumerate() {
        let (p, t) = if s == NEW_ELEMENT {
            ([0.0; 3], [0])
        } else {
            (point_of(s), tag_of(s))
        };
        if points[i] != p || tags[i] != t {
            return Err(format!(
                "vertex {i} (input {s}): {:?} {:?}",
                points[i], tags[i]
            ));
        }
    }
    let esrc = m.sources(Kind::Edge);
    let edges = m.edges();
    let values = m.attribute(&a.edge).map_err(err)?;
    for (i, &s) in esrc.iter().enumerate() {
        if s == NEW_ELEMENT {
            if values[i] != [0, 0] {
                return Err(format!("new edge {i}: {:?}", values[i]));
            }
            continue;
        }
        let ends = edges[i].map(|v| vsrc[v as usize]);
        if values[i] != edge_of(s) || sorted(ends) != sorted(input_edges[s as usize]) {
            return Err(format!("edge {i} (input {s}): {:?} at {ends:?}", values[i]));
        }
    }
    let fsrc = m.sources(Kind::Face);
    let values = m.attribute(&a.face).map_err(err)?;
    for (i, &s) in fsrc.iter().enumerate() {
        if s == NEW_ELEMENT {
            if values[i] != [0.0, 0.0] {
                return Err(format!("new face {i}: {:?}", values[i]));
            }
            continue;
        }
        let corners = out.faces[i].map(|v| vsrc[v as usize]);
        if values[i] != face_of(s) || rotated(corners) != rotated(input.faces[s as usize]) {
            return Err(format!(
                "face {i} (input {s}): {:?} at {corners:?}",
                values[i]
            ));
        }
    }
    Ok(())
}

#[test]
fn a_layout_names_each_attribute_once_with_its_type() {
    let mut layout = AttributeLayout::new();
    let v = layout.vertex::<f32, 3>("x").unwrap();
    let e = layout.edge::<f32, 3>("x").unwrap();
    assert_ne!(v.kind(), e.kind());
    assert!(matches!(
        layout.vertex::<u32, 1>("x"),
        Err(AttributeError::Duplicate { .. })
    ));
    assert!(matches!(
        layout.find_on::<f64, 3>(Kind::Vertex, "x"),
        Err(AttributeError::Type { .. })
    ));
    assert!(matches!(
        layout.find_on::<f32, 3>(Kind::Face, "x"),
        Err(AttributeError::Unknown { .. })
    ));
    assert_eq!(layout.find_on::<f32, 3>(Kind::Edge, "x").unwrap(), e);
    let mut words = 0;
    let full = loop {
        match layout.face::<f64, 4>(&format!("f{words}")) {
            Ok(_) => words += 8,
            Err(e) => break e,
        }
    };
    assert_eq!(words, MAX_USER_WORDS);
    assert!(matches!(full, AttributeError::TooMany { .. }), "{full}");
    // A handle of another layout is refused, not misread.
    let mut other = AttributeLayout::new();
    let foreign = other.vertex::<f64, 4>("y").unwrap();
    let input = grid(3, 3, &[false], false, &[]);
    let m = DynamicMesh::with_attributes(&input, 8, CapacityFactors::default(), &layout).unwrap();
    assert!(m.attribute(&foreign).is_err());
}

#[test]
fn attributes_round_trip_in_the_inputs_order() {
    let input = shuffle(&grid(9, 7, &[true, false], false, &[3, 20, 21]), 5);
    let (m, a) = with_values(&input, 16, CapacityFactors::default());
    let patched = PatchedMesh::new(&input, 16).unwrap();
    assert_eq!(m.to_mesh(), input, "unchanged mesh: the input's order");
    let inputs = |kind| (0..m.sources(kind).len() as u32).collect::<Vec<_>>();
    assert_eq!(m.sources(Kind::Vertex), inputs(Kind::Vertex));
    assert_eq!(m.sources(Kind::Edge), inputs(Kind::Edge));
    assert_eq!(m.sources(Kind::Face), inputs(Kind::Face));
    check(&m, &a, &input, patched.input_edges()).unwrap();
    let mut m = m;
    assert!(matches!(
        m.set_attribute(&a.tag, &[[1]]),
        Err(AttributeError::Length { .. })
    ));
}

/// Runs `app` on `input` with the attributes set, checking them (and the
/// mesh) after every round; returns the slicings.
fn run_checked<A: CavityKernels>(
    schedule: Schedule,
    input: &TriMesh,
    patch_size: u32,
    factors: CapacityFactors,
    app: A,
) -> Result<u32, String> {
    let (mut m, a) = with_values(input, patch_size, factors);
    let edges = PatchedMesh::new(input, patch_size)
        .unwrap()
        .input_edges()
        .to_vec();
    let manifold = m.validate(true).is_ok();
    let mut rounds = 0;
    let mut failure = None;
    let mut each = |m: &DynamicMesh| {
        rounds += 1;
        if failure.is_none() {
            if let Err(e) = m.validate(manifold) {
                failure = Some(format!("invalid after round {rounds}: {e}"));
            } else if let Err(e) = check(m, &a, input, &edges) {
                failure = Some(format!("after round {rounds}: {e}"));
            }
        }
    };
    let backend = test_backend_with(schedule);
    let ran = backend.run_rounds(&mut m, |r| sweeps(r, &app, false, Some(&mut each)), |e| e);
    if let Some(f) = failure {
        return Err(f);
    }
    match ran {
        Ok(report) => {
            check(&m, &a, input, &edges)?;
            Ok(report.value.slices)
        }
        // Out of room: the mesh left must still be sound.
        Err(RunError::Fatal(..)) => check(&m, &a, input, &edges).map(|()| 0),
        Err(e) => Err(e.to_string()),
    }
}

/// Patches that run out of room and are sliced again and again.
const TIGHT: CapacityFactors = CapacityFactors {
    elements: 2.0,
    patches: 32.0,
};

#[test]
fn attributes_stay_with_their_elements_through_slicing() {
    // Tight patches on a grid of unit squares that grows several times
    // over (as `templates::growth_slices_patches`).
    let input = grid(12, 12, &[false, true], false, &[7, 30]);
    let factors = CapacityFactors {
        elements: 1.0,
        patches: 64.0,
    };
    let slices = run_checked(
        Schedule::Racing,
        &input,
        16,
        factors,
        SplitLongEdges::new(0.6),
    )
    .unwrap();
    assert!(
        slices > 0,
        "no patch sliced: the test does not cover slicing"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(24)))]

    /// Random cavities on random meshes (grids with holes, tori, fans,
    /// non-manifold edges, isolated vertices, shuffled) at small patch
    /// sizes, racing or deterministic: after every round, every surviving
    /// element's attributes are its input values and it is still the
    /// input's element; new elements read zero.
    #[test]
    fn attributes_follow_their_elements(
        input in any_mesh(),
        operation in 0u8..3,
        patch_size in prop::sample::select(vec![4u32, 8, 16]),
        racing in any::<bool>(),
    ) {
        let schedule = if racing { Schedule::Racing } else { Schedule::Deterministic };
        let median = median_edge_length(&input);
        let ran = match operation {
            0 => run_checked(schedule, &input, patch_size, TIGHT, SplitLongEdges::new(median * 0.7)),
            1 => run_checked(schedule, &input, patch_size, TIGHT, SplitLargeFaces { max_area: median * median * 0.3 }),
            _ => run_checked(schedule, &input, patch_size, TIGHT, CollapseShortEdges { min_length: median }),
        };
        prop_assert!(ran.is_ok(), "{}", ran.unwrap_err());
    }
}

#[test]
fn reductions_match_serial_sums() {
    let input = grid(20, 15, &[true, false, false], false, &[4, 50, 51]);
    let (mut m, a) = with_values(&input, 16, CapacityFactors::default());
    let mut layout_more = m.attributes().clone();
    assert!(layout_more.vertex::<f32, 3>("point").is_err());
    let vs = m.sources(Kind::Vertex);
    let fs = m.sources(Kind::Face);
    let points: Vec<[f32; 3]> = vs.iter().map(|&s| point_of(s)).collect();
    let dot: f64 = points
        .iter()
        .flat_map(|p| p.iter().map(|&x| x as f64 * x as f64))
        .sum();
    let tag_sum: f64 = vs.iter().map(|&s| tag_of(s)[0] as f64).sum();
    let face_max = fs.iter().map(|&s| face_of(s)[1]).fold(f64::MIN, f64::max);
    let face_dot: f64 = fs
        .iter()
        .map(|&s| face_of(s).iter().map(|x| x * x).sum::<f64>())
        .sum();
    let backend = test_backend();
    let got = backend
        .run_rounds(
            &mut m,
            |r| -> Result<_, RunError> {
                let d = r.dot(&a.point, &a.point)?;
                let n = r.norm(&a.point)?;
                let s = r.sum(&a.tag)?;
                let mx = r.max(&a.face)?;
                let fd = r.dot(&a.face, &a.face)?;
                // Each update returns the new y · y, as a dot product
                // after it gives it.
                let tripled = r.axpy(2.0, &a.point, &a.point)?;
                let after = r.dot(&a.point, &a.point)?;
                assert_eq!(tripled.to_bits(), after.to_bits());
                let wrong = r.axpy(1.0, &a.tag, &a.tag).is_err();
                // y ← x + alpha y with x = y: halves the tripled points.
                let halved = r.xpay(&a.point, -0.5, &a.point)?;
                assert_eq!(halved.to_bits(), r.dot(&a.point, &a.point)?.to_bits());
                let wrong = wrong && r.xpay(&a.tag, 0.0, &a.tag).is_err();
                // A hand-made reduction past the attribute words is refused.
                let past = AttrWords {
                    kind: 0,
                    offset: u32::MAX,
                    scalar: 1,
                    components: 1,
                };
                let wild = Reduction {
                    op: ReduceOp::Axpy as u32,
                    reserved: 0,
                    x: past,
                    y: past,
                    alpha: 1.0,
                    w: past,
                };
                assert!(matches!(r.reduce(&wild), Err(RunError::Attribute(_))));
                Ok((d, n, s, mx, fd, after, wrong))
            },
            |e| e,
        )
        .expect("reductions")
        .value;
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs().max(1.0);
    assert!(close(got.0, dot), "{} vs {dot}", got.0);
    assert!(close(got.1, dot.sqrt()), "{} vs {}", got.1, dot.sqrt());
    assert!(close(got.2, tag_sum), "{} vs {tag_sum}", got.2);
    assert_eq!(got.3, face_max);
    assert!(close(got.4, face_dot), "{} vs {face_dot}", got.4);
    assert!(close(got.5, 9.0 * dot), "3x: {} vs {}", got.5, 9.0 * dot);
    assert!(got.6, "axpy and xpay on u32 values are refused");
    let halved = m.attribute(&a.point).unwrap();
    for (p, &s) in halved.iter().zip(&vs) {
        assert_eq!(*p, point_of(s).map(|x| 3.0 * x * 0.5));
    }
}

/// The weighted updates of preconditioned conjugate gradients
/// (`Rounds::weighted_axpy`, `Rounds::weighted_xpay`) match a serial
/// computation in `f64` of the same `f32` values, and refuse a weight of
/// another kind.
#[test]
fn weighted_updates_match_serial_sums() {
    let input = grid(12, 9, &[true, false], false, &[5, 20]);
    let mut layout = AttributeLayout::new();
    let x = layout.vertex::<f32, 3>("x").unwrap();
    let y = layout.vertex::<f32, 3>("y").unwrap();
    let w = layout.vertex::<f32, 1>("w").unwrap();
    let face_w = layout.face::<f32, 1>("face_w").unwrap();
    let mut m =
        DynamicMesh::with_attributes(&input, 8, CapacityFactors::default(), &layout).expect("mesh");
    let vs = m.sources(Kind::Vertex);
    let x_of = |s: u32| [s as f32 * 0.5, 1.0 - s as f32, 0.25];
    let y_of = |s: u32| [0.75, s as f32, -(s as f32) * 0.125];
    let w_of = |s: u32| 1.0 / (1.0 + s as f32);
    m.set_attribute(&x, &vs.iter().map(|&s| x_of(s)).collect::<Vec<_>>())
        .unwrap();
    m.set_attribute(&y, &vs.iter().map(|&s| y_of(s)).collect::<Vec<_>>())
        .unwrap();
    m.set_attribute(&w, &vs.iter().map(|&s| [w_of(s)]).collect::<Vec<_>>())
        .unwrap();
    // y ← 2 x + y, Σ w |y|²; then y ← w x - 0.5 y, Σ |y|².
    let (mut axpy, mut xpay) = (0.0f64, 0.0f64);
    let want: Vec<[f32; 3]> = vs
        .iter()
        .map(|&s| {
            let (xs, ys, ws) = (x_of(s), y_of(s), f64::from(w_of(s)));
            let mid = [0, 1, 2].map(|k| (2.0 * f64::from(xs[k]) + f64::from(ys[k])) as f32);
            axpy += ws
                * mid
                    .iter()
                    .map(|&v| f64::from(v) * f64::from(v))
                    .sum::<f64>();
            let y = [0, 1, 2].map(|k| (ws * f64::from(xs[k]) - 0.5 * f64::from(mid[k])) as f32);
            xpay += y.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>();
            y
        })
        .collect();
    let backend = test_backend();
    let got = backend
        .run_rounds(
            &mut m,
            |r| -> Result<_, RunError> {
                let a = r.weighted_axpy(2.0, &x, &y, &w)?;
                let b = r.weighted_xpay(&x, -0.5, &y, &w)?;
                let refused = r.weighted_axpy(1.0, &x, &y, &face_w).is_err();
                Ok((a, b, refused))
            },
            |e| e,
        )
        .expect("weighted updates")
        .value;
    let close = |p: f64, q: f64| (p - q).abs() <= 1e-9 * q.abs().max(1.0);
    assert!(close(got.0, axpy), "weighted axpy: {} vs {axpy}", got.0);
    assert!(close(got.1, xpay), "weighted xpay: {} vs {xpay}", got.1);
    assert!(got.2, "a face weight on vertex operands is refused");
    let layout = m.attributes().clone();
    assert!(
        cavity::attributes::weighted_reduction(&layout, ReduceOp::Dot, &x, &y, &w, 0.0).is_err(),
        "a dot product takes no weight"
    );
    for (got, want) in m.attribute(&y).unwrap().iter().zip(&want) {
        for k in 0..3 {
            assert!(
                (got[k] - want[k]).abs() <= 1e-6 * want[k].abs().max(1.0),
                "{got:?} vs {want:?}"
            );
        }
    }
}

/// `set_attributes` writes several attributes of every kind at once: the
/// same words as one `set_attribute` each (owners and ribbon copies); a
/// wrong length is refused by name and the attributes before it stay set.
#[test]
fn several_attributes_at_once_write_what_one_at_a_time_writes() {
    let input = shuffle(&grid(9, 7, &[true, false], false, &[4, 11]), 5);
    let (one_by_one, a) = with_values(&input, 8, CapacityFactors::default());
    let (layout, _) = Attrs::layout();
    let mut m =
        DynamicMesh::with_attributes(&input, 8, CapacityFactors::default(), &layout).expect("mesh");
    let set = |kind| m.sources(kind);
    let (vs, es, fs) = (set(Kind::Vertex), set(Kind::Edge), set(Kind::Face));
    m.set_attributes(|w| {
        w.set(&a.face, &fs.iter().map(|&s| face_of(s)).collect::<Vec<_>>())?;
        w.set(
            &a.point,
            &vs.iter().map(|&s| point_of(s)).collect::<Vec<_>>(),
        )?;
        w.set(&a.edge, &es.iter().map(|&s| edge_of(s)).collect::<Vec<_>>())?;
        w.set(&a.tag, &vs.iter().map(|&s| tag_of(s)).collect::<Vec<_>>())
    })
    .unwrap();
    for kind in Kind::ALL {
        assert_eq!(m.attr_words(kind), one_by_one.attr_words(kind), "{kind:?}");
    }
    let err = m
        .set_attributes(|w| {
            w.set(&a.tag, &vec![[7]; vs.len()])?;
            w.set(&a.point, &[[0.0; 3]])
        })
        .unwrap_err();
    assert!(matches!(err, AttributeError::Length { .. }), "{err}");
    assert!(m.attribute(&a.tag).unwrap().iter().all(|&t| t == [7]));
}
