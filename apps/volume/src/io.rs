//! Reading and writing volumetric meshes: MEDIT `.mesh` (ASCII; vertices,
//! tetrahedra, prisms, pyramids, hexahedra; the surface sections are
//! skipped) and TetGen `.node` / `.ele` (tetrahedra; either file names
//! the pair). Errors name the file, and the line or the element. Writes
//! go to a temporary file beside the destination and are renamed over it
//! once complete.

use std::io::Write;
use std::path::{Path, PathBuf};

use cavity::io::MeshIoError;

use crate::mesh::{CellType, CellVertices};

/// Errors of reading and writing volumetric meshes; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum VolumeIoError {
    /// The extension is not a volumetric format: use `.mesh`, `.node` or
    /// `.ele`.
    #[error("{0}: unknown volumetric mesh format (expected .mesh, .node or .ele)")]
    UnknownFormat(String),
    /// The file could not be read or written, or a line is malformed
    /// (`MeshIoError::Io`, `MeshIoError::Syntax`: the file, and the line).
    #[error(transparent)]
    File(#[from] MeshIoError),
    /// Something the format cannot hold (a polyhedron in MEDIT, another
    /// cell than a tetrahedron in TetGen): choose another format.
    #[error("{file}: {message}")]
    Unsupported {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// The volumetric formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VolumeFormat {
    /// MEDIT `.mesh`, ASCII.
    Medit,
    /// TetGen `.node` and `.ele` (the path names either; the other has the
    /// same stem).
    TetGen,
}

impl VolumeFormat {
    /// The format of `path` by its extension.
    ///
    /// # Errors
    /// [`VolumeIoError::UnknownFormat`].
    pub fn of(path: &Path) -> Result<VolumeFormat, VolumeIoError> {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("mesh") => Ok(VolumeFormat::Medit),
            Some(e) if e.eq_ignore_ascii_case("node") || e.eq_ignore_ascii_case("ele") => {
                Ok(VolumeFormat::TetGen)
            }
            _ => Err(VolumeIoError::UnknownFormat(path.display().to_string())),
        }
    }
}

/// A volumetric mesh as read: positions and cells (vertex indices from 0).
#[derive(Clone, Debug, PartialEq)]
pub struct CellMesh {
    /// Vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// The cells.
    pub cells: Vec<CellVertices>,
}

/// Whitespace-separated tokens of a text file with their 1-based lines;
/// `#` starts a comment to the end of its line.
struct Tokens<'a> {
    file: String,
    items: std::iter::Peekable<std::vec::IntoIter<(usize, &'a str)>>,
    last_line: usize,
}

impl<'a> Tokens<'a> {
    fn new(file: &Path, text: &'a str) -> Self {
        let items: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .flat_map(|(i, l)| {
                let l = l.split('#').next().unwrap_or("");
                l.split_whitespace().map(move |t| (i + 1, t))
            })
            .collect();
        Tokens {
            file: file.display().to_string(),
            items: items.into_iter().peekable(),
            last_line: 0,
        }
    }

    fn error(&self, line: usize, message: String) -> VolumeIoError {
        MeshIoError::Syntax {
            file: self.file.clone(),
            line,
            message,
        }
        .into()
    }

    fn next(&mut self, what: &str) -> Result<(usize, &'a str), VolumeIoError> {
        let item = self.items.next();
        match item {
            Some((line, t)) => {
                self.last_line = line;
                Ok((line, t))
            }
            None => Err(self.error(self.last_line, format!("the file ends before {what}"))),
        }
    }

    fn number<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, VolumeIoError> {
        let (line, t) = self.next(what)?;
        t.parse()
            .map_err(|_| self.error(line, format!("{what}: {t:?} is not a number")))
    }

    fn line_of_next(&mut self) -> Option<usize> {
        self.items.peek().map(|&(l, _)| l)
    }
}

fn read_text(path: &Path) -> Result<String, VolumeIoError> {
    std::fs::read_to_string(path).map_err(|source| {
        MeshIoError::Io {
            file: path.display().to_string(),
            source,
        }
        .into()
    })
}

