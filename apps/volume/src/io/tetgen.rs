//! TetGen `.node` / `.ele` pairs: vertices (numbered from 0 or 1, with
//! attributes and boundary markers skipped) and linear tetrahedra.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{
    CellMesh, Tokens, VolumeIoError, format_lines, indices, read_text, unsupported,
    write_atomically,
};
use crate::mesh::CellVertices;

/// The `.node` and `.ele` files of the TetGen pair `path` names.
pub fn pair(path: &Path) -> (PathBuf, PathBuf) {
    (path.with_extension("node"), path.with_extension("ele"))
}

/// Reads a TetGen pair.
///
/// # Errors
/// As [`super::read_volume`].
pub fn read(path: &Path) -> Result<CellMesh, VolumeIoError> {
    let (node, ele) = pair(path);
    let text = read_text(&node)?;
    let mut t = Tokens::new(&node, &text);
    let n: usize = t.number("the vertex count")?;
    let dim: usize = t.number("the dimension")?;
    let attributes: usize = t.number("the attribute count")?;
    let markers: usize = t.number("the boundary-marker flag")?;
    if dim != 3 {
        return Err(t.error(1, format!("dimension {dim}: only 3 is a volume")));
    }
    let mut positions = Vec::with_capacity(n);
    let mut base = 0;
    for i in 0..n {
        let line = t.line_of_next().unwrap_or(t.last_line);
        let index: u32 = t.number("the vertex number")?;
        if i == 0 {
            base = index.min(1);
        }
        if index != i as u32 + base {
            return Err(t.error(
                line,
                format!("vertex number {index}, expected {}", i as u32 + base),
            ));
        }
        let p: [f32; 3] = [t.number("x")?, t.number("y")?, t.number("z")?];
        if p.iter().any(|x| !x.is_finite()) {
            return Err(t.error(line, format!("vertex {index} has a non-finite coordinate")));
        }
        for _ in 0..attributes + markers.min(1) {
            t.next("the vertex's attributes")?;
        }
        positions.push(p);
    }
    let text = read_text(&ele)?;
    let mut t = Tokens::new(&ele, &text);
    let n: usize = t.number("the tetrahedron count")?;
    let per: usize = t.number("the nodes per tetrahedron")?;
    let attributes: usize = t.number("the attribute count")?;
    if per != 4 {
        return Err(t.error(
            1,
            format!("{per} nodes per tetrahedron: only linear tetrahedra (4) are read"),
        ));
    }
    let mut cells = Vec::with_capacity(n);
    for _ in 0..n {
        t.next("the tetrahedron number")?;
        let v = indices(&mut t, base, positions.len(), "a tetrahedron")?;
        for _ in 0..attributes {
            t.next("the tetrahedron's attributes")?;
        }
        cells.push(CellVertices::Tetrahedron(v));
    }
    Ok(CellMesh { positions, cells })
}

/// Writes a TetGen pair (numbered from 0).
///
/// # Errors
/// [`VolumeIoError::Unsupported`] for another cell than a tetrahedron;
/// [`VolumeIoError::File`].
pub fn write(path: &Path, mesh: &CellMesh) -> Result<(), VolumeIoError> {
    let (node, ele) = pair(path);
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
    write_atomically(&node, s.as_bytes())?;
    write_atomically(&ele, e.as_bytes())
}
