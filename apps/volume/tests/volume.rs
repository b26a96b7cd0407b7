//! Volumetric meshes as ternary boundary operators (`cavity-volume`):
//! construction from cell-vertex lists, orientation, ∂∂ = 0, and the
//! transposes on the test backend against the serial transpose and
//! against relations read off the cell-vertex lists directly.
//!
//! Longer than 700 lines as one file on purpose: every file under `tests/`
//! is a binary of its own, linked against the library and loading the
//! volumetric kernels; one binary for the operators keeps the build and
//! the GPU run short.

use std::collections::{BTreeMap, BTreeSet};

use cavity::io::MeshIoError;
use cavity_tests::test_backend;
use cavity_volume::boundary::{boundary, boundary_serial, smooth, smooth_serial};
use cavity_volume::io::gmsh::MshVersion;
use cavity_volume::io::{
    CellMesh, VolumeIoError, WriteOptions, read_volume, write_volume, write_volume_with,
};
use cavity_volume::relations::{
    cell_edges, cell_vertices, compose_serial, face_vertices, face_vertices_serial,
};
use cavity_volume::signed::{encode, index, is_negative, sign};
use cavity_volume::subdivide::{subdivide, subdivide_serial};
use cavity_volume::{
    CellType, CellVertices, Operator, Relation, ResidentMesh, TernaryCsr, VolumeError, VolumeMesh,
    transpose,
};
use proptest::prelude::*;

mod grid;
use grid::grid;

/// The signed volume of cell `c` from its faces as the mesh stores them
/// (each face's loop reversed where the cell's sign is -1; fans from the
/// first vertex; the divergence theorem).
fn cell_volume(m: &VolumeMesh, c: u32) -> f64 {
    let p = |v: u32| m.positions()[v as usize].map(f64::from);
    let mut volume = 0.0;
    for &f in m.d3().row(c) {
        let mut loop_ = m.face_vertices(index(f));
        if is_negative(f) {
            loop_.reverse();
        }
        for i in 1..loop_.len() - 1 {
            let [a, b, c] = [p(loop_[0]), p(loop_[i]), p(loop_[i + 1])];
            volume += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                + a[2] * (b[0] * c[1] - b[1] * c[0]))
                / 6.0;
        }
    }
    volume
}

/// Checks ∂1∂2 = 0 and ∂2∂3 = 0 with signs, and that every cell is closed
/// and outward (positive volume) with a consistent orientation.
fn check_operators(m: &VolumeMesh) -> Result<(), String> {
    let d1 = m.d1();
    for f in 0..m.d2().rows() {
        let mut chain: BTreeMap<u32, i32> = BTreeMap::new();
        for &e in m.d2().row(f) {
            for &v in d1.row(index(e)) {
                *chain.entry(index(v)).or_default() += sign(e) * sign(v);
            }
        }
        if chain.values().any(|&x| x != 0) {
            return Err(format!("∂1∂2 of face {f}: {chain:?}"));
        }
    }
    for c in 0..m.d3().rows() {
        let mut chain: BTreeMap<u32, i32> = BTreeMap::new();
        for &f in m.d3().row(c) {
            for &e in m.d2().row(index(f)) {
                *chain.entry(index(e)).or_default() += sign(f) * sign(e);
            }
        }
        if chain.values().any(|&x| x != 0) {
            return Err(format!("∂2∂3 of cell {c}: {chain:?}"));
        }
        let volume = cell_volume(m, c);
        if volume <= 0.0 {
            return Err(format!("cell {c} has volume {volume}"));
        }
    }
    Ok(())
}

/// Row sets of `a` as (index, sign) pairs.
fn row_sets(a: &TernaryCsr) -> Vec<BTreeSet<(u32, i32)>> {
    (0..a.rows())
        .map(|r| a.row(r).iter().map(|&e| (index(e), sign(e))).collect())
        .collect()
}

/// The transposes of ∂1, ∂2 and ∂3 on the test backend against the
/// serial transpose (exactly: sorted rows), and the double transpose
/// against the operator (as sets).
fn check_transposes(m: &VolumeMesh) -> Result<(), String> {
    let backend = test_backend();
    for (name, a) in [
        ("∂1", m.d1()),
        ("∂2", m.d2().clone()),
        ("∂3", m.d3().clone()),
    ] {
        let t = transpose(&backend, &a).map_err(|e| e.to_string())?;
        if t != a.transpose_serial() {
            return Err(format!("{name}ᵀ differs from the serial transpose"));
        }
        if row_sets(&t.transpose_serial()) != row_sets(&a) {
            return Err(format!("{name}ᵀᵀ differs from {name}"));
        }
    }
    Ok(())
}

/// Per face (by its vertex set), the cells of the cell-vertex lists that
/// have it, and per edge (by its vertex pair) the faces' vertex sets that
/// have it: the relations d3 = ∂3ᵀ and d2 = ∂2ᵀ read off the input.
fn check_against_cells(m: &VolumeMesh, cells: &[CellVertices]) -> Result<(), String> {
    let key = |mut vs: Vec<u32>| {
        vs.sort_unstable();
        vs
    };
    let mut face_cells: BTreeMap<Vec<u32>, BTreeSet<u32>> = BTreeMap::new();
    let mut edge_faces: BTreeMap<[u32; 2], BTreeSet<Vec<u32>>> = BTreeMap::new();
    for (c, cell) in cells.iter().enumerate() {
        for face in cell.faces() {
            face_cells
                .entry(key(face.clone()))
                .or_default()
                .insert(c as u32);
            for (i, &a) in face.iter().enumerate() {
                let b = face[(i + 1) % face.len()];
                edge_faces
                    .entry([a.min(b), a.max(b)])
                    .or_default()
                    .insert(key(face.clone()));
            }
        }
    }
    let backend = test_backend();
    let d3 = transpose(&backend, m.d3()).map_err(|e| e.to_string())?;
    let d2 = transpose(&backend, m.d2()).map_err(|e| e.to_string())?;
    let face_key = |f: u32| key(m.face_vertices(f));
    if d3.rows() as usize != face_cells.len() || d2.rows() as usize != edge_faces.len() {
        return Err(format!(
            "{} faces and {} edges, the cells have {} and {}",
            d3.rows(),
            d2.rows(),
            face_cells.len(),
            edge_faces.len()
        ));
    }
    for f in 0..d3.rows() {
        let got: BTreeSet<u32> = d3.row(f).iter().map(|&c| index(c)).collect();
        if face_cells.get(&face_key(f)) != Some(&got) {
            return Err(format!("face {f} {:?}: cells {got:?}", face_key(f)));
        }
    }
    for (e, &[a, b]) in m.edges().iter().enumerate() {
        let got: BTreeSet<Vec<u32>> = d2
            .row(e as u32)
            .iter()
            .map(|&f| face_key(index(f)))
            .collect();
        if edge_faces.get(&[a.min(b), a.max(b)]) != Some(&got) {
            return Err(format!("edge {e} ({a}, {b}): faces {got:?}"));
        }
    }
    Ok(())
}

