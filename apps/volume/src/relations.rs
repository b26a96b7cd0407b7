//! The indirect relations of a [`VolumeMesh`] on a backend (the paper's
//! section 4): face-vertices from ∂2 and ∂1, and the deduplicated
//! products cell-edges (∂3 then ∂2) and cell-vertices (∂3 then
//! face-vertices), by count, scan and fill with each row sorted by index
//! (face-vertices keeps each face's loop order). Their bottom-up duals
//! (vertex-faces, edge-cells, vertex-cells) are their transposes
//! ([`crate::transpose`]). Entries are unsigned indices (a [`TernaryCsr`]
//! whose entries are all positive).

use cavity::backend::Backend;
use cavity::backend::buffer::Buffer;
use cavity_volume_kernels::{Compose, FaceVertices, SortRows, blocks};

use crate::VolumeError;

use crate::device::{Csr, CsrOps};
use crate::mesh::VolumeMesh;
use crate::signed::index;
use crate::ternary::TernaryCsr;

/// Each face's vertex loop (row `f`: the tails of its signed edges, in
/// ∂2's order; the columns are the vertices).
///
/// # Errors
/// [`VolumeError::Backend`] when the GPU's kernels are missing, a launch
/// or a copy fails.
pub fn face_vertices(backend: &Backend, mesh: &VolumeMesh) -> Result<TernaryCsr, VolumeError> {
    crate::add_kernels(backend)?;
    let d = backend;
    let pairs: Vec<u32> = mesh.edges().iter().flatten().copied().collect();
    let fv = d.face_vertices(
        &d.upload_csr(mesh.d2())?,
        &d.upload(&pairs)?,
        mesh.positions().len() as u32,
    )?;
    d.download_csr(fv)
}

/// The relation from `a`'s rows to `b`'s columns through `a`'s columns
/// (`b`'s rows): row `r` holds each column of the rows of `b` that row `r`
/// of `a` names, once, by ascending index; signs are dropped.
///
/// # Errors
/// [`VolumeError::Matrix`] when `a` has more columns than `b` has rows;
/// [`VolumeError::Backend`] as [`face_vertices`].
pub fn compose(
    backend: &Backend,
    a: &TernaryCsr,
    b: &TernaryCsr,
) -> Result<TernaryCsr, VolumeError> {
    if a.columns() > b.rows() {
        return Err(VolumeError::Matrix(format!(
            "composing {} columns with {} rows",
            a.columns(),
            b.rows()
        )));
    }
    crate::add_kernels(backend)?;
    let d = backend;
    let c = d.compose(&d.upload_csr(a)?, &d.upload_csr(b)?)?;
    d.download_csr(c)
}

/// The indirect relations on the backend.
pub(crate) trait RelationOps {
    /// [`face_vertices`] of ∂2 (`d2`) and ∂1 (`pairs`, two words per edge)
    /// on the backend, over `vertices` vertices.
    fn face_vertices(
        &self,
        d2: &Csr,
        pairs: &Buffer<u32>,
        vertices: u32,
    ) -> Result<Csr, VolumeError>;
    /// [`compose`] on the backend (`a`'s columns naming `b`'s rows).
    fn compose(&self, a: &Csr, b: &Csr) -> Result<Csr, VolumeError>;
}

impl RelationOps for Backend {
    fn face_vertices(
        &self,
        d2: &Csr,
        pairs: &Buffer<u32>,
        vertices: u32,
    ) -> Result<Csr, VolumeError> {
        let d = self;
        let mut out = d.zeros(d2.nnz as usize)?;
        let params = (&d2.offsets, &d2.entries, d2.rows, pairs, &mut out);
        d.launch::<FaceVertices>(blocks(d2.rows), (0, 0), params)?;
        Ok(Csr {
            offsets: d.copy(&d2.offsets, d2.rows as usize + 1)?,
            entries: out,
            rows: d2.rows,
            columns: vertices,
            nnz: d2.nnz,
        })
    }

    fn compose(&self, a: &Csr, b: &Csr) -> Result<Csr, VolumeError> {
        let d = self;
        let rows = a.rows;
        let mut offsets = d.zeros(rows as usize + 1)?;
        let ab = [&a.offsets, &a.entries, &b.offsets, &b.entries];
        let mut none = d.zeros::<u32>(0)?;
        d.launch::<Compose>(blocks(rows), (0, 0), (ab, rows, &mut offsets, &mut none))?;
        d.exclusive_scan(&mut offsets, rows + 1)?;
        let total = d.element(&offsets, rows as usize)?;
        let mut out = d.zeros(total as usize)?;
        d.launch::<Compose>(blocks(rows), (0, 0), (ab, rows, &mut offsets, &mut out))?;
        d.launch::<SortRows>(blocks(rows), (0, 0), (&offsets, &mut out, rows))?;
        Ok(Csr {
            offsets,
            entries: out,
            rows,
            columns: b.columns,
            nnz: total,
        })
    }
}

/// Each cell's edges (∂3 then ∂2), by ascending index.
///
/// # Errors
/// As [`compose`].
pub fn cell_edges(backend: &Backend, mesh: &VolumeMesh) -> Result<TernaryCsr, VolumeError> {
    compose(backend, mesh.d3(), mesh.d2())
}

/// Each cell's vertices (∂3 then [`face_vertices`]), by ascending index.
///
/// # Errors
/// As [`compose`].
pub fn cell_vertices(backend: &Backend, mesh: &VolumeMesh) -> Result<TernaryCsr, VolumeError> {
    compose(backend, mesh.d3(), &face_vertices(backend, mesh)?)
}

/// [`compose`] serially (the reference and the benchmark's serial run):
/// each row's indices collected, sorted and deduplicated.
pub fn compose_serial(a: &TernaryCsr, b: &TernaryCsr) -> TernaryCsr {
    let mut offsets = vec![0u32];
    let mut entries = Vec::new();
    let mut row = Vec::new();
    for r in 0..a.rows() {
        row.clear();
        for &e in a.row(r) {
            row.extend(b.row(index(e)).iter().map(|&x| index(x)));
        }
        row.sort_unstable();
        row.dedup();
        entries.extend_from_slice(&row);
        offsets.push(entries.len() as u32);
    }
    TernaryCsr::new(offsets, entries, b.columns()).expect("indices of b's columns")
}

/// [`face_vertices`] serially.
pub fn face_vertices_serial(mesh: &VolumeMesh) -> TernaryCsr {
    let entries = (0..mesh.d2().rows())
        .flat_map(|f| mesh.face_vertices(f))
        .collect();
    TernaryCsr::new(
        mesh.d2().offsets().to_vec(),
        entries,
        mesh.positions().len() as u32,
    )
    .expect("vertices of the mesh")
}
