//! Volumetric Catmull-Clark subdivision checked from its definition
//! (issue 53 items 2 and 5):
//!
//! - the positions of one level of the plain rules ([`subdivide`] on the
//!   test backend, `CAVITY_TEST_DEVICE`) against [`joy_maccracken`], an
//!   evaluation of the rules written here from the mesh's elements as
//!   plain vertex lists, with its own adjacency, in `f64`;
//! - validity by the corner Jacobians of every hexahedron
//!   ([`hex_corners`], written here from the cells' outward face loops):
//!   each of the eight corners must have a positive determinant, which a
//!   tangled cell of positive volume fails;
//! - on real TetGen and Gmsh meshes (`tests/data/bunny-tetgen.*`, a piece
//!   of it for two levels, `tests/data/mixed-4.1.msh`), a perturbed
//!   hexahedral grid and two non-manifold pairs of tetrahedra.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use cavity_tests::test_backend;
use cavity_volume::io::read_volume;
use cavity_volume::quality::Validity;
use cavity_volume::signed::{index, is_negative};
use cavity_volume::subdivide::{subdivide, subdivide_valid};
use cavity_volume::{CellVertices, VolumeMesh};

mod grid;
use grid::grid;

/// A mesh as plain lists, numbered as the library numbers its elements
/// (so that the new vertices can be matched: old vertices, then a point
/// per edge, face and cell).
struct Lists {
    /// Vertex positions, in `f64`.
    points: Vec<[f64; 3]>,
    /// Each edge's two vertices.
    edges: Vec<[u32; 2]>,
    /// Each face's vertex loop, in the face's own orientation.
    faces: Vec<Vec<u32>>,
    /// Each cell's faces, each with whether the cell uses it reversed.
    cells: Vec<Vec<(u32, bool)>>,
}

impl Lists {
    /// The lists of `m`: its edges, the loop of each face read off the
    /// tails of its oriented edges, and each cell's signed faces.
    fn of(m: &VolumeMesh) -> Lists {
        let edges = m.edges().to_vec();
        let d2 = m.d2();
        let faces = (0..d2.rows())
            .map(|f| {
                d2.row(f)
                    .iter()
                    .map(|&x| {
                        let [a, b] = edges[index(x) as usize];
                        if is_negative(x) { b } else { a }
                    })
                    .collect()
            })
            .collect();
        let d3 = m.d3();
        let cells = (0..d3.rows())
            .map(|c| {
                d3.row(c)
                    .iter()
                    .map(|&x| (index(x), is_negative(x)))
                    .collect()
            })
            .collect();
        Lists {
            points: m.positions().iter().map(|p| p.map(f64::from)).collect(),
            edges,
            faces,
            cells,
        }
    }

    /// The outward vertex loops of cell `c`'s faces (a face the cell uses
    /// reversed read backwards).
    fn outward_loops(&self, c: usize) -> Vec<Vec<u32>> {
        self.cells[c]
            .iter()
            .map(|&(f, reversed)| {
                let mut l = self.faces[f as usize].clone();
                if reversed {
                    l.reverse();
                }
                l
            })
            .collect()
    }
}

/// `a + b`.
fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// `a - b`.
fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `a * s`.
fn scale(a: [f64; 3], s: f64) -> [f64; 3] {
    a.map(|x| x * s)
}