/// Face-vertices (exactly: each face's loop), cell-vertices and
/// cell-edges (as sets) on the test backend against the cell-vertex lists.
fn check_relations(m: &VolumeMesh, cells: &[CellVertices]) -> Result<(), String> {
    let backend = test_backend();
    let err = |e: VolumeError| e.to_string();
    let fv = face_vertices(&backend, m).map_err(err)?;
    for f in 0..fv.rows() {
        if fv.row(f) != m.face_vertices(f) {
            return Err(format!(
                "face {f}: {:?} against {:?}",
                fv.row(f),
                m.face_vertices(f)
            ));
        }
    }
    let sorted = |mut v: Vec<u32>| {
        v.sort_unstable();
        v
    };
    let cv = cell_vertices(&backend, m).map_err(err)?;
    let ce = cell_edges(&backend, m).map_err(err)?;
    for (c, cell) in cells.iter().enumerate() {
        let c = c as u32;
        if cv.row(c) != sorted(cell.vertices()) {
            return Err(format!(
                "cell {c}: vertices {:?} against {:?}",
                cv.row(c),
                cell.vertices()
            ));
        }
        let pairs: BTreeSet<[u32; 2]> = cell
            .faces()
            .iter()
            .flat_map(|f| {
                (0..f.len()).map(move |i| {
                    let (a, b) = (f[i], f[(i + 1) % f.len()]);
                    [a.min(b), a.max(b)]
                })
            })
            .collect();
        let got: BTreeSet<[u32; 2]> = ce
            .row(c)
            .iter()
            .map(|&e| {
                let [a, b] = m.edges()[e as usize];
                [a.min(b), a.max(b)]
            })
            .collect();
        if got != pairs || ce.row(c).windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!("cell {c}: edges {:?}", ce.row(c)));
        }
    }
    Ok(())
}

/// `face` rotated to start at its smallest vertex (the same for any
/// rotation of one oriented loop).
fn canonical(face: &[u32]) -> Vec<u32> {
    let k = (0..face.len()).min_by_key(|&i| face[i]).unwrap_or(0);
    face[k..].iter().chain(&face[..k]).copied().collect()
}

/// The boundary on the test backend against the boundary of the sum of
/// the cells read off the cell-vertex lists (oriented loops, their edges
/// and vertices); its own boundary is empty and it encloses the cells'
/// volume.
fn check_boundary(m: &VolumeMesh, cells: &[CellVertices]) -> Result<(), String> {
    let mut sums: BTreeMap<Vec<u32>, (Vec<u32>, i32)> = BTreeMap::new();
    for cell in cells {
        for face in cell.faces() {
            let mut key = face.clone();
            key.sort_unstable();
            let entry = sums.entry(key).or_insert_with(|| (canonical(&face), 0));
            let same = canonical(&face) == entry.0;
            entry.1 += if same { 1 } else { -1 };
        }
    }
    let outward = |(first, sum): &(Vec<u32>, i32)| {
        let mut l = first.clone();
        if *sum < 0 {
            l.reverse();
        }
        canonical(&l)
    };
    let want: BTreeSet<Vec<u32>> = sums.values().filter(|s| s.1 != 0).map(outward).collect();
    let b = boundary(&test_backend(), m).map_err(|e| e.to_string())?;
    let got: BTreeSet<Vec<u32>> = b
        .faces
        .iter()
        .map(|&f| {
            let mut l = m.face_vertices(index(f));
            if is_negative(f) {
                l.reverse();
            }
            canonical(&l)
        })
        .collect();
    if got != want || got.len() != b.faces.len() {
        return Err(format!("boundary faces {got:?} against {want:?}"));
    }
    let mut chain: BTreeMap<u32, i32> = BTreeMap::new();
    let mut edges = BTreeSet::new();
    for &f in &b.faces {
        for &e in m.d2().row(index(f)) {
            *chain.entry(index(e)).or_default() += sign(f) * sign(e);
            edges.insert(index(e));
        }
    }
    if chain.values().any(|&x| x != 0) {
        return Err("the boundary has a boundary".into());
    }
    let vertices: BTreeSet<u32> = edges.iter().flat_map(|&e| m.edges()[e as usize]).collect();
    if b.edges != edges.into_iter().collect::<Vec<_>>()
        || b.vertices != vertices.into_iter().collect::<Vec<_>>()
    {
        return Err("boundary edges or vertices differ".into());
    }
    Ok(())
}

/// Laplacian smoothing on the test backend against a serial smoothing over
/// the edges read off the cell-vertex lists: boundary vertices and
/// vertices without edges stay bit for bit.
fn check_smoothing(m: &VolumeMesh, cells: &[CellVertices], iterations: u32) -> Result<(), String> {
    let mut neighbours = vec![BTreeSet::new(); m.positions().len()];
    for cell in cells {
        for face in cell.faces() {
            for i in 0..face.len() {
                let (a, b) = (face[i], face[(i + 1) % face.len()]);
                neighbours[a as usize].insert(b);
                neighbours[b as usize].insert(a);
            }
        }
    }
    let fixed: BTreeSet<u32> = boundary(&test_backend(), m)
        .map_err(|e| e.to_string())?
        .vertices
        .into_iter()
        .collect();
    let mut p: Vec<[f64; 3]> = m.positions().iter().map(|x| x.map(f64::from)).collect();
    for _ in 0..iterations {
        let before = p.clone();
        for (v, n) in neighbours.iter().enumerate() {
            if !fixed.contains(&(v as u32)) && !n.is_empty() {
                p[v] = [0, 1, 2].map(|c| {
                    n.iter().map(|&u| before[u as usize][c]).sum::<f64>() / n.len() as f64
                });
            }
        }
    }
    let got = smooth(&test_backend(), m, iterations).map_err(|e| e.to_string())?;
    for (v, (g, w)) in got.iter().zip(&p).enumerate() {
        let moved = !fixed.contains(&(v as u32)) && !neighbours[v].is_empty();
        let ok = if moved {
            (0..3).all(|c| (f64::from(g[c]) - w[c]).abs() < 1e-4)
        } else {
            *g == m.positions()[v]
        };
        if !ok {
            return Err(format!("vertex {v}: {g:?} against {w:?}"));
        }
    }
    Ok(())
}

#[test]
fn one_cell_of_each_type_has_its_elements_and_volume() {
    let cube: Vec<[f32; 3]> = (0..8u32)
        .map(|i| [(i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2) as f32])
        .collect();
    // Corners by (x, y, z) bits: the hexahedron's order.
    let hex = [0, 1, 3, 2, 4, 5, 7, 6];
    let faces_of_hex = CellVertices::Hexahedron(hex).faces();
    let cases = [
        (
            CellVertices::Tetrahedron([0, 1, 2, 4]),
            [4, 6, 4, 1],
            1.0 / 6.0,
        ),
        (CellVertices::Hexahedron(hex), [8, 12, 6, 1], 1.0),
        (CellVertices::Prism([0, 1, 2, 4, 5, 6]), [6, 9, 5, 1], 0.5),
        (
            CellVertices::Pyramid([0, 1, 3, 2, 7]),
            [5, 8, 5, 1],
            1.0 / 3.0,
        ),
        (CellVertices::Polyhedron(faces_of_hex), [8, 12, 6, 1], 1.0),
    ];
    for (cell, counts, volume) in cases {
        let m = VolumeMesh::from_cells(cube.clone(), std::slice::from_ref(&cell)).unwrap();
        let serial = VolumeMesh::from_cells_serial(cube.clone(), std::slice::from_ref(&cell));
        assert_eq!(m, serial.unwrap());
        let used = counts[0];
        let mut got = m.counts();
        got[0] = cell.vertices().len();
        assert_eq!(got, [used, counts[1], counts[2], counts[3]], "{cell:?}");
        assert!(
            (cell_volume(&m, 0) - volume).abs() < 1e-6,
            "{cell:?}: {}",
            cell_volume(&m, 0)
        );
        check_operators(&m).unwrap();
        check_transposes(&m).unwrap();
        check_relations(&m, std::slice::from_ref(&cell)).unwrap();
        check_boundary(&m, std::slice::from_ref(&cell)).unwrap();
    }
}

