//! Update rounds of dynamic applications on the GPU ([`crate::rounds`]):
//! the dynamic mesh uploaded once ([`CudaRounds::new`]) and kept on the
//! device, each round launched before the previous round's status is read
//! (the status travels in `Snapshot`s), reductions,
//! counts, marks and exports read back, the mesh copied back on request.

use std::any::{Any, TypeId};
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use rayon::prelude::*;

use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags};
use cudarc::driver::{CudaEvent, CudaSlice, DevicePtr};

use cavity_device::attribute::Reduction;
use cavity_device::dynamic::cleanup::{self, Calibrate, Compact};
use cavity_device::dynamic::compute::{self, ExportQuery, FOR_EACH_BOUNDS};
use cavity_device::dynamic::gather::{GatherByInput, ScatterByInput};
use cavity_device::dynamic::layout::{NO_PATCH, RawDynamicMesh, STASH_SIZE, stat};
use cavity_device::dynamic::queue;
use cavity_device::dynamic::reduce::{self, Reduce};
use cavity_device::dynamic::ring::ExportRing;
use cavity_device::dynamic::scheduler::{self, Refill};
use cavity_device::dynamic::slice::{self, Slice};
use cavity_device::dynamic::update::{self, CavityKernels, SurveyKernel, UpdateKernel};
use cavity_device::kernel::{DYNAMIC_BOUNDS, ELEMENT_BOUNDS, Kernel};
use cavity_device::layout::Kind;
use cavity_device::query::Query;

use super::context::{CudaBackend, Loaded, LoadedKernel, driver};
use super::kernel_args::KernelArgs;
use super::snapshot::{GpuSeconds, PatchPrefix, Snapshot};
use crate::attributes::{self, AttributeLayout};
use crate::backend::error::BackendError;
use crate::dynamic::DynamicMesh;
use crate::dynamic::{check_by_input, check_words, check_writable};
use crate::query_result::QueryResult;
use crate::rings::RingRoom;
use crate::rounds::{OwnedWords, Rounds, RunError, SlotRows, Status, Update, take_marks};

/// Device copies of a [`DynamicMesh`]'s arrays.
pub(super) struct DynamicBuffers {
    pub(super) counts: CudaSlice<u32>,
    /// FE and EV as words of two 16-bit entries.
    pub(super) fe: CudaSlice<u32>,
    pub(super) ev: CudaSlice<u32>,
    pub(super) masks: CudaSlice<u32>,
    pub(super) hash: CudaSlice<u32>,
    pub(super) stash: CudaSlice<u32>,
    pub(super) locks: CudaSlice<u32>,
    pub(super) flags: CudaSlice<u32>,
    pub(super) declined: CudaSlice<u32>,
    pub(super) vertex_attrs: CudaSlice<u32>,
    pub(super) edge_attrs: CudaSlice<u32>,
    pub(super) face_attrs: CudaSlice<u32>,
    pub(super) queue: CudaSlice<u32>,
    pub(super) queue_state: CudaSlice<u32>,
    pub(super) stats: CudaSlice<u32>,
}

/// A cavity application's update or survey kernel with the most blocks
/// the device holds at once: the most an update round launches (each
/// block takes patches until the round's share is taken).
pub(super) struct CavityKernel<P> {
    pub(super) loaded: Loaded<P>,
    pub(super) resident: u32,
}

