//! The serial writers of 1c8220a (before issue 55, item 3), kept as the
//! reference the streaming writers are checked against byte for byte on
//! meshes of many pieces (tests only): each gives the bytes it wrote.

use std::fmt::Write as _;
use std::path::Path;

use cavity::io::format_lines;
use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType as VtkCell, Cells, DataSet, UnstructuredGridPiece,
    Version, VertexNumbers, Vtk,
};

use super::gmsh::MshVersion;
use super::{CellMesh, PointField, VolumeIoError, WriteOptions, listed, unsupported};
use crate::mesh::{CellType, CellVertices};

/// A wedge's vertices as a prism's and back.
fn mirror_prism(v: [u32; 6]) -> [u32; 6] {
    [v[0], v[2], v[1], v[3], v[5], v[4]]
}

/// The file's error.
fn malformed(path: &Path, message: String) -> VolumeIoError {
    VolumeIoError::Malformed {
        file: path.display().to_string(),
        message,
    }
}

/// The Gmsh type and node list of a cell, or an error for a polyhedron.
fn element<'a>(
    path: &Path,
    i: usize,
    cell: &'a CellVertices,
) -> Result<(u32, &'a [u32]), VolumeIoError> {
    let ty = match cell {
        CellVertices::Tetrahedron(_) => 4,
        CellVertices::Hexahedron(_) => 5,
        CellVertices::Prism(_) => 6,
        CellVertices::Pyramid(_) => 7,
        CellVertices::Polyhedron(_) => {
            return Err(unsupported(
                path,
                format!("cell {i} is a general polyhedron, which Gmsh cannot hold (write .vtk)"),
            ));
        }
    };
    Ok((ty, listed(cell).expect("a cell of a fixed type")))
}

/// The old `gmsh::write_field`'s bytes.
pub(super) fn gmsh(
    mesh: &CellMesh,
    field: Option<&PointField>,
    options: WriteOptions,
) -> Result<Vec<u8>, VolumeIoError> {
    let path = Path::new("reference.msh");
    let mut elements = Vec::with_capacity(mesh.cells.len());
    for (i, c) in mesh.cells.iter().enumerate() {
        elements.push(element(path, i, c)?);
    }
    let mut bytes = match (options.msh_version, options.binary) {
        (MshVersion::V22, false) => write_v22_ascii(mesh, &elements),
        (MshVersion::V22, true) => write_v22_binary(mesh, &elements),
        (MshVersion::V41, binary) => write_v41(mesh, &elements, binary),
    };
    if let Some(f) = field {
        write_node_data(&mut bytes, f, options.binary);
    }
    Ok(bytes)
}