#[test]
fn a_hexahedral_grid_has_the_grid_counts_and_opposite_signs_inside() {
    let (nx, ny, nz) = (4u32, 3, 2);
    let (positions, cells) = grid([nx, ny, nz], 0.05, 1, |_| true, |_| true);
    let m = VolumeMesh::from_cells(positions, &cells).unwrap();
    let edges = nx * (ny + 1) * (nz + 1) + (nx + 1) * ny * (nz + 1) + (nx + 1) * (ny + 1) * nz;
    let faces = (nx + 1) * ny * nz + nx * (ny + 1) * nz + nx * ny * (nz + 1);
    let v = ((nx + 1) * (ny + 1) * (nz + 1)) as usize;
    assert_eq!(
        m.counts(),
        [v, edges as usize, faces as usize, (nx * ny * nz) as usize]
    );
    check_operators(&m).unwrap();
    let d3 = transpose(&test_backend(), m.d3()).unwrap();
    let mut boundary = 0;
    for f in 0..d3.rows() {
        match d3.row(f) {
            [_] => boundary += 1,
            [a, b] => assert_eq!(sign(*a) + sign(*b), 0, "face {f}"),
            row => panic!("face {f} in {} cells", row.len()),
        }
    }
    assert_eq!(boundary, 2 * (nx * ny + ny * nz + nz * nx));
    check_boundary(&m, &cells).unwrap();
    check_smoothing(&m, &cells, 4).unwrap();
}

#[test]
fn a_tetrahedral_ball_has_euler_characteristic_one() {
    let (positions, cells) = grid([3, 3, 3], 0.05, 2, |_| true, |_| false);
    let serial = VolumeMesh::from_cells_serial(positions.clone(), &cells).unwrap();
    let m = VolumeMesh::from_cells(positions, &cells).unwrap();
    assert_eq!(m, serial);
    let [v, e, f, c] = m.counts().map(|x| x as i64);
    assert_eq!(v - e + f - c, 1);
    assert_eq!(c, 6 * 27);
    check_operators(&m).unwrap();
    check_transposes(&m).unwrap();
    check_against_cells(&m, &cells).unwrap();
    check_relations(&m, &cells).unwrap();
    check_boundary(&m, &cells).unwrap();
    check_smoothing(&m, &cells, 3).unwrap();
    let b = boundary(&test_backend(), &m).unwrap();
    // The surface of a ball: V - E + F = 2 (triangles).
    let [v, e, f] = [b.vertices.len(), b.edges.len(), b.faces.len()].map(|x| x as i64);
    assert_eq!(v - e + f, 2);
    assert_eq!(v, 4 * 4 * 4 - 2 * 2 * 2);
}

#[test]
fn a_pentagonal_prism_is_one_polyhedron() {
    // Faces of five vertices: the build falls back to the serial one.
    let ring = |z: f32| {
        (0..5).map(move |k| {
            let a = k as f32 * std::f32::consts::TAU / 5.0;
            [a.cos(), a.sin(), z]
        })
    };
    let positions: Vec<[f32; 3]> = ring(0.0).chain(ring(1.0)).collect();
    let mut faces = vec![vec![4, 3, 2, 1, 0], vec![5, 6, 7, 8, 9]];
    for k in 0..5 {
        let n = (k + 1) % 5;
        faces.push(vec![k, n, n + 5, k + 5]);
    }
    let cells = [CellVertices::Polyhedron(faces)];
    let m = VolumeMesh::from_cells(positions.clone(), &cells).unwrap();
    assert_eq!(m, VolumeMesh::from_cells_serial(positions, &cells).unwrap());
    assert_eq!(m.counts(), [10, 15, 7, 1]);
    check_operators(&m).unwrap();
    check_boundary(&m, &cells).unwrap();
}

#[test]
fn the_benchmark_times_every_operation() {
    let (positions, cells) = grid([3, 3, 2], 0.05, 5, |_| true, |c| c % 2 == 0);
    let m = VolumeMesh::from_cells(positions, &cells).unwrap();
    let cpu = cavity::backend::Backend::Cpu(cavity::backend::cpu::CpuBackend::new());
    let bench =
        cavity_volume::bench::tet_bench("grid", &m, &test_backend(), &cpu, 1, |_| {}).unwrap();
    assert_eq!(bench.rows.len(), 12);
    let table = bench.table();
    assert!(
        table.contains("| boundary |")
            && table.contains("| operators from cell lists |")
            && table.contains("| Catmull-Clark: one level |")
            && table.contains("bytes per cell"),
        "{table}"
    );
    let on_gpu = matches!(test_backend(), cavity::backend::Backend::Cuda(_));
    for row in &bench.rows {
        assert_eq!(row.gpu.is_some(), on_gpu, "{}", row.operation);
        assert_eq!(row.gpu_call.is_some(), on_gpu, "{}", row.operation);
        assert!(row.cpu > 0.0 && row.serial > 0.0, "{}", row.operation);
    }
}

#[test]
fn bad_cells_are_named() {
    let positions = vec![[0.0; 3]; 4];
    let far = VolumeMesh::from_cells(
        positions.clone(),
        &[CellVertices::Tetrahedron([0, 1, 2, 9])],
    );
    assert!(
        matches!(
            far,
            Err(VolumeError::VertexOutOfRange {
                cell: 0,
                vertex: 9,
                ..
            })
        ),
        "{far:?}"
    );
    let twice = VolumeMesh::from_cells(
        positions.clone(),
        &[
            CellVertices::Tetrahedron([0, 1, 2, 3]),
            CellVertices::Tetrahedron([0, 1, 1, 3]),
        ],
    );
    assert!(
        matches!(twice, Err(VolumeError::DegenerateCell { cell: 1, .. })),
        "{twice:?}"
    );
    let flat = VolumeMesh::from_cells(
        positions,
        &[CellVertices::Polyhedron(vec![vec![0, 1, 2]; 3])],
    );
    assert!(
        matches!(flat, Err(VolumeError::DegenerateCell { cell: 0, .. })),
        "{flat:?}"
    );
    assert!(TernaryCsr::new(vec![0, 2], vec![encode(0, false), encode(3, true)], 3).is_err());
    assert!(TernaryCsr::new(vec![1, 2], vec![0, 1], 3).is_err());
}