/// Update rounds of dynamic applications on the GPU (see
/// [`crate::rounds`]): the mesh lives on the device from [`CudaRounds::new`]
/// on; [`Rounds::mesh`] copies it back.
pub struct CudaRounds<'a> {
    pub(super) gpu: &'a CudaBackend,
    pub(super) mesh: &'a mut DynamicMesh,
    pub(super) bufs: DynamicBuffers,
    pub(super) raw: RawDynamicMesh,
    /// Each application's update and survey kernels (a [`CavityKernel`]
    /// of their parameters) and each computation's kernel (a
    /// [`LoadedKernel`]), by kernel type, prepared at first use.
    pub(super) updates: HashMap<TypeId, Box<dyn Any>>,
    pub(super) calibrate: LoadedKernel<Calibrate>,
    pub(super) compact: LoadedKernel<Compact>,
    pub(super) refill: LoadedKernel<Refill>,
    pub(super) slice: LoadedKernel<Slice>,
    pub(super) reduce: LoadedKernel<Reduce>,
    /// One `f64` per patch slot for the reductions' partials, allocated at
    /// the first reduction.
    pub(super) partials: Option<CudaSlice<f64>>,
    /// The patch computations' scratch, grown as they ask.
    pub(super) scratch: Option<CudaSlice<u32>>,
    /// The rings' scratch (`crate::rings`), grown as needed.
    pub(super) rings: Option<CudaSlice<u32>>,
    /// The last patch list of `for_each_in` (at least a word per patch).
    pub(super) patch_list: Option<CudaSlice<u32>>,
    /// The room the rings needed so far.
    pub(super) ring_room: RingRoom,
    pub(super) seconds: GpuSeconds,
    /// Update rounds launched (the next round's salt).
    pub(super) rounds: u32,
    /// The statuses taken after launched rounds and not read yet, oldest
    /// first (`Rounds::round_status`).
    pub(super) pending: VecDeque<Snapshot>,
    /// Snapshots read, whose host buffers are reused.
    pub(super) spare: Vec<Snapshot>,
    /// For a layout made on the device ([`CudaRounds::with_resident`]):
    /// its host arrays, allocated and written on another thread while the
    /// rounds run, for the copy back.
    pub(super) allocating: Option<std::thread::JoinHandle<DynamicMesh>>,
    /// [`GatherByInput`], loaded at its first use.
    pub(super) gather: Option<LoadedKernel<GatherByInput>>,
    /// [`ScatterByInput`], loaded at its first use.
    pub(super) scatter: Option<LoadedKernel<ScatterByInput>>,
}

impl<'a> CudaRounds<'a> {
    /// Uploads `mesh` and prepares the cleanup and slicing
    /// kernels. Errors when a kernel's shared memory exceeds the device's
    /// limit (lower the capacity factor or the patch size); an
    /// application's update kernel is checked at its first round, a
    /// per-element computation's at its first `for_each`.
    pub fn new(gpu: &'a CudaBackend, mesh: &'a mut DynamicMesh) -> Result<Self, BackendError> {
        let start = Instant::now();
        let used = PatchPrefix::of(mesh);
        let bufs = DynamicBuffers {
            counts: used.upload(gpu, &mesh.counts, 0)?,
            fe: used.upload_halves(gpu, &mesh.fe)?,
            ev: used.upload_halves(gpu, &mesh.ev)?,
            masks: used.upload(gpu, &mesh.masks, 0)?,
            hash: used.upload(gpu, &mesh.hash, 0xff)?,
            stash: used.upload(gpu, &mesh.stash, 0xff)?,
            locks: gpu.upload(&mesh.locks)?,
            flags: gpu.upload(&mesh.flags)?,
            declined: used.upload(gpu, &mesh.declined, 0)?,
            vertex_attrs: used.upload(gpu, &mesh.vertex_attrs, 0)?,
            edge_attrs: used.upload(gpu, &mesh.edge_attrs, 0)?,
            face_attrs: used.upload(gpu, &mesh.face_attrs, 0)?,
            queue: gpu.upload(&mesh.queue)?,
            queue_state: gpu.upload(&mesh.queue_state)?,
            stats: gpu.upload(&mesh.stats)?,
        };
        gpu.stream
            .synchronize()
            .map_err(driver("copying to the GPU"))?;
        let upload = start.elapsed().as_secs_f64();
        Self::with_buffers(gpu, mesh, bufs, upload)
    }

