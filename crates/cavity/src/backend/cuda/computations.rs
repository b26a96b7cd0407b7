//! Per-element and ring computations on the resident mesh on the GPU:
//! a computation's kernel over every patch slot in use or a list of them
//! ([`ForEach`]), and ring kernels relaunched with more room until no ring
//! overflows ([`ForEachRing`]); patch computations with the rounds'
//! scratch ([`ForEachPatch`]).

use std::any::TypeId;

use cudarc::driver::{DevicePtr, DevicePtrMut};

use cavity_device::dynamic::compute::{self, ElementKernels, FOR_EACH_BOUNDS, ForEachKernel};
use cavity_device::dynamic::patch_computation::{PatchKernel, PatchKernels, Scratch};
use cavity_device::dynamic::ring::{self, RingKernel, RingKernels, RingScratch};
use cavity_device::kernel::Kernel;

use super::context::{LoadedKernel, driver};
use super::kernel_args::KernelArgs;
use super::rounds::{CavityKernel, CudaRounds};
use crate::rings::{ForEachRing, RingRoom};
use crate::rounds::{ForEach, ForEachPatch, RunError, check_patch_list, patch_scratch_words};

impl<C: ElementKernels> ForEach<C> for CudaRounds<'_> {
    fn for_each(&mut self, c: &C) -> Result<(), RunError> {
        self.launch_for_each(c, None)
    }

    fn for_each_in(&mut self, c: &C, patches: &[u32]) -> Result<(), RunError> {
        check_patch_list(patches, self.mesh.num_patches)?;
        if patches.is_empty() {
            return Ok(());
        }
        let s = &self.gpu.stream;
        let e = driver("copying a patch list to the GPU");
        if self
            .patch_list
            .as_ref()
            .is_none_or(|b| b.len() < patches.len())
        {
            self.patch_list = None;
            let len = patches.len().max(self.mesh.num_patches as usize);
            self.patch_list = Some(s.alloc_zeros::<u32>(len).map_err(e)?);
        }
        let list = self.patch_list.as_mut().expect("allocated above");
        s.memcpy_htod(patches, &mut list.slice_mut(..patches.len()))
            .map_err(e)?;
        let at = list.device_ptr(s).0;
        self.launch_for_each(c, Some((at, patches.len() as u32)))
    }
}

impl CudaRounds<'_> {
    /// Computation `C`'s kernel (loaded at first use) on every patch slot
    /// in use, or on the `(list, length)` of patch slots in device memory.
    fn launch_for_each<C: ElementKernels>(
        &mut self,
        c: &C,
        list: Option<(u64, u32)>,
    ) -> Result<(), RunError> {
        let id = TypeId::of::<ForEachKernel<C>>();
        if !self.updates.contains_key(&id) {
            let threads = FOR_EACH_BOUNDS.threads;
            let smem = compute::shared_bytes::<C>(&self.mesh.cap, threads);
            let loaded = self.gpu.load_carved::<ForEachKernel<C>>(smem)?;
            self.updates.insert(id, Box::new(loaded));
        }
        let loaded: &LoadedKernel<ForEachKernel<C>> = self.updates[&id]
            .downcast_ref()
            .expect("kernels are stored under their own type");
        let (at, grid) = list.unwrap_or((0, self.mesh.num_patches));
        // SAFETY: the buffers behind `raw` live as long as `self`; one
        // block per patch slot in use, or per entry of the list, which
        // holds `grid` distinct patch slots in use (`check_patch_list`),
        // copied before the launch on the same stream; the shared memory
        // the kernel was loaded with.
        unsafe { self.gpu.launch(loaded, grid, (self.raw, *c, at))? };
        Ok(())
    }
}