#[test]
fn a_transpose_over_millions_of_columns_scans_in_three_levels() {
    // More than 2048² columns: the scan recurses twice.
    let columns = 2048 * 2048 + 5000;
    let rows = 20_000u32;
    let mut offsets = vec![0u32];
    let mut entries = Vec::new();
    for r in 0..rows {
        for k in 0..(r % 4) {
            let c = (r as u64 * 7919 + k as u64 * 104_729) % columns as u64;
            if !entries[*offsets.last().unwrap() as usize..].contains(&(c as u32))
                && !entries[*offsets.last().unwrap() as usize..].contains(&!(c as u32))
            {
                entries.push(encode(c as u32, (r + k) % 3 == 0));
            }
        }
        offsets.push(entries.len() as u32);
    }
    let a = TernaryCsr::new(offsets, entries, columns).unwrap();
    let t = transpose(&test_backend(), &a).unwrap();
    assert_eq!(t, a.transpose_serial());
}

#[test]
fn columns_filled_from_many_blocks_come_out_sorted() {
    // Each of 64 columns gets entries from every chunk of rows, filled by
    // blocks that race: only the per-row sort orders them.
    let rows = 1_000_000u32;
    let offsets = (0..=rows).collect();
    let entries = (0..rows).map(|r| encode(r % 64, r % 3 == 0)).collect();
    let a = TernaryCsr::new(offsets, entries, 64).unwrap();
    let t = transpose(&test_backend(), &a).unwrap();
    assert_eq!(t, a.transpose_serial());
}

#[test]
fn medit_and_tetgen_files_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (positions, cells) = grid([3, 2, 2], 0.05, 7, |c| c % 4 != 1, |c| c % 3 == 0);
    let mixed = CellMesh {
        positions: positions.clone(),
        cells,
    };
    let medit = dir.path().join("mixed.mesh");
    write_volume(&medit, &mixed).unwrap();
    // MEDIT keeps the cells by type: tetrahedra, then hexahedra here.
    let mut by_type = mixed.clone();
    by_type
        .cells
        .sort_by_key(|c| matches!(c, CellVertices::Hexahedron(_)));
    assert_eq!(read_volume(&medit).unwrap(), by_type);
    let (positions, cells) = grid([2, 2, 2], 0.05, 3, |_| true, |_| false);
    let tets = CellMesh { positions, cells };
    let tetgen = dir.path().join("tets.ele");
    write_volume(&tetgen, &tets).unwrap();
    assert_eq!(read_volume(&dir.path().join("tets.node")).unwrap(), tets);
    // One record per line is read in parallel; records across lines (and
    // comments) by tokens: the same mesh.
    let node = "# points\n5 3 0 0\n0 0 0 0\n1 1 0 0 # x\n2 0 1 0\n3 0 0 1\n4 1 1 1\n";
    std::fs::write(dir.path().join("pair.node"), node).unwrap();
    std::fs::write(dir.path().join("pair.ele"), "2 4 0\n0 0 1 2 3\n1 1 2 3 4\n").unwrap();
    let lines = read_volume(&dir.path().join("pair.ele")).unwrap();
    std::fs::write(
        dir.path().join("pair.ele"),
        "2 4 0\n0 0 1\n2 3\n1 1 2 3 4\n",
    )
    .unwrap();
    assert_eq!(read_volume(&dir.path().join("pair.ele")).unwrap(), lines);
    assert_eq!(lines.cells[1], CellVertices::Tetrahedron([1, 2, 3, 4]));
    // TetGen holds tetrahedra only; nothing is written then.
    let refused = write_volume(&dir.path().join("mixed.node"), &mixed);
    assert!(
        matches!(refused, Err(VolumeIoError::Unsupported { .. })),
        "{refused:?}"
    );
    assert!(!dir.path().join("mixed.node").exists());
}

#[test]
fn bad_files_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let line = |r: Result<CellMesh, VolumeIoError>| match r {
        Err(VolumeIoError::File(MeshIoError::Syntax { line, .. })) => line,
        other => panic!("{other:?}"),
    };
    let header =
        "MeshVersionFormatted 2\nDimension 3\nVertices\n4\n0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n";
    let far = write(
        "far.mesh",
        &format!("{header}Tetrahedra\n1\n1 2 3 5 0\nEnd\n"),
    );
    assert_eq!(line(read_volume(&far)), 11);
    let word = write(
        "word.mesh",
        &format!("{header}Tetrahedra\n1\n1 2 three 4 0\nEnd\n"),
    );
    assert_eq!(line(read_volume(&word)), 11);
    let unknown = write("unknown.mesh", &format!("{header}Bubbles\n1\n"));
    assert_eq!(line(read_volume(&unknown)), 9);
    let short = write(
        "short.mesh",
        "MeshVersionFormatted 2\nDimension 3\nVertices\n2\n0 0 0 0\n",
    );
    assert!(matches!(
        read_volume(&short),
        Err(VolumeIoError::File(MeshIoError::Syntax { .. }))
    ));
    write("t.node", "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n");
    let ele = write("t.ele", "1 4 0\n0 0 1 2 4\n");
    assert_eq!(line(read_volume(&ele)), 2);
    let other = read_volume(&dir.path().join("t.xyz"));
    assert!(
        matches!(other, Err(VolumeIoError::UnknownFormat(_))),
        "{other:?}"
    );
}

#[test]
fn cells_listed_inside_out_are_oriented() {
    let cube: Vec<[f32; 3]> = (0..8u32)
        .map(|i| [(i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2) as f32])
        .collect();
    let hex = [0, 1, 3, 2, 4, 5, 7, 6];
    let mirrored = [
        CellVertices::Tetrahedron([0, 2, 1, 4]),
        CellVertices::Hexahedron([0, 2, 3, 1, 4, 6, 7, 5]),
        CellVertices::Prism([0, 2, 1, 4, 6, 5]),
        CellVertices::Pyramid([0, 2, 3, 1, 7]),
        CellVertices::Polyhedron(
            CellVertices::Hexahedron(hex)
                .faces()
                .into_iter()
                .map(|f| f.into_iter().rev().collect())
                .collect(),
        ),
    ];
    for cell in mirrored {
        assert!(cell.signed_volume(&cube) < 0.0, "{cell:?}");
        let fixed = cell.clone().oriented(&cube);
        assert!(
            (fixed.signed_volume(&cube) + cell.signed_volume(&cube)).abs() < 1e-9,
            "{fixed:?}"
        );
        let m = VolumeMesh::from_cells(cube.clone(), std::slice::from_ref(&fixed)).unwrap();
        check_operators(&m).unwrap();
    }
}