/// Appends `field` as a `$NodeData` section (see [`write_field`]), the
/// nodes numbered from 1 in position order as the writers number them.
fn write_node_data(b: &mut Vec<u8>, field: &PointField, binary: bool) {
    let name: String = field
        .name
        .chars()
        .map(|c| match c {
            '"' => '\'',
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect();
    b.extend(
        format!(
            "$NodeData\n1\n\"{name}\"\n1\n0\n3\n0\n1\n{}\n",
            field.values.len()
        )
        .bytes(),
    );
    if binary {
        for (i, v) in field.values.iter().enumerate() {
            b.extend((i as i32 + 1).to_le_bytes());
            b.extend(f64::from(*v).to_le_bytes());
        }
        b.extend(b"\n");
    } else {
        b.extend(
            format_lines(&field.values, |s, i, v| {
                let _ = writeln!(s, "{} {v}", i + 1);
            })
            .bytes(),
        );
    }
    b.extend(b"$EndNodeData\n");
}

fn write_v22_ascii(mesh: &CellMesh, elements: &[(u32, &[u32])]) -> Vec<u8> {
    let mut s = String::from("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n");
    let _ = writeln!(s, "{}", mesh.positions.len());
    s += &format_lines(&mesh.positions, |s, i, p| {
        let _ = writeln!(s, "{} {} {} {}", i + 1, p[0], p[1], p[2]);
    });
    let _ = write!(s, "$EndNodes\n$Elements\n{}\n", elements.len());
    s += &format_lines(elements, |s, i, (ty, v)| {
        let _ = write!(s, "{} {ty} 2 1 1", i + 1);
        for x in *v {
            let _ = write!(s, " {}", x + 1);
        }
        s.push('\n');
    });
    s += "$EndElements\n";
    s.into_bytes()
}

fn write_v22_binary(mesh: &CellMesh, elements: &[(u32, &[u32])]) -> Vec<u8> {
    let mut b = b"$MeshFormat\n2.2 1 8\n".to_vec();
    b.extend(1i32.to_le_bytes());
    b.extend(format!("\n$EndMeshFormat\n$Nodes\n{}\n", mesh.positions.len()).bytes());
    for (i, p) in mesh.positions.iter().enumerate() {
        b.extend((i as i32 + 1).to_le_bytes());
        for x in p {
            b.extend(f64::from(*x).to_le_bytes());
        }
    }
    b.extend(format!("\n$EndNodes\n$Elements\n{}\n", elements.len()).bytes());
    // One block per run of elements of a type.
    let mut i = 0;
    while i < elements.len() {
        let ty = elements[i].0;
        let run = elements[i..].iter().take_while(|e| e.0 == ty).count();
        for word in [ty as i32, run as i32, 2] {
            b.extend(word.to_le_bytes());
        }
        for (k, (_, v)) in elements[i..i + run].iter().enumerate() {
            for word in [(i + k) as i32 + 1, 1, 1] {
                b.extend(word.to_le_bytes());
            }
            for x in *v {
                b.extend((*x as i32 + 1).to_le_bytes());
            }
        }
        i += run;
    }
    b.extend(b"\n$EndElements\n");
    b
}

/// A block of elements of one type: the type, and each element's index
/// and vertices.
type Block<'a> = (u32, Vec<(usize, &'a [u32])>);

/// Element types in the order their blocks are written.
const TYPES: [u32; 4] = [4, 5, 6, 7];

fn write_v41(mesh: &CellMesh, elements: &[(u32, &[u32])], binary: bool) -> Vec<u8> {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in &mesh.positions {
        for k in 0..3 {
            lo[k] = lo[k].min(f64::from(p[k]));
            hi[k] = hi[k].max(f64::from(p[k]));
        }
    }
    if mesh.positions.is_empty() {
        (lo, hi) = ([0.0; 3], [0.0; 3]);
    }
    let n = mesh.positions.len();
    let blocks: Vec<Block<'_>> = TYPES
        .iter()
        .map(|&t| {
            let list: Vec<(usize, &[u32])> = elements
                .iter()
                .enumerate()
                .filter(|(_, e)| e.0 == t)
                .map(|(i, e)| (i, e.1))
                .collect();
            (t, list)
        })
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let (first, last) = (elements.len().min(1), elements.len());
    if !binary {
        let mut s = String::from("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n0 0 0 1\n");
        let _ = writeln!(
            s,
            "1 {} {} {} {} {} {} 0 0",
            lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]
        );
        let _ = write!(
            s,
            "$EndEntities\n$Nodes\n1 {n} {} {n}\n3 1 0 {n}\n",
            n.min(1)
        );
        s += &format_lines(&mesh.positions, |s, i, _| {
            let _ = writeln!(s, "{}", i + 1);
        });
        s += &format_lines(&mesh.positions, |s, _, p| {
            let _ = writeln!(s, "{} {} {}", p[0], p[1], p[2]);
        });
        let _ = write!(
            s,
            "$EndNodes\n$Elements\n{} {last} {first} {last}\n",
            blocks.len()
        );
        for (t, list) in &blocks {
            let _ = writeln!(s, "3 1 {t} {}", list.len());
            s += &format_lines(list, |s, _, (i, v)| {
                let _ = write!(s, "{}", i + 1);
                for x in *v {
                    let _ = write!(s, " {}", x + 1);
                }
                s.push('\n');
            });
        }
        s += "$EndElements\n";
        return s.into_bytes();
    }
    let mut b = b"$MeshFormat\n4.1 1 8\n".to_vec();
    b.extend(1i32.to_le_bytes());
    b.extend(b"\n$EndMeshFormat\n$Entities\n");
    for count in [0u64, 0, 0, 1] {
        b.extend(count.to_le_bytes());
    }
    b.extend(1i32.to_le_bytes());
    for x in lo.iter().chain(&hi) {
        b.extend(x.to_le_bytes());
    }
    b.extend(0u64.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend(b"\n$EndEntities\n$Nodes\n");
    for word in [1u64, n as u64, n.min(1) as u64, n as u64] {
        b.extend(word.to_le_bytes());
    }
    for word in [3i32, 1, 0] {
        b.extend(word.to_le_bytes());
    }
    b.extend((n as u64).to_le_bytes());
    for i in 0..n {
        b.extend((i as u64 + 1).to_le_bytes());
    }
    for p in &mesh.positions {
        for x in p {
            b.extend(f64::from(*x).to_le_bytes());
        }
    }
    b.extend(b"\n$EndNodes\n$Elements\n");
    for word in [blocks.len() as u64, last as u64, first as u64, last as u64] {
        b.extend(word.to_le_bytes());
    }
    for (t, list) in &blocks {
        for word in [3i32, 1, *t as i32] {
            b.extend(word.to_le_bytes());
        }
        b.extend((list.len() as u64).to_le_bytes());
        for (i, v) in list {
            b.extend((*i as u64 + 1).to_le_bytes());
            for x in *v {
                b.extend((u64::from(*x) + 1).to_le_bytes());
            }
        }
    }
    b.extend(b"\n$EndElements\n");
    b
}

