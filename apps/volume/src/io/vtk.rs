//! Legacy VTK `.vtk` files holding an unstructured grid, ASCII or binary,
//! through the `vtkio` crate (for viewers such as ParaView). Read:
//! tetrahedra, hexahedra, voxels (as hexahedra), wedges (as prisms),
//! pyramids and polyhedra (their face streams); vertices, lines and
//! polygons are skipped (surface and feature elements). Written: the
//! same cell types, the positions as `float`.
//!
//! VTK's wedge lists its bottom triangle clockwise seen from the top, a
//! [`crate::CellType::Prism`] counter-clockwise: the two are mirrored on the way
//! in and out.

use std::path::Path;

use vtkio::model::{
    Attributes, ByteOrder, CellType as VtkCell, Cells, DataSet, Piece, UnstructuredGridPiece,
    Version, VertexNumbers, Vtk,
};

use super::{CellMesh, VolumeIoError, unsupported, write_atomically};
use crate::mesh::CellVertices;

/// A wedge's vertices as a prism's and back (the bottom and top triangles
/// turned around).
fn mirror_prism(v: [u32; 6]) -> [u32; 6] {
    [v[0], v[2], v[1], v[3], v[5], v[4]]
}

/// The file's error: what the VTK parser or the grid's data says.
fn malformed(path: &Path, message: String) -> VolumeIoError {
    VolumeIoError::Malformed {
        file: path.display().to_string(),
        message,
    }
}

/// Reads a legacy VTK unstructured grid.
///
/// # Errors
/// [`VolumeIoError::File`] when the file cannot be read;
/// [`VolumeIoError::Malformed`] for a file `vtkio` cannot parse (its
/// message), a vertex index out of range or a non-finite coordinate
/// (naming the cell or point); [`VolumeIoError::Unsupported`] for a data
/// set other than an unstructured grid or a cell type that is neither a
/// linear volume cell nor a surface element.
pub fn read(path: &Path) -> Result<CellMesh, VolumeIoError> {
    let bytes = std::fs::read(path).map_err(|source| cavity::io::MeshIoError::Io {
        file: path.display().to_string(),
        source,
    })?;
    let vtk = Vtk::parse_legacy_be(bytes.as_slice())
        .map_err(|e| malformed(path, format!("not a legacy VTK file vtkio reads: {e}")))?;
    let pieces = match vtk.data {
        DataSet::UnstructuredGrid { pieces, .. } => pieces,
        _ => {
            return Err(unsupported(
                path,
                "not an unstructured grid (DATASET UNSTRUCTURED_GRID)".into(),
            ));
        }
    };
    let mut mesh = CellMesh {
        positions: Vec::new(),
        cells: Vec::new(),
    };
    for piece in pieces {
        let Piece::Inline(piece) = piece else {
            return Err(malformed(path, "a piece stored in another file".into()));
        };
        read_piece(path, *piece, &mut mesh)?;
    }
    Ok(mesh)
}