prop_compose! {
    /// A random [`grid`] of fewer than `max` cubes a side: perturbed, with
    /// holes and cavities, several components (cubes left out between
    /// them), mixed tetrahedra and hexahedra.
    fn random_grid(max: [u32; 3])(
        n in (1..max[0], 1..max[1], 1..max[2]),
        jitter in 0u64..1000,
        keep in 0u32..1000,
        hex in 0u32..1000,
    ) -> (Vec<[f32; 3]>, Vec<CellVertices>) {
        let keep_cube = |c: u32| (c.wrapping_mul(2654435761) ^ keep) % 5 != 0;
        let hex_cube = |c: u32| (c.wrapping_mul(40503) ^ hex) % 3 == 0;
        grid([n.0, n.1, n.2], 0.05, jitter, keep_cube, hex_cube)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cavity_tests::cases(24)))]

    /// Random meshes: perturbed grids with holes and cavities, several
    /// components (cubes left out between them), mixed tetrahedra and
    /// hexahedra.
    #[test]
    fn random_meshes_have_consistent_operators_and_transposes(
        (positions, cells) in random_grid([5, 5, 4]),
    ) {
        prop_assume!(!cells.is_empty());
        let serial = VolumeMesh::from_cells_serial(positions.clone(), &cells).unwrap();
        let m = VolumeMesh::from_cells(positions, &cells).unwrap();
        prop_assert_eq!(&m, &serial, "the parallel build numbers as the serial one");
        check_operators(&m).map_err(TestCaseError::fail)?;
        check_transposes(&m).map_err(TestCaseError::fail)?;
        check_against_cells(&m, &cells).map_err(TestCaseError::fail)?;
        check_relations(&m, &cells).map_err(TestCaseError::fail)?;
        check_boundary(&m, &cells).map_err(TestCaseError::fail)?;
        check_smoothing(&m, &cells, 2).map_err(TestCaseError::fail)?;
        // The serial runs of the benchmark give the same, bit for bit.
        let backend = test_backend();
        let fv = face_vertices_serial(&m);
        prop_assert_eq!(face_vertices(&backend, &m).unwrap(), fv.clone());
        prop_assert_eq!(cell_edges(&backend, &m).unwrap(), compose_serial(m.d3(), m.d2()));
        prop_assert_eq!(cell_vertices(&backend, &m).unwrap(), compose_serial(m.d3(), &fv));
        prop_assert_eq!(boundary(&backend, &m).unwrap(), boundary_serial(&m));
        prop_assert_eq!(smooth(&backend, &m, 3).unwrap(), smooth_serial(&m, 3));
    }
}

/// The counts of `m` after a level of subdivision, from its cells' face
/// loops alone (eqs. 1-4): vertices, edges, faces and cells, then the
/// entries of ∂1, ∂2 and ∂3 and of the indirect relations.
fn counts_from_loops(m: &VolumeMesh) -> [usize; 4] {
    let [v, e, f, c] = m.counts();
    let face_sizes: usize = (0..f as u32).map(|f| m.face_vertices(f).len()).sum();
    let (mut cell_faces, mut cell_edges, mut cell_vertices) = (0, 0, 0);
    for c in 0..c as u32 {
        let loops = m.cell_faces(c);
        cell_faces += loops.len();
        let mut edges = BTreeSet::new();
        let mut vertices = BTreeSet::new();
        for l in &loops {
            for i in 0..l.len() {
                let (a, b) = (l[i], l[(i + 1) % l.len()]);
                edges.insert((a.min(b), a.max(b)));
                vertices.insert(a);
            }
        }
        cell_edges += edges.len();
        cell_vertices += vertices.len();
    }
    [
        v + e + f + c,
        2 * e + face_sizes + cell_faces,
        face_sizes + cell_edges,
        cell_vertices,
    ]
}

/// Checks `levels` levels of subdivision of `m` (serially, and on the
/// test backend equal bit for bit): the counts of eqs. 1-4, closed,
/// outward cells of positive volume, quadrilateral faces, each cell's
/// faces twice its corner's faces, the Euler characteristic kept, and
/// the boundary's `n`-gons split into `n` quadrilaterals each.
fn check_subdivision(m: &VolumeMesh, levels: u32) -> Result<VolumeMesh, String> {
    let backend = test_backend();
    let mut m = m.clone();
    let euler = |m: &VolumeMesh| {
        let [v, e, f, c] = m.counts().map(|x| x as i64);
        v - e + f - c
    };
    for level in 1..=levels {
        let next = subdivide_serial(&m).map_err(|e| e.to_string())?;
        let on_backend = subdivide(&backend, &m, 1).map_err(|e| e.to_string())?;
        if on_backend != next {
            return Err(format!(
                "level {level}: the backend's mesh differs from the serial one"
            ));
        }
        if next.counts() != counts_from_loops(&m) {
            return Err(format!(
                "level {level}: counts {:?}, eqs. 1-4 give {:?}",
                next.counts(),
                counts_from_loops(&m)
            ));
        }
        check_operators(&next).map_err(|e| format!("level {level}: {e}"))?;
        if euler(&next) != euler(&m) {
            return Err(format!(
                "level {level}: Euler characteristic {}",
                euler(&next)
            ));
        }
        if let Some(f) = (0..next.d2().rows()).find(|&f| next.d2().row(f).len() != 4) {
            return Err(format!("level {level}: face {f} is not a quadrilateral"));
        }
        let corners: usize = boundary_serial(&m)
            .faces
            .iter()
            .map(|&f| m.d2().row(index(f)).len())
            .sum();
        if boundary_serial(&next).faces.len() != corners {
            return Err(format!(
                "level {level}: the boundary is not split into quadrilaterals"
            ));
        }
        m = next;
    }
    Ok(m)
}

#[test]
fn one_tetrahedron_hexahedron_and_pyramid_subdivide_into_the_known_cells() {
    let cube: Vec<[f32; 3]> = (0..8u32)
        .map(|i| [(i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2) as f32])
        .collect();
    let hex = [0, 1, 3, 2, 4, 5, 7, 6];
    // (cell, vertices after one level, hexahedra, other cells' face counts)
    let cases = [
        (CellVertices::Tetrahedron([0, 1, 2, 4]), 15, 4, vec![]),
        (CellVertices::Hexahedron(hex), 27, 8, vec![]),
        (CellVertices::Prism([0, 1, 2, 4, 5, 6]), 21, 6, vec![]),
        // Fig. 2: four hexahedra at the base, ten vertices and eight
        // quadrilaterals at the apex.
        (CellVertices::Pyramid([0, 1, 3, 2, 7]), 19, 4, vec![(10, 8)]),
    ];
    for (cell, vertices, hexahedra, others) in cases {
        let m = VolumeMesh::from_cells(cube.clone(), std::slice::from_ref(&cell)).unwrap();
        let s = check_subdivision(&m, 1).unwrap();
        assert_eq!(s.positions().len(), vertices + 8 - cell.vertices().len());
        let cells = s.cells();
        let hexes = cells
            .iter()
            .filter(|c| matches!(c, CellVertices::Hexahedron(_)))
            .count();
        assert_eq!(hexes, hexahedra, "{cell:?}");
        let mut other: Vec<(usize, usize)> = cells
            .iter()
            .filter_map(|c| match c {
                CellVertices::Polyhedron(faces) => Some((c.vertices().len(), faces.len())),
                _ => None,
            })
            .collect();
        other.sort();
        assert_eq!(other, others, "{cell:?}");
        // The recovered cell-vertex lists build the same mesh's cells, each
        // of positive volume.
        for c in &cells {
            assert!(c.signed_volume(s.positions()) > 0.0, "{c:?}");
        }
        let rebuilt = VolumeMesh::from_cells(s.positions().to_vec(), &cells).unwrap();
        assert_eq!(rebuilt.counts(), s.counts());
        check_subdivision(&m, 3).unwrap();
    }
}