/// `det(a, b, c)`.
fn det(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> f64 {
    a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
        + a[2] * (b[0] * c[1] - b[1] * c[0])
}

/// The mean of `points[i]` over `indices` (panics on none: every mean
/// the rules take is over a non-empty set).
fn mean(points: &[[f64; 3]], indices: impl IntoIterator<Item = usize>) -> [f64; 3] {
    let (mut sum, mut n) = ([0.0; 3], 0usize);
    for i in indices {
        sum = add(sum, points[i]);
        n += 1;
    }
    assert!(n > 0, "a mean over no points");
    scale(sum, 1.0 / n as f64)
}

/// The positions of one level of volumetric Catmull-Clark subdivision of
/// `l`, from the definition, numbered as the library numbers them: each
/// vertex point, then each edge, face and cell point.
///
/// Centroids are the averages of the distinct vertices of a cell or face;
/// `M` is an edge's midpoint.
///
/// Inside (Joy and MacCracken, "The Refinement Rules for Catmull-Clark
/// Solids", 1996, as the paper's section 4.3 cites them; its eqs. 5 and 8
/// for cell and face points): cell point = the centroid; face point = the
/// average of the face's centroid and the mean of its two cells'
/// centroids; edge point = `(C + 2A + (n - 3)M) / n`, `n` the edge's
/// faces, `C` and `A` the mean centroid of its cells and of its faces;
/// vertex point = `(C + 3A + 3M + P) / 8`, the mean centroids of its cells
/// and faces and mean midpoint of its edges, `P` the vertex. The property
/// that defines these rules, tricubic B-spline refinement on a regular
/// grid (with centroids, not the new face and cell points, as `C` and
/// `A`), is checked for this function by
/// [`the_oracle_reproduces_tricubic_b_spline_refinement`] without the
/// library.
///
/// On the boundary (a face of one cell, an edge of boundary faces, a
/// vertex of boundary edges): the surface Catmull-Clark rules (Catmull and
/// Clark 1978) over the boundary faces, so that the boundary is subdivided
/// as a Catmull-Clark surface. The paper states this for faces (eq. 8:
/// the face centre on the boundary, "as in Catmull-Clark subdivision
/// surfaces") and gives no boundary formula for edges and vertices
/// ("computed in a similar manner", deferring to Joy and MacCracken, whose
/// report is not at hand here); the surface rules are the ones
/// `cavity_volume::subdivide` documents: face point = centroid; edge
/// point = `(M + A_b) / 2`, `A_b` the mean centroid of its two boundary
/// faces; vertex point = `(Q + 2R + (n - 3)P) / n` over its `n` boundary
/// edges, `Q` the mean centroid of its boundary faces, `R` the mean
/// midpoint of its boundary edges. Creases, which neither source defines
/// for solids, follow the library's documented convention: an edge with
/// a number of boundary faces other than 0 or 2 keeps its midpoint, and a
/// vertex on such an edge, or with fewer than three boundary edges, stays
/// where it is.
fn joy_maccracken(l: &Lists) -> Vec<[f64; 3]> {
    let (nv, ne, nf, nc) = (l.points.len(), l.edges.len(), l.faces.len(), l.cells.len());
    let p = &l.points;
    let edge_of: HashMap<[u32; 2], usize> = (l.edges.iter().enumerate())
        .map(|(e, &[a, b])| ([a.min(b), a.max(b)], e))
        .collect();
    // Adjacency, from the lists alone.
    let mut face_cells = vec![Vec::new(); nf];
    let mut cell_vertices = vec![BTreeSet::new(); nc];
    let mut edge_cells = vec![BTreeSet::new(); ne];
    let mut edge_faces = vec![Vec::new(); ne];
    let mut vertex_edges = vec![Vec::new(); nv];
    let mut vertex_faces = vec![Vec::new(); nv];
    let mut vertex_cells = vec![Vec::new(); nv];
    for (e, &[a, b]) in l.edges.iter().enumerate() {
        vertex_edges[a as usize].push(e);
        vertex_edges[b as usize].push(e);
    }
    let face_edges: Vec<Vec<usize>> = (l.faces.iter())
        .map(|lp| {
            (0..lp.len())
                .map(|i| {
                    let (a, b) = (lp[i], lp[(i + 1) % lp.len()]);
                    edge_of[&[a.min(b), a.max(b)]]
                })
                .collect()
        })
        .collect();
    for (f, lp) in l.faces.iter().enumerate() {
        for &v in lp {
            vertex_faces[v as usize].push(f);
        }
        for &e in &face_edges[f] {
            edge_faces[e].push(f);
        }
    }
    for (c, faces) in l.cells.iter().enumerate() {
        for &(f, _) in faces {
            face_cells[f as usize].push(c);
            cell_vertices[c].extend(l.faces[f as usize].iter().map(|&v| v as usize));
            for &e in &face_edges[f as usize] {
                edge_cells[e].insert(c);
            }
        }
        for &v in &cell_vertices[c] {
            vertex_cells[v].push(c);
        }
    }
    let cell_centroid: Vec<[f64; 3]> = (cell_vertices.iter())
        .map(|vs| mean(p, vs.iter().copied()))
        .collect();
    let face_centroid: Vec<[f64; 3]> = (l.faces.iter())
        .map(|lp| mean(p, lp.iter().map(|&v| v as usize)))
        .collect();
    let midpoint: Vec<[f64; 3]> = (l.edges.iter())
        .map(|&[a, b]| scale(add(p[a as usize], p[b as usize]), 0.5))
        .collect();
    let boundary_face: Vec<bool> = (face_cells.iter())
        .map(|cs| {
            assert!(matches!(cs.len(), 1 | 2), "a face of {} cells", cs.len());
            cs.len() == 1
        })
        .collect();
    let boundary_faces_at = |e: usize| edge_faces[e].iter().filter(|&&f| boundary_face[f]);
    let crease = |e: usize| !matches!(boundary_faces_at(e).count(), 0 | 2);
    let boundary_edge = |e: usize| boundary_faces_at(e).count() == 2;

    let mut out = Vec::with_capacity(nv + ne + nf + nc);
    for (v, &here) in p.iter().enumerate() {
        let edges = &vertex_edges[v];
        let on_boundary: Vec<usize> = edges
            .iter()
            .copied()
            .filter(|&e| boundary_edge(e))
            .collect();
        out.push(if edges.iter().any(|&e| crease(e)) {
            here
        } else if !on_boundary.is_empty() {
            let n = on_boundary.len();
            if n < 3 {
                here
            } else {
                let faces = vertex_faces[v]
                    .iter()
                    .copied()
                    .filter(|&f| boundary_face[f]);
                let q = mean(&face_centroid, faces);
                let r = mean(&midpoint, on_boundary.iter().copied());
                let sum = add(add(q, scale(r, 2.0)), scale(here, n as f64 - 3.0));
                scale(sum, 1.0 / n as f64)
            }
        } else if vertex_cells[v].is_empty() {
            here
        } else {
            let c = mean(&cell_centroid, vertex_cells[v].iter().copied());
            let a = mean(&face_centroid, vertex_faces[v].iter().copied());
            let m = mean(&midpoint, edges.iter().copied());
            scale(add(add(c, scale(a, 3.0)), add(scale(m, 3.0), here)), 0.125)
        });
    }
    for e in 0..ne {
        let m = midpoint[e];
        out.push(match boundary_faces_at(e).count() {
            0 => {
                let n = edge_faces[e].len() as f64;
                let c = mean(&cell_centroid, edge_cells[e].iter().copied());
                let a = mean(&face_centroid, edge_faces[e].iter().copied());
                scale(add(add(c, scale(a, 2.0)), scale(m, n - 3.0)), 1.0 / n)
            }
            2 => scale(
                add(m, mean(&face_centroid, boundary_faces_at(e).copied())),
                0.5,
            ),
            _ => m,
        });
    }
    for f in 0..nf {
        out.push(if boundary_face[f] {
            face_centroid[f]
        } else {
            let cells = mean(&cell_centroid, face_cells[f].iter().copied());
            scale(add(face_centroid[f], cells), 0.5)
        });
    }
    out.extend(cell_centroid);
    out
}

/// The largest distance between a position of `got` and the same vertex
/// of `want`, over the diagonal of `want`'s bounding box, and the vertex
/// where it is.
fn relative_error(got: &[[f32; 3]], want: &[[f64; 3]]) -> (f64, usize) {
    assert_eq!(got.len(), want.len(), "one position per new vertex");
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for q in want {
        for k in 0..3 {
            lo[k] = lo[k].min(q[k]);
            hi[k] = hi[k].max(q[k]);
        }
    }
    let d = sub(hi, lo);
    let size = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    let mut worst = (0.0, 0);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let e = sub(g.map(f64::from), *w);
        let err = (e[0] * e[0] + e[1] * e[1] + e[2] * e[2]).sqrt() / size;
        if err > worst.0 || err.is_nan() {
            worst = (err, i);
        }
    }
    worst
}