impl CudaRounds<'_> {
    /// Runs ring kernel `K` (loaded with the rings' shared memory) over
    /// the mesh with `params(scratch)` until no ring overflows
    /// ([`RingRoom::run`]); returns the room it took. Waits for the
    /// launch to read the status word.
    pub(super) fn launch_rings<K: Kernel>(
        &mut self,
        params: impl Fn(RingScratch) -> K::Params,
    ) -> Result<RingRoom, RunError>
    where
        K::Params: KernelArgs,
    {
        let smem = ring::shared_bytes(&self.mesh.cap, K::BOUNDS.threads);
        let resident = self.resident_kernel::<K>(smem)?.resident;
        let mut room = self.ring_room;
        let taken = room.run(|room| {
            let grid = room.grid(&self.mesh.cap, self.mesh.num_patches, resident);
            let (scratch, at) = self.ring_scratch(room, grid)?;
            let kernel: &CavityKernel<K::Params> = self.updates[&TypeId::of::<K>()]
                .downcast_ref()
                .expect("kernels are stored under their own type");
            // SAFETY: the scratch holds the words `scratch_words` gives for
            // the grid and the overflow word; the mesh's buffers and the
            // scratch live in `self`; the parameters' arrays are the
            // caller's.
            unsafe { self.gpu.launch(&kernel.loaded, grid, params(scratch))? };
            let s = &self.gpu.stream;
            let mut word = [0u32];
            let rings = self.rings.as_ref().expect("allocated by ring_scratch");
            s.memcpy_dtoh(&rings.slice(at..at + 1), &mut word)
                .and_then(|()| s.synchronize())
                .map_err(driver("reading the rings' status word"))?;
            Ok((room, word[0]))
        })?;
        self.ring_room = taken;
        Ok(taken)
    }

    /// The rings' scratch for `room` and `grid` blocks (grown when too
    /// small), with its status word zeroed, and that word's index.
    fn ring_scratch(
        &mut self,
        room: RingRoom,
        grid: u32,
    ) -> Result<(RingScratch, usize), RunError> {
        let at = ring::scratch_words(&self.mesh.cap, grid, room.capacity()) as usize;
        let s = &self.gpu.stream;
        let e = driver("allocating the rings' scratch");
        if self.rings.as_ref().is_none_or(|b| b.len() <= at) {
            self.rings = None;
            self.rings = Some(s.alloc_zeros::<u32>(at + 1).map_err(e)?);
        }
        let rings = self.rings.as_mut().expect("allocated above");
        s.memset_zeros(&mut rings.slice_mut(at..at + 1))
            .map_err(e)?;
        let base = rings.device_ptr(s).0;
        let scratch = RingScratch {
            entries: base,
            overflow: base + 4 * at as u64,
            capacity: room.capacity(),
            pad: 0,
        };
        Ok((scratch, at))
    }
}

impl<C: RingKernels> ForEachRing<C> for CudaRounds<'_> {
    fn for_each_ring(&mut self, c: &C) -> Result<(), RunError> {
        let (raw, c) = (self.raw, *c);
        self.launch_rings::<RingKernel<C>>(|scratch| (raw, c, scratch))?;
        Ok(())
    }
}

impl<C: PatchKernels> ForEachPatch<C> for CudaRounds<'_> {
    fn for_each_patch(&mut self, c: &C) -> Result<(), RunError> {
        let words = patch_scratch_words(c, &self.mesh.cap)?;
        let threads = PatchKernel::<C>::BOUNDS.threads;
        let smem = c.shared_bytes(&self.mesh.cap, threads);
        let id = TypeId::of::<PatchKernel<C>>();
        if !self.updates.contains_key(&id) {
            // Shared memory carved out of the L1 cache only for a body
            // that takes it: one that reads the scratch keeps the cache.
            let loaded = if smem > 0 {
                self.gpu.load_carved::<PatchKernel<C>>(smem)?
            } else {
                self.gpu.load::<PatchKernel<C>>(smem)?
            };
            self.updates.insert(id, Box::new(loaded));
        }
        let s = self.gpu.stream();
        let e = driver("growing the patch computations' scratch");
        if self.scratch.as_ref().is_none_or(|b| b.len() < words) {
            let mut grown = s.alloc_zeros::<u32>(words.max(1)).map_err(e)?;
            if let Some(old) = self.scratch.take() {
                let kept = old.len().min(words);
                s.memcpy_dtod(&old.slice(..kept), &mut grown.slice_mut(..kept))
                    .map_err(e)?;
            }
            self.scratch = Some(grown);
        }
        let scratch = self.scratch.as_mut().expect("allocated above");
        let len = scratch.len() as u32;
        let (addr, _written) = scratch.device_ptr_mut(s);
        // SAFETY: the scratch lives in `self`, on this stream, whose later
        // work is ordered after the launch.
        let scratch = unsafe { Scratch::from_raw(addr, len) };
        let loaded: &LoadedKernel<PatchKernel<C>> = self.updates[&id]
            .downcast_ref()
            .expect("kernels are stored under their own type");
        let (raw, grid) = (self.raw, self.mesh.num_patches);
        // SAFETY: the buffers behind `raw` live as long as `self`; one block
        // per patch slot in use; the shared memory the kernel was loaded
        // with.
        unsafe { self.gpu.launch(loaded, grid, (raw, *c, scratch))? };
        Ok(())
    }
}