#[test]
fn subdividing_a_regular_grid_reproduces_linear_positions_inside() {
    // Tricubic B-spline refinement keeps a linear field: on an unperturbed
    // grid every point made by the inside rules is the lattice point of the
    // grid of half the spacing.
    let (positions, cells) = grid([4, 4, 4], 0.05, 0, |_| true, |_| true);
    let positions: Vec<[f32; 3]> = positions.iter().map(|p| p.map(|x| x.round())).collect();
    let m = VolumeMesh::from_cells(positions, &cells).unwrap();
    let s = check_subdivision(&m, 1).unwrap();
    let [v, e, f, _] = m.counts();
    let b = boundary_serial(&m);
    let inside = |x: [f32; 3]| x.iter().all(|&c| c > 0.0 && c < 4.0);
    let centre = |vs: &[u32]| {
        let mut sum = [0.0f32; 3];
        for &v in vs {
            for (s, x) in sum.iter_mut().zip(m.positions()[v as usize]) {
                *s += x / vs.len() as f32;
            }
        }
        sum
    };
    let mut checked = 0;
    for (i, p) in s.positions().iter().enumerate() {
        let expected = if i < v {
            if b.vertices.binary_search(&(i as u32)).is_ok() {
                continue;
            }
            m.positions()[i]
        } else if i < v + e {
            let [a, c] = m.edges()[i - v];
            centre(&[a, c])
        } else if i < v + e + f {
            centre(&m.face_vertices((i - v - e) as u32))
        } else {
            centre(&CellVertices::Polyhedron(m.cell_faces((i - v - e - f) as u32)).vertices())
        };
        if !inside(expected) {
            continue;
        }
        for k in 0..3 {
            assert!(
                (p[k] - expected[k]).abs() < 1e-5,
                "point {i}: {p:?}, not {expected:?}"
            );
        }
        checked += 1;
    }
    assert!(checked > 300, "{checked}");
}

#[test]
fn open_polyhedra_are_refused() {
    let cube: Vec<[f32; 3]> = (0..8u32)
        .map(|i| [(i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2) as f32])
        .collect();
    let mut faces = CellVertices::Hexahedron([0, 1, 3, 2, 4, 5, 7, 6]).faces();
    faces.pop();
    let error = VolumeMesh::from_cells(cube, &[CellVertices::Polyhedron(faces)]).unwrap_err();
    assert!(error.to_string().contains("not closed"), "{error}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cavity_tests::cases(12)))]

    /// Two levels of subdivision of random meshes (perturbed grids with
    /// holes and cavities, several components, mixed cells).
    #[test]
    fn random_meshes_subdivide_into_closed_outward_cells(
        (positions, cells) in random_grid([4, 4, 3]),
    ) {
        prop_assume!(!cells.is_empty());
        let m = VolumeMesh::from_cells(positions, &cells).unwrap();
        check_subdivision(&m, 2).map_err(TestCaseError::fail)?;
    }
}

/// The cells of `m`, sorted (as their debug text).
fn sorted_cells(m: &CellMesh) -> Vec<String> {
    let mut cells: Vec<String> = m.cells.iter().map(|c| format!("{c:?}")).collect();
    cells.sort();
    cells
}

/// The Gmsh fixtures: the same mixed mesh written by Gmsh in each version
/// and encoding (`xtask/generators/gmsh_mesh.py mixed --n 2`).
fn gmsh_fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

#[test]
fn gmsh_files_of_each_version_and_encoding_read_alike() {
    let names = [
        "mixed-2.2.msh",
        "mixed-2.2-binary.msh",
        "mixed-4.1.msh",
        "mixed-4.1-binary.msh",
    ];
    // Gmsh writes 4.1 files by entity, 2.2 files by element: the same
    // cells, in another order.
    let first = read_volume(&gmsh_fixture(names[0])).unwrap();
    for name in &names[1..] {
        let other = read_volume(&gmsh_fixture(name)).unwrap();
        assert_eq!(other.positions, first.positions, "{name}");
        assert_eq!(sorted_cells(&other), sorted_cells(&first), "{name}");
    }
    let count = |ty: CellType| first.cells.iter().filter(|c| c.cell_type() == ty).count();
    assert_eq!(
        [
            count(CellType::Tetrahedron),
            count(CellType::Hexahedron),
            count(CellType::Prism),
            count(CellType::Pyramid),
        ],
        [174, 8, 28, 4]
    );
    let cells: Vec<CellVertices> = first
        .cells
        .iter()
        .map(|c| c.clone().oriented(&first.positions))
        .collect();
    let m = VolumeMesh::from_cells(first.positions.clone(), &cells).unwrap();
    check_operators(&m).unwrap();
    check_relations(&m, &cells).unwrap();
    check_boundary(&m, &cells).unwrap();
    // Two components (the prisms apart): Euler characteristic 2.
    let [v, e, f, c] = m.counts().map(|x| x as i64);
    assert_eq!(v - e + f - c, 2);
    // The pyramids' apexes give polyhedra of ten vertices.
    let s = check_subdivision(&m, 2).unwrap();
    assert!(
        s.cells()
            .iter()
            .any(|c| matches!(c, CellVertices::Polyhedron(_)))
    );
}

#[test]
fn every_format_and_encoding_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let mixed = read_volume(&gmsh_fixture("mixed-4.1.msh")).unwrap();
    let encodings = [
        ("a.vtk", false, MshVersion::V41),
        ("b.vtk", true, MshVersion::V41),
        ("c.msh", false, MshVersion::V22),
        ("d.msh", true, MshVersion::V22),
        ("e.msh", false, MshVersion::V41),
        ("f.msh", true, MshVersion::V41),
    ];
    for (name, binary, msh_version) in encodings {
        let path = dir.path().join(name);
        let options = WriteOptions {
            binary,
            msh_version,
        };
        write_volume_with(&path, &mixed, options).unwrap();
        let back = read_volume(&path).unwrap();
        // Gmsh writes cells by type: compare as sets.
        assert_eq!(back.positions, mixed.positions, "{name}");
        assert_eq!(sorted_cells(&back), sorted_cells(&mixed), "{name}");
    }
    // Polyhedra (a subdivided pyramid's apex cell): VTK holds them; MEDIT
    // and Gmsh refuse them and leave nothing behind.
    let cube: Vec<[f32; 3]> = (0..8u32)
        .map(|i| [(i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2) as f32])
        .collect();
    let pyramid = VolumeMesh::from_cells(cube, &[CellVertices::Pyramid([0, 1, 3, 2, 7])]).unwrap();
    let s = subdivide_serial(&pyramid).unwrap();
    let subdivided = CellMesh {
        positions: s.positions().to_vec(),
        cells: s.cells(),
    };
    for binary in [false, true] {
        let path = dir.path().join(format!("poly-{binary}.vtk"));
        let options = WriteOptions {
            binary,
            ..Default::default()
        };
        write_volume_with(&path, &subdivided, options).unwrap();
        let back = read_volume(&path).unwrap();
        assert_eq!(back, subdivided);
        let rebuilt = VolumeMesh::from_cells(back.positions, &back.cells).unwrap();
        assert_eq!(rebuilt.counts(), s.counts());
    }
    for name in ["poly.mesh", "poly.msh"] {
        let refused = write_volume(&dir.path().join(name), &subdivided);
        assert!(
            matches!(refused, Err(VolumeIoError::Unsupported { .. })),
            "{refused:?}"
        );
        assert!(!dir.path().join(name).exists());
    }
}