/// One level of the plain rules of `m` on the test backend, compared with
/// [`joy_maccracken`] at every new vertex to `1e-5` of the mesh's size;
/// returns the new mesh.
fn check_one_level(what: &str, m: &VolumeMesh) -> VolumeMesh {
    let next = subdivide(&test_backend(), m, 1).expect("subdivides");
    let want = joy_maccracken(&Lists::of(m));
    let (err, at) = relative_error(next.positions(), &want);
    let [v, e, f, _] = m.counts();
    assert!(
        err < 1e-5,
        "{what}: new vertex {at} ({} of vertices {v}, edges {e}, faces {f}) is {:?}, the rules give {:?} (relative error {err:e})",
        match at {
            i if i < v => "a vertex point",
            i if i < v + e => "an edge point",
            i if i < v + e + f => "a face point",
            _ => "a cell point",
        },
        next.positions()[at],
        want[at],
    );
    next
}

/// The determinant at every corner of every hexahedron of `l` (a cell of
/// six quadrilaterals, eight vertices, three faces at each): at vertex
/// `v`, with `a` and `b` its predecessor and successor in the outward
/// loop of one of its faces (counter-clockwise seen from outside) and `c`
/// its third neighbour in the cell, `det(a - v, b - v, c - v)`, positive
/// at every corner of a valid hexahedron (the corner's three edges form a
/// right-handed frame). Returns `(cell, vertex, determinant)` per corner;
/// other cells are skipped.
fn hex_corners(l: &Lists) -> Vec<(usize, u32, f64)> {
    let mut out = Vec::new();
    for c in 0..l.cells.len() {
        let loops = l.outward_loops(c);
        if loops.len() != 6 || loops.iter().any(|lp| lp.len() != 4) {
            continue;
        }
        let vertices: BTreeSet<u32> = loops.iter().flatten().copied().collect();
        assert_eq!(
            vertices.len(),
            8,
            "cell {c}: six quadrilaterals, eight vertices"
        );
        for &v in &vertices {
            // (predecessor, successor) of `v` in each face at `v`.
            let wedges: Vec<[u32; 2]> = (loops.iter())
                .filter_map(|lp| {
                    let i = lp.iter().position(|&x| x == v)?;
                    Some([lp[(i + 3) % 4], lp[(i + 1) % 4]])
                })
                .collect();
            assert_eq!(wedges.len(), 3, "cell {c}: three faces at vertex {v}");
            let neighbours: BTreeSet<u32> = wedges.iter().flatten().copied().collect();
            assert_eq!(neighbours.len(), 3, "cell {c}: three edges at vertex {v}");
            let [a, b] = wedges[0];
            let third = neighbours.iter().copied().find(|&x| x != a && x != b);
            let at = |x: u32| l.points[x as usize];
            let o = at(v);
            let edge = |x: u32| sub(at(x), o);
            let d = det(edge(a), edge(b), edge(third.expect("a third neighbour")));
            out.push((c, v, d));
        }
    }
    out
}