    /// The rounds over a layout made on the device
    /// (`crate::backend::PlacedMesh`): `mesh` is its shell (the patch
    /// arrays not allocated: the copy back allocates them), `arrays` its counts,
    /// FE and EV (words of two entries), masks, tables, stashes and the
    /// attributes of vertices, edges and faces; the locks, flags,
    /// declined seeds, queue and statistics start empty
    /// (`DynamicMesh::allocate_state`, on the host and then here). Where the
    /// mesh `copies_back`, its host arrays are made while the rounds run.
    /// As [`CudaRounds::new`] otherwise.
    pub(crate) fn with_resident(
        gpu: &'a CudaBackend,
        mesh: &'a mut DynamicMesh,
        arrays: [CudaSlice<u32>; 9],
        copies_back: bool,
    ) -> Result<Self, BackendError> {
        let start = Instant::now();
        // The arrays the rounds start empty, as any layout's.
        mesh.allocate_state();
        let used = PatchPrefix::of(mesh);
        let [
            counts,
            fe,
            ev,
            masks,
            hash,
            stash,
            vertex_attrs,
            edge_attrs,
            face_attrs,
        ] = arrays;
        let bufs = DynamicBuffers {
            counts,
            fe,
            ev,
            masks,
            hash,
            stash,
            locks: gpu.upload(&mesh.locks)?,
            flags: gpu.upload(&mesh.flags)?,
            declined: used.upload(gpu, &mesh.declined, 0)?,
            vertex_attrs,
            edge_attrs,
            face_attrs,
            queue: gpu.upload(&mesh.queue)?,
            queue_state: gpu.upload(&mesh.queue_state)?,
            stats: gpu.upload(&mesh.stats)?,
        };
        gpu.stream
            .synchronize()
            .map_err(driver("allocating the dynamic mesh on the GPU"))?;
        // The host's copy of the layout is allocated, its pages written,
        // while the GPU works (the host is idle then): the copy back then
        // finds them in place, as it does for an uploaded mesh.
        let shell = copies_back.then(|| mesh.clone());
        let mut rounds = Self::with_buffers(gpu, mesh, bufs, start.elapsed().as_secs_f64())?;
        rounds.allocating = shell.map(|mut shell| {
            std::thread::spawn(move || {
                shell.allocate(true);
                shell
            })
        });
        Ok(rounds)
    }

    /// The rounds over `mesh`, whose arrays are `bufs` on the device
    /// (`upload` seconds to put them there), with the cleanup, slicing
    /// and reduction kernels loaded.
    fn with_buffers(
        gpu: &'a CudaBackend,
        mesh: &'a mut DynamicMesh,
        bufs: DynamicBuffers,
        upload: f64,
    ) -> Result<Self, BackendError> {
        let s = &gpu.stream;
        let raw = RawDynamicMesh {
            cap: mesh.cap,
            num_patches: mesh.num_patches,
            reserved: 0,
            counts: bufs.counts.device_ptr(s).0,
            fe: bufs.fe.device_ptr(s).0,
            ev: bufs.ev.device_ptr(s).0,
            masks: bufs.masks.device_ptr(s).0,
            hash: bufs.hash.device_ptr(s).0,
            stash: bufs.stash.device_ptr(s).0,
            locks: bufs.locks.device_ptr(s).0,
            flags: bufs.flags.device_ptr(s).0,
            declined: bufs.declined.device_ptr(s).0,
            vertex_attrs: bufs.vertex_attrs.device_ptr(s).0,
            edge_attrs: bufs.edge_attrs.device_ptr(s).0,
            face_attrs: bufs.face_attrs.device_ptr(s).0,
            queue: bufs.queue.device_ptr(s).0,
            queue_state: bufs.queue_state.device_ptr(s).0,
            stats: bufs.stats.device_ptr(s).0,
        };
        let threads = DYNAMIC_BOUNDS.threads;
        let compact =
            gpu.load_carved::<Compact>(cleanup::compact_shared_bytes(&mesh.cap, threads))?;
        let refill = gpu.load_carved::<Refill>(scheduler::refill_shared_bytes(threads))?;
        let slice = gpu.load_carved::<Slice>(slice::shared_bytes(&mesh.cap, threads))?;
        let calibrate = gpu.load::<Calibrate>(0)?;
        Ok(CudaRounds {
            gpu,
            mesh,
            bufs,
            raw,
            updates: HashMap::new(),
            calibrate,
            compact,
            refill,
            slice,
            reduce: gpu.load::<Reduce>(reduce::shared_bytes(ELEMENT_BOUNDS.threads))?,
            partials: None,
            scratch: None,
            rings: None,
            patch_list: None,
            ring_room: RingRoom::default(),
            rounds: 0,
            pending: VecDeque::new(),
            spare: Vec::new(),
            allocating: None,
            gather: None,
            scatter: None,
            seconds: GpuSeconds {
                upload,
                ..GpuSeconds::default()
            },
        })
    }

    /// Where the time went so far.
    pub fn seconds(&self) -> GpuSeconds {
        self.seconds
    }

    /// The cleanup kernels over the `n` patches in use: calibration, then
    /// compaction.
    fn cleanup(&self, n: u32) -> Result<(), BackendError> {
        // SAFETY: the buffers behind `raw` live as long as `self`; nothing
        // else runs on the mesh meanwhile (one stream).
        unsafe {
            self.gpu.launch(&self.calibrate, n, (self.raw,))?;
            self.gpu.launch(&self.compact, n, (self.raw,))
        }
    }