/// Appends one piece's points and volume cells to `mesh`.
fn read_piece(
    path: &Path,
    piece: UnstructuredGridPiece,
    mesh: &mut CellMesh,
) -> Result<(), VolumeIoError> {
    let base = mesh.positions.len() as u32;
    let coordinates: Vec<f64> = piece
        .points
        .cast_into()
        .ok_or_else(|| malformed(path, "points that are not numbers".into()))?;
    for (i, p) in coordinates.chunks(3).enumerate() {
        let p = match p {
            [x, y, z] => [*x as f32, *y as f32, *z as f32],
            _ => [f32::NAN; 3],
        };
        if p.iter().any(|x| !x.is_finite()) {
            return Err(malformed(
                path,
                format!("point {i} is not a finite 3D point"),
            ));
        }
        mesh.positions.push(p);
    }
    let vertices = mesh.positions.len() as u32;
    let (_, numbers) = piece.cells.cell_verts.into_legacy();
    let mut at = 0usize;
    for (c, ty) in piece.cells.types.iter().enumerate() {
        let bad = |what: &str| malformed(path, format!("cell {c}: {what}"));
        let n = *numbers
            .get(at)
            .ok_or_else(|| bad("past the end of CELLS"))? as usize;
        let list = numbers
            .get(at + 1..at + 1 + n)
            .ok_or_else(|| bad("its vertex list runs past the end of CELLS"))?;
        at += 1 + n;
        let checked = |v: &[u32]| -> Result<Vec<u32>, VolumeIoError> {
            v.iter()
                .map(|&x| {
                    if x < vertices - base {
                        Ok(base + x)
                    } else {
                        Err(bad(&format!("vertex {x} of {} points", vertices - base)))
                    }
                })
                .collect()
        };
        let fixed = |count: usize| -> Result<Vec<u32>, VolumeIoError> {
            if n != count {
                return Err(bad(&format!("{n} vertices, expected {count}")));
            }
            checked(list)
        };
        let cell = match ty {
            VtkCell::Tetra => {
                let v = fixed(4)?;
                CellVertices::Tetrahedron([v[0], v[1], v[2], v[3]])
            }
            VtkCell::Hexahedron => CellVertices::Hexahedron(to_array(&fixed(8)?)),
            VtkCell::Voxel => {
                let v = fixed(8)?;
                CellVertices::Hexahedron([v[0], v[1], v[3], v[2], v[4], v[5], v[7], v[6]])
            }
            VtkCell::Wedge => CellVertices::Prism(mirror_prism(to_array(&fixed(6)?))),
            VtkCell::Pyramid => CellVertices::Pyramid(to_array(&fixed(5)?)),
            VtkCell::Polyhedron => {
                // A face stream: the face count, then each face's vertex
                // count and vertices.
                let mut faces = Vec::new();
                let count = *list.first().ok_or_else(|| bad("an empty face stream"))?;
                let mut i = 1;
                for _ in 0..count {
                    let k = *list.get(i).ok_or_else(|| bad("a short face stream"))? as usize;
                    let face = list
                        .get(i + 1..i + 1 + k)
                        .ok_or_else(|| bad("a short face stream"))?;
                    faces.push(checked(face)?);
                    i += 1 + k;
                }
                CellVertices::Polyhedron(faces)
            }
            VtkCell::Vertex
            | VtkCell::PolyVertex
            | VtkCell::Line
            | VtkCell::PolyLine
            | VtkCell::Triangle
            | VtkCell::TriangleStrip
            | VtkCell::Polygon
            | VtkCell::Pixel
            | VtkCell::Quad => continue,
            other => {
                return Err(unsupported(
                    path,
                    format!("cell {c} is a {other:?}; linear volume cells are read"),
                ));
            }
        };
        mesh.cells.push(cell);
    }
    Ok(())
}

/// The first `N` of `v` (its length checked before).
fn to_array<const N: usize>(v: &[u32]) -> [u32; N] {
    let mut out = [0; N];
    out.copy_from_slice(&v[..N]);
    out
}

/// Writes a legacy VTK unstructured grid (version 4.2), binary or ASCII.
///
/// # Errors
/// [`VolumeIoError::File`] when the file cannot be written;
/// [`VolumeIoError::Malformed`] if `vtkio` fails to encode the grid.
pub fn write(path: &Path, mesh: &CellMesh, binary: bool) -> Result<(), VolumeIoError> {
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
            data: Attributes::new(),
        }),
    };
    let encoding =
        |e: vtkio::Error| malformed(path, format!("vtkio could not encode the grid: {e}"));
    if binary {
        let mut bytes = Vec::new();
        vtk.write_legacy(&mut bytes).map_err(encoding)?;
        write_atomically(path, &bytes)
    } else {
        let mut text = String::new();
        vtk.write_legacy_ascii(&mut text).map_err(encoding)?;
        write_atomically(path, text.as_bytes())
    }
}