/// The hexahedra of `l` with a corner whose determinant is not positive
/// (NaN counts), in cell order, without repeats.
fn tangled_hexahedra(l: &Lists) -> Vec<usize> {
    let mut bad: Vec<usize> = (hex_corners(l).into_iter())
        .filter(|&(_, _, d)| d <= 0.0 || d.is_nan())
        .map(|(c, _, _)| c)
        .collect();
    bad.dedup();
    bad
}

/// The signed volume of cell `c` of `l` by the divergence theorem, each
/// outward face a fan of triangles about its centroid.
fn volume(l: &Lists, c: usize) -> f64 {
    let mut v = 0.0;
    for lp in l.outward_loops(c) {
        let centre = mean(&l.points, lp.iter().map(|&x| x as usize));
        for i in 0..lp.len() {
            let (a, b) = (
                l.points[lp[i] as usize],
                l.points[lp[(i + 1) % lp.len()] as usize],
            );
            v += det(centre, a, b) / 6.0;
        }
    }
    v
}

/// The file `name` of this crate's test data.
fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The TetGen mesh of the repaired bunny scan: its positions and cells.
fn bunny_cells() -> (Vec<[f32; 3]>, Vec<CellVertices>) {
    let m = read_volume(&data("bunny-tetgen.node"))
        .expect("the bunny reads")
        .oriented();
    (m.positions, m.cells)
}