#[test]
fn bad_gmsh_and_vtk_files_name_the_line_or_the_element() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let line = |r: Result<CellMesh, VolumeIoError>| match r {
        Err(VolumeIoError::File(MeshIoError::Syntax { line, .. })) => line,
        other => panic!("{other:?}"),
    };
    let nodes = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n";
    let missing = write(
        "missing.msh",
        format!("{nodes}$Elements\n1\n1 4 2 1 1 1 2 3 9\n$EndElements\n").as_bytes(),
    );
    assert_eq!(line(read_volume(&missing)), 13);
    let word = write(
        "word.msh",
        format!("{nodes}$Elements\n1\n1 4 2 1 1 1 two 3 4\n$EndElements\n").as_bytes(),
    );
    assert_eq!(line(read_volume(&word)), 13);
    let quadratic = write(
        "quadratic.msh",
        format!("{nodes}$Elements\n1\n1 11 2 1 1 1 2 3 4 1 2 3 4 1 2\n$EndElements\n").as_bytes(),
    );
    let e = read_volume(&quadratic).unwrap_err();
    assert!(matches!(e, VolumeIoError::Unsupported { .. }), "{e}");
    let version = write("v3.msh", b"$MeshFormat\n3.0 0 8\n$EndMeshFormat\n");
    let e = read_volume(&version).unwrap_err();
    assert!(e.to_string().contains("2.2 and 4.1"), "{e}");
    // A binary file cut short names what it was reading.
    let whole = std::fs::read(gmsh_fixture("mixed-2.2-binary.msh")).unwrap();
    let cut = write("cut.msh", &whole[..whole.len() / 2]);
    let e = read_volume(&cut).unwrap_err();
    assert!(matches!(e, VolumeIoError::Malformed { .. }), "{e}");
    let whole = std::fs::read(gmsh_fixture("mixed-4.1.msh")).unwrap();
    let text = String::from_utf8(whole)
        .unwrap()
        .replacen("$EndNodes", "$EndNodez", 1);
    let e = read_volume(&write("bad41.msh", text.as_bytes())).unwrap_err();
    assert!(
        matches!(
            e,
            VolumeIoError::File(MeshIoError::Syntax { .. }) | VolumeIoError::Malformed { .. }
        ),
        "{e}"
    );
    let vtk = write(
        "garbage.vtk",
        b"# vtk DataFile Version 4.2\nx\nASCII\nDATASET BUBBLES\n",
    );
    assert_eq!(line(read_volume(&vtk)), 4);
    let far = write(
        "far.vtk",
        b"# vtk DataFile Version 4.2\nx\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 4 float\n0 0 0 1 0 0 0 1 0 0 0 1\nCELLS 1 5\n4 0 1 2 7\nCELL_TYPES 1\n10\n",
    );
    let e = read_volume(&far).unwrap_err();
    assert!(e.to_string().contains("cell 0"), "{e}");
}

#[test]
fn replacing_the_cells_drops_only_the_relations_through_them() {
    let (positions, cells) = grid([3, 3, 2], 0.05, 4, |_| true, |c| c % 2 == 0);
    let m = VolumeMesh::from_cells(positions, &cells).unwrap();
    let backend = test_backend();
    let mut r = ResidentMesh::upload(&backend, &m).unwrap();
    r.prepare().unwrap();
    assert!(Relation::ALL.iter().all(|&x| r.is_cached(x)));
    // Every other cell: the same faces and edges, a part of the mesh.
    let (mut offsets, mut entries) = (vec![0u32], Vec::new());
    for c in (0..m.d3().rows()).filter(|c| c % 2 == 0) {
        entries.extend_from_slice(m.d3().row(c));
        offsets.push(entries.len() as u32);
    }
    let d3 = TernaryCsr::new(offsets, entries, m.d3().columns()).unwrap();
    r.set_cells(&d3).unwrap();
    for x in Relation::ALL {
        let through_cells = x.depends_on().contains(&Operator::Cells);
        assert_eq!(r.is_cached(x), !through_cells, "{x:?}");
    }
    let part = VolumeMesh::from_operators(
        m.positions().to_vec(),
        m.edges().to_vec(),
        m.d2().clone(),
        d3,
    )
    .unwrap();
    let mut fresh = ResidentMesh::upload(&backend, &part).unwrap();
    for x in Relation::ALL {
        assert_eq!(r.relation(x).unwrap(), fresh.relation(x).unwrap(), "{x:?}");
    }
    assert_eq!(r.boundary().unwrap(), boundary_serial(&part));
    // New positions: every relation stays.
    let moved: Vec<[f32; 3]> = m
        .positions()
        .iter()
        .map(|p| [2.0 * p[0], p[1], p[2]])
        .collect();
    r.set_positions(&moved).unwrap();
    assert!(Relation::ALL.iter().all(|&x| r.is_cached(x)));
    assert_eq!(r.positions().unwrap(), moved);
    assert!(r.set_positions(&moved[1..]).is_err());
    let wrong = TernaryCsr::new(vec![0], Vec::new(), 3).unwrap();
    assert!(r.set_cells(&wrong).is_err());
}