/// Writes a MEDIT file, each cell type in its section.
///
/// # Errors
/// [`VolumeIoError::Unsupported`] for a polyhedron;
/// [`VolumeIoError::File`].
pub(super) fn medit(mesh: &CellMesh) -> Result<Vec<u8>, VolumeIoError> {
    let path = Path::new("reference.mesh");
    if let Some(i) = mesh
        .cells
        .iter()
        .position(|c| matches!(c, CellVertices::Polyhedron(_)))
    {
        return Err(unsupported(
            path,
            format!("cell {i} is a general polyhedron, which MEDIT cannot hold"),
        ));
    }
    let mut s = String::from("MeshVersionFormatted 1\nDimension 3\n");
    let _ = writeln!(s, "Vertices\n{}", mesh.positions.len());
    s += &format_lines(&mesh.positions, |s, _, p| {
        let _ = writeln!(s, "{} {} {} 0", p[0], p[1], p[2]);
    });
    let sections = [
        ("Tetrahedra", CellType::Tetrahedron),
        ("Prisms", CellType::Prism),
        ("Pyramids", CellType::Pyramid),
        ("Hexahedra", CellType::Hexahedron),
    ];
    for (name, ty) in sections {
        let rows: Vec<&[u32]> = mesh
            .cells
            .iter()
            .filter(|c| c.cell_type() == ty)
            .filter_map(listed)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(s, "{name}\n{}", rows.len());
        s += &format_lines(&rows, |s, _, r| {
            for v in *r {
                let _ = write!(s, "{} ", *v + 1);
            }
            s.push_str("0\n");
        });
    }
    s.push_str("End\n");
    Ok(s.into_bytes())
}

/// Writes a TetGen pair (numbered from 0).
///
/// # Errors
/// [`VolumeIoError::Unsupported`] for another cell than a tetrahedron;
/// [`VolumeIoError::File`].
pub(super) fn tetgen(mesh: &CellMesh) -> Result<(Vec<u8>, Vec<u8>), VolumeIoError> {
    let path = Path::new("reference.node");
    let mut tets = Vec::with_capacity(mesh.cells.len());
    for (i, c) in mesh.cells.iter().enumerate() {
        match c {
            CellVertices::Tetrahedron(v) => tets.push(*v),
            other => {
                return Err(unsupported(
                    path,
                    format!(
                        "cell {i} is a {:?}; TetGen files hold tetrahedra only",
                        other.cell_type()
                    ),
                ));
            }
        }
    }
    let mut s = format!("{} 3 0 0\n", mesh.positions.len());
    s += &format_lines(&mesh.positions, |s, i, p| {
        let _ = writeln!(s, "{i} {} {} {}", p[0], p[1], p[2]);
    });
    let mut e = format!("{} 4 0\n", tets.len());
    e += &format_lines(&tets, |s, i, v| {
        let _ = writeln!(s, "{i} {} {} {} {}", v[0], v[1], v[2], v[3]);
    });
    Ok((s.into_bytes(), e.into_bytes()))
}