/// The mesh of `cells` over `positions`.
fn mesh(positions: Vec<[f32; 3]>, cells: &[CellVertices]) -> VolumeMesh {
    VolumeMesh::from_cells(positions, cells).expect("the mesh builds")
}

/// The first `count` tetrahedra of `cells` reached from tetrahedron 0
/// across shared faces (breadth first): a connected piece of the bunny,
/// with a ragged boundary (edges and vertices where the piece is pinched
/// are non-manifold there).
fn piece(cells: &[CellVertices], count: usize) -> Vec<CellVertices> {
    let tets: Vec<[u32; 4]> = (cells.iter())
        .map(|c| match c {
            CellVertices::Tetrahedron(t) => *t,
            other => panic!("TetGen writes tetrahedra, not {other:?}"),
        })
        .collect();
    let mut by_face: HashMap<[u32; 3], Vec<usize>> = HashMap::new();
    let face_keys = |t: [u32; 4]| {
        (0..4).map(move |skip| {
            let mut k: Vec<u32> = (0..4).filter(|&i| i != skip).map(|i| t[i]).collect();
            k.sort_unstable();
            [k[0], k[1], k[2]]
        })
    };
    for (i, &t) in tets.iter().enumerate() {
        for k in face_keys(t) {
            by_face.entry(k).or_default().push(i);
        }
    }
    let mut taken = vec![false; tets.len()];
    let mut order = vec![0usize];
    taken[0] = true;
    let mut next = 0;
    while next < order.len() && order.len() < count {
        for k in face_keys(tets[order[next]]) {
            for &j in &by_face[&k] {
                if !taken[j] && order.len() < count {
                    taken[j] = true;
                    order.push(j);
                }
            }
        }
        next += 1;
    }
    order.into_iter().map(|i| cells[i].clone()).collect()
}

#[test]
fn the_oracle_reproduces_tricubic_b_spline_refinement() {
    // Away from the boundary, Joy and MacCracken's rules are the
    // refinement of the tricubic B-spline on a regular grid: per axis a
    // vertex takes (1/8, 6/8, 1/8) of its row and an edge's midpoint
    // (1/2, 1/2). The oracle must give that for every inner element of a
    // 4³ grid (positions are arbitrary control points: a hash of the
    // vertex, not a grid, so no linear precision hides a wrong weight).
    let n = 4u32;
    let (positions, cells) = grid([n, n, n], 0.3, 5, |_| true, |_| true);
    let m = mesh(positions, &cells);
    let l = Lists::of(&m);
    let want = joy_maccracken(&l);
    let id = |x: u32, y: u32, z: u32| (x + (n + 1) * (y + (n + 1) * z)) as usize;
    // The tensor-product stencil about the grid point `2 * origin + twice`
    // (half-integer coordinates doubled): even → vertex weights, odd →
    // midpoint weights.
    let stencil = |twice: [u32; 3]| {
        let axis = |t: u32| -> Vec<(u32, f64)> {
            if t % 2 == 0 {
                vec![(t / 2 - 1, 0.125), (t / 2, 0.75), (t / 2 + 1, 0.125)]
            } else {
                vec![(t / 2, 0.5), (t / 2 + 1, 0.5)]
            }
        };
        let mut sum = [0.0; 3];
        for (x, wx) in axis(twice[0]) {
            for (y, wy) in axis(twice[1]) {
                for (z, wz) in axis(twice[2]) {
                    sum = add(sum, scale(l.points[id(x, y, z)], wx * wy * wz));
                }
            }
        }
        sum
    };
    // Each new vertex's doubled grid coordinates: the sum of its element's
    // vertices' coordinates over half their number.
    let coords = |x: usize| {
        let x = x as u32;
        let (i, j, k) = (x % (n + 1), x / (n + 1) % (n + 1), x / (n + 1) / (n + 1));
        [i, j, k]
    };
    let doubled = |vs: &BTreeSet<u32>| -> [u32; 3] {
        let mut s = [0u32; 3];
        for &v in vs {
            let c = coords(v as usize);
            for k in 0..3 {
                s[k] += 2 * c[k];
            }
        }
        s.map(|x| x / vs.len() as u32)
    };
    let [nv, ne, nf, _] = m.counts();
    let mut elements: Vec<BTreeSet<u32>> = (0..nv as u32).map(|v| BTreeSet::from([v])).collect();
    elements.extend(l.edges.iter().map(|e| e.iter().copied().collect()));
    elements.extend(l.faces.iter().map(|f| f.iter().copied().collect()));
    elements.extend((0..l.cells.len()).map(|c| l.outward_loops(c).into_iter().flatten().collect()));
    assert_eq!(elements.len(), want.len());
    let mut checked = [0usize; 4];
    for (i, vs) in elements.iter().enumerate() {
        let t = doubled(vs);
        // Inner: every even coordinate strictly inside the grid.
        if t.iter().any(|&x| x % 2 == 0 && (x == 0 || x == 2 * n)) {
            continue;
        }
        let s = stencil(t);
        let e = sub(s, want[i]);
        let err = (e[0] * e[0] + e[1] * e[1] + e[2] * e[2]).sqrt();
        assert!(err < 1e-12, "element {i} {vs:?}: {:?} vs {s:?}", want[i]);
        checked[[nv, nv + ne, nv + ne + nf, usize::MAX]
            .iter()
            .position(|&end| i < end)
            .expect("an element")] += 1;
    }
    // (n - 1)³ inner vertices, 3n(n - 1)² inner edges, 3n²(n - 1) inner
    // faces, n³ cells.
    assert_eq!(checked, [27, 108, 144, 64]);
}