    /// Application `A`'s kernel `K` (update or survey), loaded at first use.
    pub(super) fn cavity_kernel<A: CavityKernels, K: Kernel<Params = (RawDynamicMesh, u32, A)>>(
        &mut self,
    ) -> Result<&CavityKernel<K::Params>, BackendError> {
        let smem = update::shared_bytes::<A>(&self.mesh.cap, K::BOUNDS.threads);
        self.resident_kernel::<K>(smem)
    }

    /// Kernel `K` with `smem` bytes of shared memory and the most blocks
    /// the device holds at once, loaded at first use.
    pub(super) fn resident_kernel<K: Kernel>(
        &mut self,
        smem: usize,
    ) -> Result<&CavityKernel<K::Params>, BackendError>
    where
        K::Params: KernelArgs,
    {
        let id = TypeId::of::<K>();
        if !self.updates.contains_key(&id) {
            let threads = K::BOUNDS.threads;
            let loaded = self.gpu.load_carved::<K>(smem)?;
            let per_sm = loaded
                .f
                .occupancy_max_active_blocks_per_multiprocessor(threads, smem, None)
                .map_err(driver("reading a kernel's occupancy"))?;
            let sms = self
                .gpu
                .ctx
                .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                .map_err(driver("reading the multiprocessor count"))?;
            let resident = (per_sm * sms.max(1) as u32).max(1);
            self.updates
                .insert(id, Box::new(CavityKernel { loaded, resident }));
        }
        Ok(self.updates[&id]
            .downcast_ref()
            .expect("kernels are stored under their own type"))
    }

    /// Copies the scheduler's state to a snapshot behind the work launched
    /// so far, with the events of the round it ends (if any).
    fn take_snapshot(&mut self, timing: Option<[CudaEvent; 4]>) -> Result<Snapshot, BackendError> {
        let e = driver("reading the scheduler's state");
        let mut snap = match self.spare.pop() {
            Some(snap) => snap,
            None => Snapshot::new(
                &self.gpu.ctx,
                stat::COUNT as usize,
                self.mesh.cap.patches as usize,
            )
            .map_err(e)?,
        };
        let s = &self.gpu.stream;
        let copied = s
            .memcpy_dtoh(&self.bufs.queue_state, &mut snap.queue_state)
            .and_then(|()| s.memcpy_dtoh(&self.bufs.stats, &mut snap.stats))
            .and_then(|()| s.memcpy_dtoh(&self.bufs.flags, &mut snap.flags))
            .and_then(|()| s.record_event(None));
        match copied {
            Ok(done) => {
                snap.done = Some(done);
                snap.timing = timing;
                Ok(snap)
            }
            Err(err) => {
                // A copy may still be under way: the buffers are freed only
                // after the stream (a failure here is the same context's).
                let _ = s.synchronize();
                Err(e(err))
            }
        }
    }

    /// The mesh's arrays on the device, as its kernels take them.
    pub(crate) fn raw(&self) -> RawDynamicMesh {
        self.raw
    }

    /// The mesh's input counts of vertices, edges and faces.
    pub(crate) fn inputs(&self) -> [u32; 3] {
        crate::backend::export::input_counts(self.mesh)
    }

    /// Whether these rounds run on `gpu`.
    pub(crate) fn runs_on(&self, gpu: &CudaBackend) -> bool {
        std::ptr::eq(self.gpu, gpu)
    }

    /// Reads snapshot `snap` and keeps its buffers for reuse.
    fn read_snapshot(&mut self, mut snap: Snapshot) -> Result<Status, RunError> {
        let status = snap
            .read(&mut self.seconds)
            .map_err(driver("reading the scheduler's state"))?;
        self.spare.push(snap);
        Ok(status)
    }