/// Reads the mesh at `path` ([`VolumeFormat::of`]).
///
/// # Errors
/// [`VolumeIoError`] naming the file and the line: an unknown section, a
/// token that is not a number, a vertex index out of range, a non-finite
/// coordinate, a file that ends early.
pub fn read_volume(path: &Path) -> Result<CellMesh, VolumeIoError> {
    match VolumeFormat::of(path)? {
        VolumeFormat::Medit => read_medit(path),
        VolumeFormat::TetGen => read_tetgen(path),
    }
}

/// A cell's vertex indices checked against the vertex count, made 0-based.
fn indices<const N: usize>(
    t: &mut Tokens<'_>,
    base: u32,
    vertices: usize,
    what: &str,
) -> Result<[u32; N], VolumeIoError> {
    let mut out = [0u32; N];
    for x in &mut out {
        let line = t.line_of_next().unwrap_or(t.last_line);
        let v: u32 = t.number(what)?;
        if v < base || (v - base) as usize >= vertices {
            return Err(t.error(line, format!("{what} names vertex {v}, but there are {vertices} vertices (numbered from {base})")));
        }
        *x = v - base;
    }
    Ok(out)
}

fn read_medit(path: &Path) -> Result<CellMesh, VolumeIoError> {
    let text = read_text(path)?;
    let mut t = Tokens::new(path, &text);
    let mut positions = Vec::new();
    let mut cells = Vec::new();
    let mut dimension = 3;
    while let Ok((line, keyword)) = t.next("a section") {
        let skip = |t: &mut Tokens<'_>, per: usize| -> Result<(), VolumeIoError> {
            let n: usize = t.number("the count")?;
            for _ in 0..n * per {
                t.next("the section's entries")?;
            }
            Ok(())
        };
        match keyword {
            "MeshVersionFormatted" => {
                t.next("the version")?;
            }
            "Dimension" => {
                dimension = t.number("the dimension")?;
                if dimension != 3 {
                    return Err(t.error(line, format!("dimension {dimension}: only 3 is a volume")));
                }
            }
            "Vertices" => {
                let n: usize = t.number("the vertex count")?;
                positions.reserve(n);
                for i in 0..n {
                    let l = t.line_of_next().unwrap_or(line);
                    let mut p = [0f32; 3];
                    for x in p.iter_mut().take(dimension) {
                        *x = t.number("a coordinate")?;
                    }
                    if p.iter().any(|x| !x.is_finite()) {
                        return Err(
                            t.error(l, format!("vertex {} has a non-finite coordinate", i + 1))
                        );
                    }
                    t.next("the vertex's reference")?;
                    positions.push(p);
                }
            }
            "Tetrahedra" | "Prisms" | "Pyramids" | "Hexahedra" => {
                let n: usize = t.number("the cell count")?;
                let nv = positions.len();
                for _ in 0..n {
                    let cell = match keyword {
                        "Tetrahedra" => {
                            CellVertices::Tetrahedron(indices(&mut t, 1, nv, "a tetrahedron")?)
                        }
                        "Prisms" => CellVertices::Prism(indices(&mut t, 1, nv, "a prism")?),
                        "Pyramids" => CellVertices::Pyramid(indices(&mut t, 1, nv, "a pyramid")?),
                        _ => CellVertices::Hexahedron(indices(&mut t, 1, nv, "a hexahedron")?),
                    };
                    t.next("the cell's reference")?;
                    cells.push(cell);
                }
            }
            "Edges" => skip(&mut t, 3)?,
            "Triangles" => skip(&mut t, 4)?,
            "Quadrilaterals" => skip(&mut t, 5)?,
            "Corners" | "RequiredVertices" | "Ridges" | "RequiredEdges" => skip(&mut t, 1)?,
            "Normals" | "Tangents" => skip(&mut t, 3)?,
            "NormalAtVertices" | "TangentAtVertices" => skip(&mut t, 2)?,
            "End" => break,
            other => return Err(t.error(line, format!("unknown section {other:?}"))),
        }
    }
    Ok(CellMesh { positions, cells })
}