pub(super) fn vtk(
    mesh: &CellMesh,
    field: Option<&PointField>,
    binary: bool,
) -> Result<Vec<u8>, VolumeIoError> {
    let path = Path::new("reference.vtk");
    let points: Vec<f32> = mesh.positions.iter().flatten().copied().collect();
    let mut numbers = Vec::new();
    let mut types = Vec::with_capacity(mesh.cells.len());
    for cell in &mesh.cells {
        let (ty, list): (VtkCell, Vec<u32>) = match cell {
            CellVertices::Tetrahedron(v) => (VtkCell::Tetra, v.to_vec()),
            CellVertices::Hexahedron(v) => (VtkCell::Hexahedron, v.to_vec()),
            CellVertices::Prism(v) => (VtkCell::Wedge, mirror_prism(*v).to_vec()),
            CellVertices::Pyramid(v) => (VtkCell::Pyramid, v.to_vec()),
            CellVertices::Polyhedron(faces) => {
                let mut stream = vec![faces.len() as u32];
                for f in faces {
                    stream.push(f.len() as u32);
                    stream.extend_from_slice(f);
                }
                (VtkCell::Polyhedron, stream)
            }
        };
        numbers.push(list.len() as u32);
        numbers.extend(list);
        types.push(ty);
    }
    let vtk = Vtk {
        version: Version::new_legacy(4, 2),
        title: "cavity volumetric mesh".into(),
        byte_order: ByteOrder::BigEndian,
        file_path: None,
        data: DataSet::inline(UnstructuredGridPiece {
            points: points.into(),
            cells: Cells {
                cell_verts: VertexNumbers::Legacy {
                    num_cells: mesh.cells.len() as u32,
                    vertices: numbers,
                },
                types,
            },
            data: Attributes {
                point: field
                    .map(|f| {
                        let name: String = f
                            .name
                            .chars()
                            .map(|c| if c.is_whitespace() { '_' } else { c })
                            .collect();
                        let name = if name.is_empty() {
                            "field".into()
                        } else {
                            name
                        };
                        Attribute::scalars(name, 1).with_data(f.values.clone())
                    })
                    .into_iter()
                    .collect(),
                cell: Vec::new(),
            },
        }),
    };
    let encoding =
        |e: vtkio::Error| malformed(path, format!("vtkio could not encode the grid: {e}"));
    if binary {
        let mut bytes = Vec::new();
        vtk.write_legacy(&mut bytes).map_err(encoding)?;
        Ok(bytes)
    } else {
        let mut text = String::new();
        vtk.write_legacy_ascii(&mut text).map_err(encoding)?;
        Ok(text.into_bytes())
    }
}

mod tests {
    use super::*;
    use crate::io::{write_volume_field, write_volume_with};

    /// A pseudo-random mesh of `cells` cells in runs of random types and
    /// lengths over `vertices` vertices, coordinates of every magnitude,
    /// polyhedra among them where `polyhedra`.
    fn random_mesh(vertices: usize, cells: usize, polyhedra: bool, seed: u64) -> CellMesh {
        let mut next = crate::io::stream::xorshift(seed | 1);
        let positions = (0..vertices)
            .map(|_| {
                [0; 3].map(|_| {
                    let r = next();
                    match r % 4 {
                        // Any bits but NaN and infinity.
                        0 => f32::from_bits(r as u32 >> 1 & 0x7f7f_ffff | (r as u32 & 1) << 31),
                        1 => (r >> 40) as f32 / 1024.0,
                        2 => -((r >> 44) as f32),
                        _ => (r >> 11) as f32 * 1e-12,
                    }
                })
            })
            .collect();
        let mut list = Vec::with_capacity(cells);
        while list.len() < cells {
            let r = next();
            let run = 1 + (r >> 8) as usize % if r % 3 == 0 { 5000 } else { 40 };
            let kinds = if polyhedra { 5 } else { 4 };
            for _ in 0..run.min(cells - list.len()) {
                let v = next();
                let at = |k: u64| ((v >> (5 * k)) % vertices as u64) as u32;
                let cell = match r % kinds {
                    0 => CellVertices::Tetrahedron([0, 1, 2, 3].map(at)),
                    1 => CellVertices::Hexahedron([0, 1, 2, 3, 4, 5, 6, 7].map(at)),
                    2 => CellVertices::Prism([0, 1, 2, 3, 4, 5].map(at)),
                    3 => CellVertices::Pyramid([0, 1, 2, 3, 4].map(at)),
                    _ => CellVertices::Polyhedron(vec![
                        vec![at(0), at(1), at(2)],
                        vec![at(3), at(4), at(5), at(6)],
                    ]),
                };
                list.push(cell);
            }
        }
        CellMesh {
            positions,
            cells: list,
        }
    }