    /// Copies the mesh back: the used patch slots of the per-patch arrays,
    /// the whole of the others.
    fn copy_back(&mut self) -> Result<(), BackendError> {
        let start = Instant::now();
        let s = &self.gpu.stream;
        let b = &self.bufs;
        let used = PatchPrefix::of(self.mesh);
        if let Some(allocating) = self.allocating.take() {
            let arrays = allocating
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            self.mesh.take_arrays(arrays);
        }
        let m = &mut *self.mesh;
        m.allocate(true);
        let e = driver("copying the dynamic mesh back");
        used.download(s, &b.counts, &mut m.counts).map_err(e)?;
        used.download_halves(s, &b.fe, &mut m.fe)?;
        used.download_halves(s, &b.ev, &mut m.ev)?;
        used.download(s, &b.masks, &mut m.masks).map_err(e)?;
        used.download(s, &b.hash, &mut m.hash).map_err(e)?;
        used.download(s, &b.stash, &mut m.stash).map_err(e)?;
        s.memcpy_dtoh(&b.locks, &mut m.locks[..]).map_err(e)?;
        s.memcpy_dtoh(&b.flags, &mut m.flags[..]).map_err(e)?;
        used.download(s, &b.vertex_attrs, &mut m.vertex_attrs)
            .map_err(e)?;
        used.download(s, &b.edge_attrs, &mut m.edge_attrs)
            .map_err(e)?;
        used.download(s, &b.face_attrs, &mut m.face_attrs)
            .map_err(e)?;
        s.memcpy_dtoh(&b.queue, &mut m.queue[..]).map_err(e)?;
        s.memcpy_dtoh(&b.queue_state, &mut m.queue_state[..])
            .map_err(e)?;
        s.memcpy_dtoh(&b.stats, &mut m.stats[..]).map_err(e)?;
        s.synchronize().map_err(e)?;
        self.seconds.copy_back += start.elapsed().as_secs_f64();
        Ok(())
    }
}

impl CudaRounds<'_> {
    /// [`Rounds::owned_words`] (and, where `owners`, the owner patches of
    /// [`Rounds::owner_patches`]) by [`GatherByInput`]: the words by input
    /// index and which inputs the mesh holds read back, then the inputs
    /// it holds kept in order; `None` when an active owned element has no
    /// input index (one a fill-in added), or shares one with another,
    /// whose place the input indices do not give.
    fn gather_by_input(
        &mut self,
        kind: Kind,
        first: u32,
        words: u32,
        owners: bool,
    ) -> Result<Option<Gathered>, BackendError> {
        let inputs = self.mesh.input_count(kind);
        let len = u32::try_from(u64::from(inputs) * u64::from(words))
            .map_err(|_| BackendError::TooLarge(inputs as usize * words as usize))?;
        let s = &self.gpu.stream;
        let e = driver("reading attribute words back");
        let gather = match &self.gather {
            Some(loaded) => loaded,
            None => self.gather.insert(self.gpu.load::<GatherByInput>(0)?),
        };
        let out = s.alloc_zeros::<u32>(len.max(1) as usize).map_err(e)?;
        let present = s.alloc_zeros::<u32>(inputs.max(1) as usize).map_err(e)?;
        let owner = s
            .alloc_zeros::<u32>(if owners { inputs.max(1) as usize } else { 1 })
            .map_err(e)?;
        let strays = s.alloc_zeros::<u32>(1).map_err(e)?;
        let params = (
            self.raw,
            kind as u32,
            first,
            words,
            inputs,
            out.device_ptr(s).0,
            present.device_ptr(s).0,
            if owners { owner.device_ptr(s).0 } else { 0 },
            strays.device_ptr(s).0,
        );
        // SAFETY: the buffers behind `raw` live as long as `self` and
        // nothing else runs on the mesh meanwhile (one stream); the words
        // lie within the kind's attribute words (checked by the caller);
        // `out`, `present`, `owner` and `strays` have the lengths the
        // kernel writes, zeroed.
        unsafe { self.gpu.launch(gather, self.mesh.num_patches, params)? };
        if self.gpu.download(&strays, 1)?[0] != 0 {
            return Ok(None);
        }
        let values = self.gpu.download(&out, len as usize)?;
        let present = self.gpu.download(&present, inputs as usize)?;
        let owner = if owners {
            self.gpu.download(&owner, inputs as usize)?
        } else {
            Vec::new()
        };
        // An input index held by two elements (a fill-in's copy) leaves
        // the order to the host's.
        if present.par_iter().any(|&n| n > 1) {
            return Ok(None);
        }
        // Every input element present (a mesh the rounds left as it came):
        // the words are in order already.
        if present.par_iter().all(|&n| n == 1) {
            return Ok(Some(Gathered {
                sources: (0..inputs).into_par_iter().collect(),
                words: values,
                owners: owner,
            }));
        }
        let sources: Vec<u32> = (0..inputs)
            .into_par_iter()
            .filter(|&i| present[i as usize] != 0)
            .collect();
        let w = words as usize;
        let mut kept: Vec<u32> = bytemuck::zeroed_vec(sources.len() * w);
        kept.par_chunks_mut(w.max(1))
            .zip(&sources)
            .for_each(|(to, &i)| to.copy_from_slice(&values[i as usize * w..][..w]));
        let owners = if owners {
            sources.par_iter().map(|&i| owner[i as usize]).collect()
        } else {
            Vec::new()
        };
        Ok(Some(Gathered {
            sources,
            words: kept,
            owners,
        }))
    }
}