/// `cells` made into a mixed, non-manifold, shuffled list by hashes of
/// `seed`: some hexahedra split into two prisms, some into six pyramids
/// round a new vertex at their centre (added to `positions`), some cells
/// listed twice (their faces then have three or four cells), and the
/// order shuffled.
fn mix(positions: &mut Vec<[f32; 3]>, cells: Vec<CellVertices>, seed: u64) -> Vec<CellVertices> {
    let hash = |i: usize, k: u64| {
        ((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (seed.wrapping_add(k) * 40_503))
            .wrapping_mul(2_654_435_761)
            >> 33
    };
    let mut mixed = Vec::new();
    for (i, cell) in cells.into_iter().enumerate() {
        match (&cell, hash(i, 1) % 4) {
            (CellVertices::Hexahedron(v), 0) => {
                mixed.push(CellVertices::Prism([v[0], v[1], v[2], v[4], v[5], v[6]]));
                mixed.push(CellVertices::Prism([v[0], v[2], v[3], v[4], v[6], v[7]]));
            }
            (CellVertices::Hexahedron(v), 1) => {
                let centre = v.iter().fold([0.0f32; 3], |s, &x| {
                    let p = positions[x as usize];
                    [s[0] + p[0] / 8.0, s[1] + p[1] / 8.0, s[2] + p[2] / 8.0]
                });
                let apex = positions.len() as u32;
                positions.push(centre);
                // Each outward face, reversed, is a base seen from inside.
                for face in cell.faces() {
                    let [a, b, c, d] = face[..] else {
                        unreachable!("a hexahedron's faces are quadrilaterals")
                    };
                    mixed.push(CellVertices::Pyramid([a, d, c, b, apex]));
                }
            }
            _ => mixed.push(cell.clone()),
        }
        if hash(i, 2) % 7 == 0 {
            mixed.push(cell);
        }
    }
    let mut order: Vec<usize> = (0..mixed.len()).collect();
    order.sort_by_key(|&i| hash(i, 3));
    order.into_iter().map(|i| mixed[i].clone()).collect()
}

/// The mesh built on the test backend from `cells` ([`ResidentMesh::from_cells`])
/// against the host's build, and the cell lists formed there against the
/// host's.
fn check_built_on_backend(positions: &[[f32; 3]], cells: &[CellVertices]) -> Result<(), String> {
    let backend = test_backend();
    let host = VolumeMesh::from_cells(positions.to_vec(), cells).map_err(|e| e.to_string())?;
    let built = ResidentMesh::from_cells(&backend, positions, cells)
        .and_then(ResidentMesh::download)
        .map_err(|e| e.to_string())?;
    if built != host {
        return Err(format!(
            "built on the backend: counts {:?}, on the host {:?}",
            built.counts(),
            host.counts()
        ));
    }
    let mut resident = ResidentMesh::upload(&backend, &host).map_err(|e| e.to_string())?;
    let lists = resident.cell_lists().map_err(|e| e.to_string())?;
    if lists != Some(host.cells()) {
        return Err("the cell lists formed on the backend differ from the host's".into());
    }
    // The boundary's outward loops, gathered there.
    let (b, offsets, loops) = resident.boundary_loops().map_err(|e| e.to_string())?;
    if b != boundary_serial(&host) || offsets.len() != b.faces.len() + 1 {
        return Err("the boundary with its loops differs from the host's".into());
    }
    for (i, &f) in b.faces.iter().enumerate() {
        let mut l = host.face_vertices(index(f)).to_vec();
        if is_negative(f) {
            l.reverse();
        }
        if loops[offsets[i] as usize..offsets[i + 1] as usize] != l[..] {
            return Err(format!("boundary face {f}'s loop differs from the host's"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cavity_tests::cases(24)))]

    /// Random mixed meshes (perturbed grids with holes, cavities and
    /// several components; tetrahedra, hexahedra, prisms and pyramids;
    /// cells listed twice; shuffled) built on the backend as on the host,
    /// numbered alike, and their cell lists formed there as on the host.
    #[test]
    fn random_mixed_meshes_build_on_the_backend_as_on_the_host(
        (positions, cells) in random_grid([5, 5, 4]),
        seed in 0u64..1000,
    ) {
        prop_assume!(!cells.is_empty());
        let mut positions = positions;
        let cells = mix(&mut positions, cells, seed);
        check_built_on_backend(&positions, &cells).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn real_meshes_build_on_the_backend_as_on_the_host() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for name in ["bunny-tetgen.node", "mixed-4.1.msh"] {
        let m = read_volume(&data.join(name)).unwrap();
        check_built_on_backend(&m.positions, &m.cells).unwrap_or_else(|e| panic!("{name}: {e}"));
        // And mixed, listed twice, shuffled.
        let mut positions = m.positions.clone();
        let cells = mix(&mut positions, m.cells, 7);
        check_built_on_backend(&positions, &cells).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// A cell of a random fixed type on distinct vertices drawn from 12, in
/// a random order: cells that share faces in other cyclic orders, tangle
/// and overlap (what `check_cells` accepts).
fn tangled_cell() -> impl Strategy<Value = CellVertices> {
    prop_oneof![Just(4usize), Just(5), Just(6), Just(8)]
        .prop_flat_map(|n| {
            proptest::sample::subsequence((0..12u32).collect::<Vec<_>>(), n).prop_shuffle()
        })
        .prop_map(|v| match v[..] {
            [a, b, c, d] => CellVertices::Tetrahedron([a, b, c, d]),
            [a, b, c, d, e] => CellVertices::Pyramid([a, b, c, d, e]),
            [a, b, c, d, e, f] => CellVertices::Prism([a, b, c, d, e, f]),
            _ => CellVertices::Hexahedron(std::array::from_fn(|i| v[i])),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cavity_tests::cases(200)))]

    /// Tangled random cells on few vertices built on the backend as on
    /// the host.
    #[test]
    fn tangled_cells_build_on_the_backend_as_on_the_host(
        cells in proptest::collection::vec(tangled_cell(), 1..7),
    ) {
        let positions: Vec<[f32; 3]> = (0..12u32)
            .map(|i| [i as f32, (i * i % 7) as f32, (i * 3 % 5) as f32])
            .collect();
        check_built_on_backend(&positions, &cells).map_err(TestCaseError::fail)?;
    }
}

/// Three prisms whose quadrilaterals share vertex sets in other cyclic
/// orders: edge (0, 3) runs only through the third prism's loops of faces
/// stored with the first two's loops, so the mesh has no such edge (the
/// host's build) though a cell has it.
#[test]
fn an_edge_no_stored_loop_names_is_no_edge_on_the_backend() {
    let positions: Vec<[f32; 3]> = (0..10u32)
        .map(|i| [i as f32, (i * i % 7) as f32, (i * 3 % 5) as f32])
        .collect();
    let cells = [
        CellVertices::Prism([0, 1, 6, 4, 3, 7]),
        CellVertices::Prism([0, 8, 2, 5, 9, 3]),
        CellVertices::Prism([0, 1, 2, 3, 4, 5]),
    ];
    let host = VolumeMesh::from_cells(positions.clone(), &cells).unwrap();
    assert_eq!(host.counts(), [10, 22, 13, 3]);
    check_built_on_backend(&positions, &cells).unwrap();
}

#[test]
fn polyhedra_and_bad_cells_on_the_backend() {
    let backend = test_backend();
    let cube: Vec<[f32; 3]> = (0..8u32)
        .map(|i| [(i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2) as f32])
        .collect();
    let hex = CellVertices::Hexahedron([0, 1, 3, 2, 4, 5, 7, 6]);
    // An octahedron beside the cube: built on the host, the same mesh; no
    // lists formed.
    let mut positions = cube.clone();
    for axis in 0..3 {
        for s in [1.0, -1.0] {
            let mut p = [0.5f32; 3];
            p[axis] += 2.0 * s;
            positions.push(p);
        }
    }
    let mut faces = Vec::new();
    for octant in 0..8u32 {
        let [x, y, z] = [0, 1, 2].map(|k| 8 + 2 * k + (octant >> k & 1));
        faces.push(if octant.count_ones() % 2 == 0 {
            vec![x, y, z]
        } else {
            vec![x, z, y]
        });
    }
    let cells = [hex.clone(), CellVertices::Polyhedron(faces)];
    let host = VolumeMesh::from_cells(positions.clone(), &cells).unwrap();
    let built = ResidentMesh::from_cells(&backend, &positions, &cells).unwrap();
    assert_eq!(built.cell_lists().unwrap(), None);
    assert_eq!(built.download().unwrap(), host);
    // Bad cells: the host's errors.
    let bad = [
        vec![hex.clone(), CellVertices::Tetrahedron([0, 1, 2, 8])],
        vec![CellVertices::Hexahedron([0, 1, 3, 2, 4, 5, 7, 0])],
        vec![CellVertices::Pyramid([0, 1, 3, 1, 4])],
        Vec::new(),
    ];
    for cells in bad {
        let on_host = VolumeMesh::from_cells(cube.clone(), &cells).map(|m| m.counts());
        let on_backend = ResidentMesh::from_cells(&backend, &cube, &cells).map(|m| m.counts());
        assert_eq!(
            format!("{on_backend:?}"),
            format!("{on_host:?}"),
            "{cells:?}"
        );
    }
}