#[test]
fn one_level_matches_the_rules_on_the_bunny() {
    let (positions, cells) = bunny_cells();
    let m = mesh(positions, &cells);
    let next = check_one_level("the bunny", &m);
    assert_eq!(next.counts()[3], 4 * cells.len());
}

#[test]
fn two_levels_match_the_rules_on_a_piece_of_the_bunny() {
    // The second level subdivides hexahedra with irregular vertices (the
    // first level's vertices keep their tetrahedral valences).
    let (positions, cells) = bunny_cells();
    let m = mesh(positions, &piece(&cells, 400));
    let once = check_one_level("a piece of the bunny", &m);
    let twice = check_one_level("a piece of the bunny, level 2", &once);
    assert_eq!(twice.counts()[3], 8 * 4 * 400);
}

#[test]
fn one_level_matches_the_rules_on_a_mixed_gmsh_mesh() {
    // Tetrahedra, hexahedra, prisms and pyramids; the second level reads
    // the ten-vertex cells of the pyramids' apexes.
    let m = read_volume(&data("mixed-4.1.msh"))
        .expect("the mixed mesh reads")
        .oriented();
    let m = mesh(m.positions, &m.cells);
    let once = check_one_level("the mixed mesh", &m);
    check_one_level("the mixed mesh, level 2", &once);
}

#[test]
fn one_level_matches_the_rules_on_a_perturbed_hexahedral_grid() {
    let (positions, cells) = grid([3, 3, 3], 0.2, 11, |_| true, |_| true);
    check_one_level("a perturbed grid", &mesh(positions, &cells));
}

#[test]
fn one_level_matches_the_rules_at_non_manifold_edges_and_vertices() {
    // Two tetrahedra sharing only an edge (a crease edge of four boundary
    // faces: the crease rule), and two sharing only a vertex (six boundary
    // edges there: the boundary rule over both sheets).
    let p = vec![
        [0.0, 0.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 0.1, 0.3],
        [0.4, 1.0, 0.5],
        [-1.0, 0.2, 0.6],
        [-0.3, -1.0, 0.4],
        [-0.2, -0.1, -1.0],
    ];
    let tet = |t: [u32; 4]| CellVertices::Tetrahedron(t).oriented(&p);
    let by_edge = [tet([0, 1, 2, 3]), tet([0, 1, 4, 5])];
    check_one_level("two tetrahedra at an edge", &mesh(p.clone(), &by_edge));
    let by_vertex = [tet([0, 1, 2, 3]), tet([0, 4, 5, 6])];
    check_one_level("two tetrahedra at a vertex", &mesh(p.clone(), &by_vertex));
}