/// What [`CudaRounds::gather_by_input`] read: the input indices, the
/// words and the owner patches (empty unless asked) of the active owned
/// elements of a kind, in element order.
struct Gathered {
    sources: Vec<u32>,
    words: Vec<u32>,
    owners: Vec<u32>,
}

impl Drop for CudaRounds<'_> {
    /// Waits for the host arrays' allocation where the mesh was never
    /// copied back (a failed driver), so that no thread outlives the
    /// rounds.
    fn drop(&mut self) {
        if let Some(allocating) = self.allocating.take() {
            // Its panic, if any, is the allocator's: nothing to resume
            // while dropping.
            let _ = allocating.join();
        }
    }
}

impl<A: CavityKernels> Update<A> for CudaRounds<'_> {
    fn survey(&mut self, app: &A) -> Result<(), RunError> {
        let (raw, salt, grid) = (self.raw, self.rounds, self.mesh.num_patches);
        let gpu = self.gpu;
        let survey = self.cavity_kernel::<A, SurveyKernel<A>>()?;
        // SAFETY: the buffers behind `raw` live as long as `self`; the
        // shared memory is the application's (`cavity_kernel`).
        unsafe { gpu.launch(&survey.loaded, grid, (raw, salt, *app))? };
        Ok(())
    }

    fn round(&mut self, app: &A, blocks: u32) -> Result<(), RunError> {
        let salt = self.rounds;
        self.rounds = self.rounds.wrapping_add(1);
        let (raw, gpu) = (self.raw, self.gpu);
        let update = self.cavity_kernel::<A, UpdateKernel<A>>()?;
        let blocks = blocks.min(update.resident);
        let s = &gpu.stream;
        let e = driver("timing a dynamic kernel");
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let t0 = s.record_event(flags).map_err(e)?;
        // SAFETY: the buffers behind `raw` live as long as `self`; the
        // shared memory is the application's (`cavity_kernel`).
        unsafe { gpu.launch(&update.loaded, blocks, (raw, salt, *app))? };
        let t1 = s.record_event(flags).map_err(e)?;
        let n = self.mesh.num_patches;
        // SAFETY: as for `cleanup`.
        unsafe { gpu.launch(&self.calibrate, n, (raw,))? };
        let t2 = s.record_event(flags).map_err(e)?;
        // SAFETY: as above.
        unsafe { gpu.launch(&self.compact, n, (raw,))? };
        let t3 = s.record_event(flags).map_err(e)?;
        let snap = self.take_snapshot(Some([t0, t1, t2, t3]))?;
        self.pending.push_back(snap);
        Ok(())
    }
}

