//! Arrays of words on a backend, for count-scan-fill procedures: the
//! GPU's device memory or the CPU backend's host vectors behind one type
//! ([`Words`]), and the operations on them ([`Device`]): copies in and
//! out, zeroed arrays set on the device, kernel launches in
//! [`cavity_arrays_kernels::CHUNK`]s of items per block (the GPU runs them
//! on its stream, the CPU backend the same kernels, one block per rayon
//! worker), a device-wide exclusive scan and compaction.

use cavity::backend::cuda::kernel_args::KernelArgs;
use cavity::backend::{Backend, BackendError};
use cavity_arrays_kernels::{
    AddChunkOffsets, BOUNDS, Compact, CountBits, ListBits, ScanChunks, blocks, scan,
};
use cavity_device::kernel::Kernel;
use cudarc::driver::CudaSlice;

pub use cavity_arrays_kernels as kernels;

cavity::kernel_module!("cavity_arrays_kernels.ptx");

/// An array of words on the backend.
pub enum Words {
    /// The CPU backend's: host memory.
    Host(Vec<u32>),
    /// The GPU's.
    Gpu(CudaSlice<u32>),
}

/// The backend the arrays of one run live on.
#[derive(Clone, Copy)]
pub struct Device<'a> {
    backend: &'a Backend,
}

impl<'a> Device<'a> {
    /// `backend` with arrays on it.
    pub fn new(backend: &'a Backend) -> Self {
        Device { backend }
    }

    /// The backend.
    pub fn backend(&self) -> &'a Backend {
        self.backend
    }

    /// A copy of `data` on the backend.
    pub fn upload(&self, data: &[u32]) -> Result<Words, BackendError> {
        Ok(match self.backend {
            Backend::Cpu(_) => Words::Host(data.to_vec()),
            Backend::Cuda(gpu) => Words::Gpu(gpu.upload(data)?),
        })
    }

    /// `n` zeroed words on the backend.
    pub fn zeros(&self, n: usize) -> Result<Words, BackendError> {
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
    pub fn address(&self, words: &mut Words) -> u64 {
        match (self.backend, words) {
            (_, Words::Host(v)) => v.as_mut_ptr() as u64,
            (Backend::Cuda(gpu), Words::Gpu(s)) => gpu.address(s),
            (Backend::Cpu(_), Words::Gpu(_)) => unreachable!("GPU words on the CPU backend"),
        }
    }

    /// The address of `words` as the parameter of a kernel that only
    /// reads it.
    pub fn read(&self, words: &Words) -> u64 {
        match (self.backend, words) {
            (_, Words::Host(v)) => v.as_ptr() as u64,
            (Backend::Cuda(gpu), Words::Gpu(s)) => gpu.address(s),
            (Backend::Cpu(_), Words::Gpu(_)) => unreachable!("GPU words on the CPU backend"),
        }
    }

    /// A copy of the first `n` words of `words` on the backend.
    pub fn copy(&self, words: &Words, n: usize) -> Result<Words, BackendError> {
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

    /// The first `n` words of `words`, on the host (after the work
    /// launched so far).
    pub fn download(&self, words: Words, n: usize) -> Result<Vec<u32>, BackendError> {
        Ok(match (self.backend, words) {
            (_, Words::Host(mut v)) => {
                v.truncate(n);
                v
            }
            (Backend::Cuda(gpu), Words::Gpu(s)) => gpu.download(&s, n)?,
            (Backend::Cpu(_), Words::Gpu(_)) => unreachable!("GPU words on the CPU backend"),
        })
    }

    /// A copy of the first `n` words of `words` on the host, `words` kept
    /// (after the work launched so far).
    ///
    /// # Errors
    /// [`BackendError`] when the copy fails.
    pub fn read_back(&self, words: &Words, n: usize) -> Result<Vec<u32>, BackendError> {
        Ok(match (self.backend, words) {
            (_, Words::Host(v)) => v[..n].to_vec(),
            (Backend::Cuda(gpu), Words::Gpu(s)) => gpu.download(s, n)?,
            (Backend::Cpu(_), Words::Gpu(_)) => unreachable!("GPU words on the CPU backend"),
        })
    }

    /// Word `i` of `words` (after the work launched so far).
    pub fn word(&self, words: &Words, i: u32) -> Result<u32, BackendError> {
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
    /// # Errors
    /// [`BackendError`] when the GPU's kernel is missing (its PTX not
    /// added) or the launch fails.
    ///
    /// # Safety
    /// `params` keep `K`'s contract; the arrays they address live until
    /// the next download.
    pub unsafe fn launch<K: Kernel>(
        &self,
        grid: u32,
        (smem, cpu_smem): (usize, usize),
        params: K::Params,
    ) -> Result<(), BackendError>
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
    pub fn exclusive_scan(&self, data: &mut Words, n: u32) -> Result<(), BackendError> {
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

    /// The kept ones of `n` elements whose 0/1 marks are in `marks` (`n + 1`
    /// words, the last 0; replaced by their scan), as a list of their
    /// indices (complemented where `complement` is given and not 0), with
    /// its length.
    ///
    /// # Errors
    /// As [`Device::launch`].
    pub fn compact(
        &self,
        marks: &mut Words,
        complement: Option<&mut Words>,
        n: u32,
    ) -> Result<(Words, u32), BackendError> {
        self.exclusive_scan(marks, n + 1)?;
        let count = self.word(marks, n)?;
        let mut out = self.zeros(count as usize)?;
        let (m, o) = (self.address(marks), self.address(&mut out));
        let s = complement.map_or(0, |w| self.address(w));
        // SAFETY: `marks` holds the scan over `n + 1` words, `complement`
        // (unless 0) `n`, `out` the total.
        unsafe { self.launch::<Compact>(blocks(n), (0, 0), (m, s, n, o))? };
        Ok((out, count))
    }

    /// The set bits of the bitmask `bits` (`words` words, 32 elements a
    /// word) as the ascending list of their elements, with its length
    /// ([`cavity_arrays_kernels::bits`]).
    ///
    /// # Errors
    /// As [`Device::launch`].
    pub fn compact_bits(&self, bits: &Words, words: u32) -> Result<(Words, u32), BackendError> {
        let mut counts = self.zeros(words as usize + 1)?;
        let (b, c) = (self.read(bits), self.address(&mut counts));
        // SAFETY: `bits` holds `words` words, `counts` one more.
        unsafe { self.launch::<CountBits>(blocks(words), (0, 0), (b, words, c))? };
        self.exclusive_scan(&mut counts, words + 1)?;
        let count = self.word(&counts, words)?;
        let mut out = self.zeros(count as usize)?;
        let o = self.address(&mut out);
        // SAFETY: `counts` holds the scan of the bits' counts over
        // `words + 1` words, `out` the total.
        unsafe { self.launch::<ListBits>(blocks(words), (0, 0), (b, c, words, o))? };
        Ok((out, count))
    }
}
