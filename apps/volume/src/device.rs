//! The transposes of the boundary operators on a backend, by count, scan,
//! fill and a per-row sort (the paper's section 4, Algorithm 1), with the
//! kernels of `cavity-volume-kernels`: the GPU runs them on its stream,
//! the CPU backend runs the same kernels, one block per rayon worker.

use cavity::backend::kernel_args::KernelArgs;
use cavity::backend::{Backend, BackendError};
use cavity_device::kernel::Kernel;
use cavity_volume_kernels::{
    AddChunkOffsets, BOUNDS, CountColumns, FillTranspose, ScanChunks, SortRows, blocks, scan,
};
use cudarc::driver::CudaSlice;

use crate::VolumeError;
use crate::ternary::TernaryCsr;

/// An array of words on the backend.
pub(crate) enum Words {
    /// The CPU backend's: host memory.
    Host(Vec<u32>),
    /// The GPU's.
    Gpu(CudaSlice<u32>),
}

/// A ternary CSR matrix on the backend.
pub(crate) struct Csr {
    /// `rows + 1` words.
    pub(crate) offsets: Words,
    /// `nnz` words (at least one on the GPU).
    pub(crate) entries: Words,
    pub(crate) rows: u32,
    pub(crate) columns: u32,
    pub(crate) nnz: u32,
}

/// The backend with the arrays of one run.
#[derive(Clone, Copy)]
pub(crate) struct Device<'a> {
    pub(crate) backend: &'a Backend,
}

impl Device<'_> {
    /// A copy of `data` on the backend.
    pub(crate) fn upload(&self, data: &[u32]) -> Result<Words, VolumeError> {
        Ok(match self.backend {
            Backend::Cpu(_) => Words::Host(data.to_vec()),
            Backend::Cuda(gpu) => Words::Gpu(gpu.upload(data)?),
        })
    }

    /// `n` zeroed words on the backend.
    pub(crate) fn zeros(&self, n: usize) -> Result<Words, VolumeError> {
        Ok(match self.backend {
            Backend::Cpu(_) => Words::Host(vec![0; n]),
            // Set on the device: no host array crosses the bus (at least one
            // word, as `CudaBackend::upload` gives, for a valid address).
            Backend::Cuda(gpu) => {
                Words::Gpu(gpu.stream().alloc_zeros(n.max(1)).map_err(|source| {
                    BackendError::Driver {
                        what: "allocating a zeroed array",
                        source,
                    }
                })?)
            }
        })
    }

    /// The address of `words` as a kernel parameter.
    pub(crate) fn address(&self, words: &mut Words) -> u64 {
        match (self.backend, words) {
            (_, Words::Host(v)) => v.as_mut_ptr() as u64,
            (Backend::Cuda(gpu), Words::Gpu(s)) => gpu.address(s),
            (Backend::Cpu(_), Words::Gpu(_)) => unreachable!("GPU words on the CPU backend"),
        }
    }

    /// The address of `words` as the parameter of a kernel that only
    /// reads it.
    pub(crate) fn read(&self, words: &Words) -> u64 {
        match (self.backend, words) {
            (_, Words::Host(v)) => v.as_ptr() as u64,
            (Backend::Cuda(gpu), Words::Gpu(s)) => gpu.address(s),
            (Backend::Cpu(_), Words::Gpu(_)) => unreachable!("GPU words on the CPU backend"),
        }
    }

    /// A copy of the first `n` words of `words` on the backend.
    pub(crate) fn copy(&self, words: &Words, n: usize) -> Result<Words, VolumeError> {
        Ok(match (self.backend, words) {
            (_, Words::Host(v)) => Words::Host(v[..n].to_vec()),
            (Backend::Cuda(gpu), Words::Gpu(s)) => Words::Gpu(
                gpu.stream()
                    .clone_dtod(&s.slice(..n.max(1)))
                    .map_err(|source| BackendError::Driver {
                        what: "copying an array",
                        source,
                    })?,
            ),
            (Backend::Cpu(_), Words::Gpu(_)) => unreachable!("GPU words on the CPU backend"),
        })
    }

    /// `a` on the backend.
    pub(crate) fn upload_csr(&self, a: &TernaryCsr) -> Result<Csr, VolumeError> {
        Ok(Csr {
            offsets: self.upload(a.offsets())?,
            entries: self.upload(a.entries())?,
            rows: a.rows(),
            columns: a.columns(),
            nnz: a.entries().len() as u32,
        })
    }

    /// `a` on the host (checked).
    pub(crate) fn download_csr(&self, a: Csr) -> Result<TernaryCsr, VolumeError> {
        let offsets = self.download(a.offsets, a.rows as usize + 1)?;
        let entries = self.download(a.entries, a.nnz as usize)?;
        TernaryCsr::new(offsets, entries, a.columns)
    }

    /// The first `n` words of `words`, on the host (after the work
    /// launched so far).
    pub(crate) fn download(&self, words: Words, n: usize) -> Result<Vec<u32>, VolumeError> {
        Ok(match (self.backend, words) {
            (_, Words::Host(mut v)) => {
                v.truncate(n);
                v
            }
            (Backend::Cuda(gpu), Words::Gpu(s)) => gpu.download(&s, n)?,
            (Backend::Cpu(_), Words::Gpu(_)) => unreachable!("GPU words on the CPU backend"),
        })
    }

    /// Word `i` of `words` (after the work launched so far).
    pub(crate) fn word(&self, words: &Words, i: u32) -> Result<u32, VolumeError> {
        let i = i as usize;
        Ok(match (self.backend, words) {
            (_, Words::Host(v)) => v[i],
            (Backend::Cuda(gpu), Words::Gpu(s)) => gpu
                .stream()
                .clone_dtoh(&s.slice(i..i + 1))
                .map_err(|source| BackendError::Driver {
                    what: "reading a count back",
                    source,
                })?[0],
            (Backend::Cpu(_), Words::Gpu(_)) => unreachable!("GPU words on the CPU backend"),
        })
    }

    /// Launches `K` on `grid` blocks with `smem` bytes of shared memory
    /// (given for the GPU's blocks; the CPU backend's one-thread blocks
    /// get `cpu_smem`).
    ///
    /// # Safety
    /// `params` keep `K`'s contract; the arrays they address live until
    /// the next download.
    pub(crate) unsafe fn launch<K: Kernel>(
        &self,
        grid: u32,
        (smem, cpu_smem): (usize, usize),
        params: K::Params,
    ) -> Result<(), VolumeError>
    where
        K::Params: KernelArgs,
    {
        match self.backend {
            // SAFETY: the caller's contract.
            Backend::Cpu(cpu) => unsafe { cpu.launch::<K>(grid, cpu_smem, params) },
            Backend::Cuda(gpu) => {
                let kernel = gpu.load::<K>(smem)?;
                // SAFETY: the caller's contract.
                unsafe { gpu.launch(&kernel, grid, params) }?;
            }
        }
        Ok(())
    }

    /// Replaces `data[..n]` with its exclusive prefix sum ([`scan`]).
    pub(crate) fn exclusive_scan(&self, data: &mut Words, n: u32) -> Result<(), VolumeError> {
        let grid = blocks(n);
        let mut sums = self.zeros(grid as usize)?;
        let (d, s) = (self.address(data), self.address(&mut sums));
        let smem = (scan::shared_bytes(BOUNDS.threads), scan::shared_bytes(1));
        // SAFETY: `data` holds `n` words, `sums` one per block; both live
        // through the launches (the CPU backend's run before returning,
        // the GPU's are ordered on its stream before any later free).
        unsafe { self.launch::<ScanChunks>(grid, smem, (d, n, s))? };
        if grid > 1 {
            self.exclusive_scan(&mut sums, grid)?;
            // SAFETY: as above.
            unsafe { self.launch::<AddChunkOffsets>(grid, (0, 0), (d, n, s))? };
        }
        Ok(())
    }
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
    cavity_app_ptx::add_to(backend)?;
    let d = Device { backend };
    let t = d.transpose(&d.upload_csr(a)?)?;
    d.download_csr(t)
}