#[test]
fn the_corner_check_catches_a_tangled_cell_of_positive_volume() {
    let (cube, cells) = grid([1, 1, 1], 0.0, 0, |_| true, |_| true);
    let l = Lists::of(&mesh(cube.clone(), &cells));
    let corners = hex_corners(&l);
    assert_eq!(corners.len(), 8);
    for &(_, v, d) in &corners {
        assert!((d - 1.0).abs() < 1e-12, "corner {v} of the unit cube: {d}");
    }
    assert!((volume(&l, 0) - 1.0).abs() < 1e-12);
    // Corner 0 pushed inside past the plane of its three neighbours: the
    // cell still encloses a positive volume, but it is tangled there.
    let mut dented = cube.clone();
    dented[0] = [0.7, 0.7, 0.7];
    let l = Lists::of(&mesh(dented, &cells));
    assert!(volume(&l, 0) > 0.4, "{}", volume(&l, 0));
    let bad: Vec<u32> = (hex_corners(&l).into_iter())
        .filter(|&(_, _, d)| d <= 0.0)
        .map(|(_, v, _)| v)
        .collect();
    assert_eq!(bad, [0]);
    assert_eq!(tangled_hexahedra(&l), [0]);
    // The mirror image: every corner negative.
    let mirrored: Vec<[f32; 3]> = cube.iter().map(|&[x, y, z]| [-x, y, z]).collect();
    let l = Lists::of(&mesh(mirrored, &cells));
    assert!(hex_corners(&l).iter().all(|&(_, _, d)| d < 0.0));
}

#[test]
fn every_hexahedron_corner_of_the_default_bunny_subdivision_is_positive() {
    let (positions, cells) = bunny_cells();
    let m = mesh(positions, &cells);
    let backend = test_backend();
    let kept = subdivide_valid(&backend, &m, 1, Validity::Keep, |_| ()).expect("subdivides");
    let l = Lists::of(&kept.mesh);
    assert_eq!(hex_corners(&l).len(), 8 * 4 * cells.len(), "all hexahedra");
    assert_eq!(tangled_hexahedra(&l), Vec::<usize>::new());
    // The plain rules tangle the cells the library reports inverted, and
    // the corner check finds exactly those.
    let plain = subdivide_valid(&backend, &m, 1, Validity::Plain, |_| ()).expect("subdivides");
    let report = plain.levels[0].quality;
    assert!(report.inverted > 0, "{report:?}");
    let l = Lists::of(&plain.mesh);
    let tangled = tangled_hexahedra(&l);
    assert_eq!(tangled.len(), report.inverted, "{report:?}");
    assert_eq!(tangled.first().copied(), report.first_inverted);
    // Most of them (222 of 225 on the CPU backend) still enclose a
    // positive volume: a check of the cells' volumes would pass them.
    let positive = tangled.iter().filter(|&&c| volume(&l, c) > 0.0).count();
    assert!(
        2 * positive > tangled.len(),
        "{positive} of {}",
        tangled.len()
    );
}

#[test]
fn every_hexahedron_corner_of_two_default_levels_is_positive() {
    let backend = test_backend();
    let (positions, cells) = bunny_cells();
    let bunny = mesh(positions, &piece(&cells, 400));
    let mixed = read_volume(&data("mixed-4.1.msh"))
        .expect("the mixed mesh reads")
        .oriented();
    let mixed = mesh(mixed.positions, &mixed.cells);
    for (what, m) in [("a piece of the bunny", bunny), ("the mixed mesh", mixed)] {
        let kept = subdivide_valid(&backend, &m, 2, Validity::Keep, |_| ()).expect("subdivides");
        let l = Lists::of(&kept.mesh);
        assert!(!hex_corners(&l).is_empty(), "{what}");
        assert_eq!(tangled_hexahedra(&l), Vec::<usize>::new(), "{what}");
    }
}