/// The `.node` and `.ele` files of the TetGen pair `path` names.
fn tetgen_pair(path: &Path) -> (PathBuf, PathBuf) {
    (path.with_extension("node"), path.with_extension("ele"))
}

fn read_tetgen(path: &Path) -> Result<CellMesh, VolumeIoError> {
    let (node, ele) = tetgen_pair(path);
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

/// The vertices a cell of a fixed type lists, in its order (none for a
/// polyhedron).
fn listed(cell: &CellVertices) -> Option<&[u32]> {
    match cell {
        CellVertices::Tetrahedron(v) => Some(v),
        CellVertices::Hexahedron(v) => Some(v),
        CellVertices::Prism(v) => Some(v),
        CellVertices::Pyramid(v) => Some(v),
        CellVertices::Polyhedron(_) => None,
    }
}

/// Writes `text` to `path` through a temporary file beside it.
fn write_atomically(path: &Path, text: &[u8]) -> Result<(), VolumeIoError> {
    let io = |source| -> VolumeIoError {
        MeshIoError::Io {
            file: path.display().to_string(),
            source,
        }
        .into()
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    tmp.write_all(text).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Writes `mesh` to `path` ([`VolumeFormat::of`]): MEDIT with each cell
/// type in its section, TetGen as a `.node` and an `.ele` file (numbered
/// from 0).
///
/// # Errors
/// [`VolumeIoError::Unsupported`] for a polyhedron (either format) or
/// another cell than a tetrahedron (TetGen); [`VolumeIoError::File`].
pub fn write_volume(path: &Path, mesh: &CellMesh) -> Result<(), VolumeIoError> {
    let unsupported = |message: String| VolumeIoError::Unsupported {
        file: path.display().to_string(),
        message,
    };
    use std::fmt::Write as _;
    match VolumeFormat::of(path)? {
        VolumeFormat::Medit => {
            let mut s = String::from("MeshVersionFormatted 1\nDimension 3\n");
            let _ = writeln!(s, "Vertices\n{}", mesh.positions.len());
            for p in &mesh.positions {
                let _ = writeln!(s, "{} {} {} 0", p[0], p[1], p[2]);
            }
            let sections = [
                ("Tetrahedra", CellType::Tetrahedron),
                ("Prisms", CellType::Prism),
                ("Pyramids", CellType::Pyramid),
                ("Hexahedra", CellType::Hexahedron),
            ];
            if let Some(i) = mesh
                .cells
                .iter()
                .position(|c| matches!(c, CellVertices::Polyhedron(_)))
            {
                return Err(unsupported(format!(
                    "cell {i} is a general polyhedron, which MEDIT cannot hold"
                )));
            }
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
                for r in rows {
                    for v in r {
                        let _ = write!(s, "{} ", *v + 1);
                    }
                    s.push_str("0\n");
                }
            }
            s.push_str("End\n");
            write_atomically(path, s.as_bytes())
        }
        VolumeFormat::TetGen => {
            let (node, ele) = tetgen_pair(path);
            let mut tets = Vec::with_capacity(mesh.cells.len());
            for (i, c) in mesh.cells.iter().enumerate() {
                match c {
                    CellVertices::Tetrahedron(v) => tets.push(*v),
                    other => {
                        return Err(unsupported(format!(
                            "cell {i} is a {:?}; TetGen files hold tetrahedra only",
                            other.cell_type()
                        )));
                    }
                }
            }
            let mut s = format!("{} 3 0 0\n", mesh.positions.len());
            for (i, p) in mesh.positions.iter().enumerate() {
                let _ = writeln!(s, "{i} {} {} {}", p[0], p[1], p[2]);
            }
            let mut e = format!("{} 4 0\n", tets.len());
            for (i, v) in tets.iter().enumerate() {
                let _ = writeln!(e, "{i} {} {} {} {}", v[0], v[1], v[2], v[3]);
            }
            write_atomically(&node, s.as_bytes())?;
            write_atomically(&ele, e.as_bytes())
        }
    }
}