    /// Values of every magnitude, infinities among them.
    fn random_field(n: usize) -> PointField {
        PointField {
            name: "a \"b\"\nc".into(),
            values: (0..n as u32)
                .map(|i| match i % 7 {
                    0 => f32::INFINITY,
                    1 => f32::from_bits(i.wrapping_mul(2_654_435_761) & 0xbf7f_ffff),
                    _ => i as f32 * 0.37 - 1000.0,
                })
                .collect(),
        }
    }

    #[test]
    fn the_streaming_writers_write_the_serial_writers_bytes_on_meshes_of_many_pieces() {
        let dir = tempfile::tempdir().expect("tempdir");
        let read = |name: &str| std::fs::read(dir.path().join(name)).expect("written");
        let pieces = crate::io::stream::PIECE;
        for (seed, vertices, cells) in [
            (1u64, 3 * pieces + 5, 5 * pieces + 77),
            (2, 100, 2 * pieces),
        ] {
            let mesh = random_mesh(vertices, cells, false, seed);
            let field = random_field(vertices);
            for version in [MshVersion::V22, MshVersion::V41] {
                for binary in [false, true] {
                    let options = WriteOptions {
                        binary,
                        msh_version: version,
                    };
                    for f in [None, Some(&field)] {
                        write_volume_field(&dir.path().join("a.msh"), &mesh, f, options)
                            .expect("written");
                        let expected = gmsh(&mesh, f, options).expect("reference");
                        assert!(read("a.msh") == expected, "{options:?} {}", f.is_some());
                        write_volume_field(&dir.path().join("a.vtk"), &mesh, f, options)
                            .expect("written");
                        let expected = vtk(&mesh, f, binary).expect("reference");
                        assert!(read("a.vtk") == expected, "VTK {binary} {}", f.is_some());
                    }
                }
            }
            write_volume_with(&dir.path().join("a.mesh"), &mesh, WriteOptions::default())
                .expect("written");
            assert!(read("a.mesh") == medit(&mesh).expect("reference"), "MEDIT");
            let polyhedra = random_mesh(vertices, cells, true, seed + 10);
            for binary in [false, true] {
                let f = Some(&field);
                write_volume_field(
                    &dir.path().join("p.vtk"),
                    &polyhedra,
                    f,
                    WriteOptions {
                        binary,
                        ..Default::default()
                    },
                )
                .expect("written");
                let expected = vtk(&polyhedra, f, binary).expect("reference");
                assert!(read("p.vtk") == expected, "VTK polyhedra {binary}");
            }
            let tetrahedra = CellMesh {
                positions: mesh.positions.clone(),
                cells: mesh
                    .cells
                    .iter()
                    .map(|c| {
                        let v = listed(c).expect("fixed");
                        CellVertices::Tetrahedron([v[0], v[1], v[2], v[3]])
                    })
                    .collect(),
            };
            write_volume_with(
                &dir.path().join("t.node"),
                &tetrahedra,
                WriteOptions::default(),
            )
            .expect("written");
            let (node, ele) = tetgen(&tetrahedra).expect("reference");
            assert!(read("t.node") == node && read("t.ele") == ele, "TetGen");
        }
    }
}
