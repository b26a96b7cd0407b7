//! Ternary CSR matrices on a backend (`Csr`, buffers of `cavity::backend::buffer`)
//! and their transposes, by count, scan, fill and a per-row sort (the
//! paper's section 4, Algorithm 1), with the kernels of
//! `cavity-volume-kernels`: the GPU runs them on its stream, the CPU
//! backend the same kernels, one block per rayon worker.

use cavity::backend::Backend;
use cavity::backend::buffer::Buffer;
use cavity_volume_kernels::{CountColumns, FillTranspose, SortRows, blocks};

use crate::VolumeError;
use crate::ternary::TernaryCsr;

/// A ternary CSR matrix on the backend.
pub(crate) struct Csr {
    /// `rows + 1` words.
    pub(crate) offsets: Buffer<u32>,
    /// `nnz` words.
    pub(crate) entries: Buffer<u32>,
    pub(crate) rows: u32,
    pub(crate) columns: u32,
    pub(crate) nnz: u32,
}

/// Ternary matrices on the backend.
pub(crate) trait CsrOps {
    /// `a` on the backend.
    fn upload_csr(&self, a: &TernaryCsr) -> Result<Csr, VolumeError>;
    /// `a` on the host (checked).
    fn download_csr(&self, a: Csr) -> Result<TernaryCsr, VolumeError>;
    /// [`transpose`] of a matrix on the backend.
    fn transpose(&self, a: &Csr) -> Result<Csr, VolumeError>;
}

/// The transpose of `a` on `backend`, equal to
/// [`TernaryCsr::transpose_serial`] (each row sorted by index): the
/// columns' entries counted with atomics, the counts scanned into the
/// offsets, each entry placed by an atomic cursor, each row sorted.
///
/// # Errors
/// [`VolumeError::Backend`] when the GPU's kernels are missing, a launch
/// or a copy fails.
pub fn transpose(backend: &Backend, a: &TernaryCsr) -> Result<TernaryCsr, VolumeError> {
    crate::add_kernels(backend)?;
    let t = backend.transpose(&backend.upload_csr(a)?)?;
    backend.download_csr(t)
}

impl CsrOps for Backend {
    fn upload_csr(&self, a: &TernaryCsr) -> Result<Csr, VolumeError> {
        Ok(Csr {
            offsets: self.upload(a.offsets())?,
            entries: self.upload(a.entries())?,
            rows: a.rows(),
            columns: a.columns(),
            nnz: a.entries().len() as u32,
        })
    }

    fn download_csr(&self, a: Csr) -> Result<TernaryCsr, VolumeError> {
        let offsets = self.download(a.offsets, a.rows as usize + 1)?;
        let entries = self.download(a.entries, a.nnz as usize)?;
        TernaryCsr::new(offsets, entries, a.columns)
    }

    fn transpose(&self, a: &Csr) -> Result<Csr, VolumeError> {
        let d = self;
        let (rows, columns, nnz) = (a.rows, a.columns, a.nnz);
        // One word past the columns: the scan leaves the total there.
        let mut t_offsets = d.zeros(columns as usize + 1)?;
        let mut cursor = d.zeros(columns as usize)?;
        let mut t_entries = d.zeros(nnz as usize)?;
        let (o, e) = (&a.offsets, &a.entries);
        d.launch::<CountColumns>(blocks(nnz), (0, 0), (e, nnz, &mut t_offsets))?;
        d.exclusive_scan(&mut t_offsets, columns + 1)?;
        let params = (o, e, rows, &t_offsets, &mut cursor, &mut t_entries);
        d.launch::<FillTranspose>(blocks(rows), (0, 0), params)?;
        d.launch::<SortRows>(
            blocks(columns),
            (0, 0),
            (&t_offsets, &mut t_entries, columns),
        )?;
        Ok(Csr {
            offsets: t_offsets,
            entries: t_entries,
            rows: columns,
            columns: rows,
            nnz,
        })
    }
}