impl Rounds for CudaRounds<'_> {
    fn refill(&mut self, changed_only: bool) -> Result<(), RunError> {
        // SAFETY: the buffers behind `raw` live as long as `self`.
        unsafe {
            self.gpu
                .launch(&self.refill, 1, (self.raw, changed_only as u32))?
        };
        Ok(())
    }

    fn slice(&mut self, seed: Kind) -> Result<(), RunError> {
        let grid = self.mesh.num_patches;
        // SAFETY: as above.
        unsafe {
            self.gpu
                .launch(&self.slice, grid, (self.raw, seed as u32))?
        };
        let s = &self.gpu.stream;
        let e = driver("reading the patch count");
        let mut queue_state = [0u32; queue::STATE_WORDS as usize];
        s.memcpy_dtoh(&self.bufs.queue_state, &mut queue_state[..])
            .map_err(e)?;
        s.synchronize().map_err(e)?;
        let n = queue_state[queue::PATCHES as usize];
        self.mesh.num_patches = n;
        self.raw.num_patches = n;
        self.cleanup(n)?;
        Ok(())
    }

    fn attributes(&self) -> &AttributeLayout {
        self.mesh.attributes()
    }

    fn export_query(&mut self, query: Query) -> Result<SlotRows, RunError> {
        let cap = self.mesh.cap;
        let slots = (cap.patches * cap.of(query.source())) as usize;
        let smem = compute::shared_bytes_of(query, &cap, FOR_EACH_BOUNDS.threads);
        let kernel = self.gpu.load_carved::<ExportQuery>(smem)?;
        let (gpu, s) = (self.gpu, &self.gpu.stream);
        let e = driver("exporting a query");
        let counts = s.alloc_zeros::<u32>(slots.max(1)).map_err(e)?;
        let (grid, raw, q) = (self.mesh.num_patches, self.raw, query as u32);
        let at = |b: &CudaSlice<u32>| b.device_ptr(s).0;
        // SAFETY: `counts` holds one entry per source slot; the counting
        // pass writes no values; the mesh's buffers live in `self`.
        unsafe { gpu.launch(&kernel, grid, (raw, q, at(&counts), 0u64, 0u64))? };
        let mut host = gpu.download(&counts, slots)?;
        let mut offsets = QueryResult::offsets_of(&host);
        let total = offsets.pop().unwrap_or(0);
        let dev_offsets = gpu.upload(&offsets)?;
        let values = s.alloc_zeros::<u32>(total.max(1) as usize).map_err(e)?;
        // SAFETY: as above; `values` holds the rows `offsets` place.
        unsafe {
            gpu.launch(
                &kernel,
                grid,
                (raw, q, at(&counts), at(&dev_offsets), at(&values)),
            )?
        };
        let values = gpu.download(&values, total as usize)?;
        host.truncate(slots);
        Ok(SlotRows {
            counts: host,
            offsets,
            values,
        })
    }

    fn export_ring(&mut self, k: u32) -> Result<SlotRows, RunError> {
        let cap = self.mesh.cap;
        let slots = (cap.patches * cap.vertices) as usize;
        let e = driver("exporting the k-rings");
        let counts = self
            .gpu
            .stream
            .alloc_zeros::<u32>(slots.max(1))
            .map_err(e)?;
        let at = |b: &CudaSlice<u32>| b.device_ptr(&self.gpu.stream).0;
        let (raw, counted) = (self.raw, at(&counts));
        self.launch_rings::<ExportRing>(|scratch| (raw, k, scratch, counted, 0, 0))?;
        let mut host = self.gpu.download(&counts, slots)?;
        let mut offsets = QueryResult::offsets_of(&host);
        let total = offsets.pop().unwrap_or(0);
        let dev_offsets = self.gpu.upload(&offsets)?;
        let values = self
            .gpu
            .stream
            .alloc_zeros::<u32>(total.max(1) as usize)
            .map_err(e)?;
        let (placed, filled) = (at(&dev_offsets), at(&values));
        // The same rings fit the room the counting pass found.
        self.launch_rings::<ExportRing>(|scratch| (raw, k, scratch, counted, placed, filled))?;
        let values = self.gpu.download(&values, total as usize)?;
        host.truncate(slots);
        Ok(SlotRows {
            counts: host,
            offsets,
            values,
        })
    }

    fn take_count(&mut self) -> Result<u64, RunError> {
        let s = &self.gpu.stream;
        let e = driver("taking the computations' count");
        let at = cavity_device::dynamic::layout::stat::COUNTED as usize;
        let mut counted = [0u32];
        let mut word = self.bufs.stats.slice_mut(at..at + 1);
        s.memcpy_dtoh(&word, &mut counted)
            .and_then(|()| s.memset_zeros(&mut word))
            .and_then(|()| s.synchronize())
            .map_err(e)?;
        Ok(u64::from(counted[0]))
    }

    fn take_marked_patches(&mut self) -> Result<Vec<u32>, RunError> {
        let s = &self.gpu.stream;
        let e = driver("taking the marked patches");
        let patches = self.mesh.num_patches as usize;
        let mut flags = vec![0u32; patches];
        let mut on_device = self.bufs.flags.slice_mut(..patches);
        s.memcpy_dtoh(&on_device, &mut flags)
            .and_then(|()| s.synchronize())
            .map_err(e)?;
        let marked = take_marks(&mut flags);
        if !marked.is_empty() {
            // Nothing else runs on the stream: the flags go back with the
            // marks cleared.
            s.memcpy_htod(&flags, &mut on_device)
                .and_then(|()| s.synchronize())
                .map_err(e)?;
        }
        Ok(marked)
    }

    fn reduce(&mut self, r: &Reduction) -> Result<f64, RunError> {
        attributes::check_reduction(r, &self.mesh.cap)?;
        let s = &self.gpu.stream;
        let e = driver("running a reduction");
        let partials = match self.partials.take() {
            Some(buf) => buf,
            None => s
                .alloc_zeros::<f64>(self.mesh.cap.patches.max(1) as usize)
                .map_err(e)?,
        };
        let grid = self.mesh.num_patches;
        let out = partials.device_ptr(s).0;
        // SAFETY: the buffers behind `raw` live as long as `self`, and
        // `partials` holds one `f64` per patch slot.
        let launched = unsafe { self.gpu.launch(&self.reduce, grid, (self.raw, *r, out)) };
        let mut host = vec![0f64; grid as usize];
        let copied = launched.map_err(RunError::from).and_then(|()| {
            s.memcpy_dtoh(&partials.slice(..grid as usize), &mut host[..])
                .and_then(|()| s.synchronize())
                .map_err(|err| RunError::from(e(err)))
        });
        self.partials = Some(partials);
        copied?;
        Ok(attributes::combine_partials(r, &host))
    }

    fn status(&mut self) -> Result<Status, RunError> {
        let last = self.take_snapshot(None)?;
        let status = self.read_snapshot(last)?;
        // The earlier snapshots completed before the last one.
        while let Some(mut snap) = self.pending.pop_front() {
            snap.done = None;
            snap.add_timing(&mut self.seconds)
                .map_err(driver("timing a dynamic kernel"))?;
            self.spare.push(snap);
        }
        Ok(status)
    }

    fn round_status(&mut self) -> Result<Status, RunError> {
        match self.pending.pop_front() {
            Some(snap) => self.read_snapshot(snap),
            None => self.status(),
        }
    }

    fn runs_ahead(&self) -> bool {
        true
    }

    fn mesh(&mut self) -> Result<&DynamicMesh, RunError> {
        self.copy_back()?;
        Ok(self.mesh)
    }

    fn owned_words(&mut self, kind: Kind, first: u32, words: u32) -> Result<OwnedWords, RunError> {
        check_words(self.mesh.cap.attr_stride(kind), kind, first, words)?;
        match self.gather_by_input(kind, first, words, false)? {
            Some(g) => Ok((g.sources, g.words)),
            None => Ok(self.mesh()?.owned_words(kind, first, words)?),
        }
    }

    fn owner_patches(&mut self, kind: Kind) -> Result<(Vec<u32>, Vec<u32>), RunError> {
        match self.gather_by_input(kind, 0, 0, true)? {
            Some(g) => Ok((g.sources, g.owners)),
            None => {
                let m = self.mesh()?;
                Ok((m.sources(kind), m.owner_patches(kind)))
            }
        }
    }

    fn neighbour_patches(&mut self) -> Result<Vec<Vec<u32>>, RunError> {
        let n = self.mesh.num_patches as usize;
        let stash = self
            .gpu
            .download(&self.bufs.stash, STASH_SIZE as usize * n)?;
        Ok(stash
            .chunks(STASH_SIZE as usize)
            .map(|s| s.iter().copied().filter(|&q| q != NO_PATCH).collect())
            .collect())
    }

    fn set_by_input(
        &mut self,
        kind: Kind,
        first: u32,
        words: u32,
        values: &[u32],
    ) -> Result<(), RunError> {
        check_writable(self.mesh.cap.attr_stride(kind), kind, first, words)?;
        let inputs = self.mesh.input_count(kind);
        check_by_input(kind, inputs as usize, words, values.len())?;
        if words == 0 || inputs == 0 {
            return Ok(());
        }
        // The kernel indexes the values with 32 bits.
        u32::try_from(values.len()).map_err(|_| BackendError::TooLarge(values.len()))?;
        let scatter = match &self.scatter {
            Some(loaded) => loaded,
            None => self.scatter.insert(self.gpu.load::<ScatterByInput>(0)?),
        };
        let buf = self.gpu.upload(values)?;
        let s = &self.gpu.stream;
        let params = (
            self.raw,
            kind as u32,
            first,
            words,
            inputs,
            buf.device_ptr(s).0,
        );
        // SAFETY: the buffers behind `raw` live as long as `self` and
        // nothing else runs on the mesh meanwhile (one stream); the words
        // lie within the kind's attribute words and `buf` holds `words`
        // words an input element (both checked above); the stream frees
        // `buf` after the launch.
        unsafe { self.gpu.launch(scatter, self.mesh.num_patches, params)? };
        Ok(())
    }

    fn device(&self) -> String {
        self.gpu.name()
    }
}