impl Device<'_> {
    /// [`transpose`] of a matrix on the backend.
    pub(crate) fn transpose(&self, a: &Csr) -> Result<Csr, VolumeError> {
        let d = self;
        let (rows, columns, nnz) = (a.rows, a.columns, a.nnz);
        // One word past the columns: the scan leaves the total there.
        let mut t_offsets = d.zeros(columns as usize + 1)?;
        let mut cursor = d.zeros(columns as usize)?;
        let mut t_entries = d.zeros(nnz as usize)?;
        let (o, e) = (d.read(&a.offsets), d.read(&a.entries));
        let (to, c, te) = (
            d.address(&mut t_offsets),
            d.address(&mut cursor),
            d.address(&mut t_entries),
        );
        // SAFETY: `entries` holds `nnz` words below `columns`, `t_offsets`
        // one per column and one more (`TernaryCsr::new` checked the
        // indices of every matrix that reaches the backend).
        unsafe { d.launch::<CountColumns>(blocks(nnz), (0, 0), (e, nnz, to))? };
        d.exclusive_scan(&mut t_offsets, columns + 1)?;
        // SAFETY: `offsets` holds `rows + 1` words delimiting `entries`;
        // `t_offsets` is the scan, `cursor` zeroed per column, `t_entries`
        // the total.
        unsafe { d.launch::<FillTranspose>(blocks(rows), (0, 0), (o, e, rows, to, c, te))? };
        // SAFETY: `t_offsets` holds `columns + 1` words delimiting
        // `t_entries`.
        unsafe { d.launch::<SortRows>(blocks(columns), (0, 0), (to, te, columns))? };
        Ok(Csr {
            offsets: t_offsets,
            entries: t_entries,
            rows: columns,
            columns: rows,
            nnz,
        })
    }
}
