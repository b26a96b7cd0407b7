//! The CPU backend's rounds ([`crate::rounds`]): the dynamic kernels run
//! on the mesh's host arrays, one block per rayon task.

use std::collections::VecDeque;

use cavity_device::dynamic::cavity::CavityApp;
use cavity_device::dynamic::compute::{self, ElementKernels, ExportQuery, ForEachKernel};
use cavity_device::dynamic::layout::{Capacity, stat};
use cavity_device::dynamic::patch_computation::{PatchKernel, PatchKernels, Scratch};
use cavity_device::dynamic::ring::{self, ExportRing, RingKernel, RingKernels, RingScratch};
use cavity_device::layout::Kind;
use cavity_device::query::Query;

use cavity_device::attribute::Reduction;
use cavity_device::dynamic::queue;

use super::backend::{CpuBackend, Schedule};
use super::territories;
use crate::attributes::{self, AttributeLayout};
use crate::dynamic::DynamicMesh;
use crate::query_result::QueryResult;
use crate::rings::{ForEachRing, RingRoom};
use crate::rounds::{
    ForEach, ForEachPatch, Rounds, RunError, SlotRows, Status, Update, check_patch_list,
    patch_scratch_words, status_of, take_marks,
};

/// Enqueues patches in the host arrays: all of them, or with
/// `changed_only` those flagged `CHANGED` (the flags are cleared); marks
/// every patch's declined seeds stale (`NEW_SWEEP`: a sweep looks at every
/// candidate afresh); clears the counters. The device crate's
/// `scheduler::refill`, run on the host.
pub fn refill_host(mesh: &mut DynamicMesh, changed_only: bool) {
    let raw = mesh.raw();
    // SAFETY: `raw` names the mesh's arrays, which nothing else touches
    // until the call returns (`mesh` is borrowed mutably).
    unsafe { CpuBackend::new().refill(&raw, changed_only) };
}

/// The CPU backend's rounds: the kernels run on the mesh's host arrays,
/// one block per rayon task, in the backend's [`Schedule`]: with the
/// deterministic one (the default) each round runs the patches that
/// `backend::territories` picks, so that the result is the same whatever
/// the number of workers; with the racing one every queued patch gets a
/// block and the workers race as the GPU's blocks do.
pub struct CpuRounds<'a> {
    mesh: &'a mut DynamicMesh,
    cpu: CpuBackend,
    /// The patch computations' scratch, grown as they ask.
    scratch: Vec<u32>,
    /// The rings' scratch, then their overflow word (`rings`).
    rings: Vec<u32>,
    /// The room the rings needed so far.
    ring_room: RingRoom,
    /// Update rounds launched (the next round's salt).
    rounds: u32,
    /// The status after each round not taken yet (`round_status`).
    statuses: VecDeque<Status>,
}

impl<'a> CpuRounds<'a> {
    /// The mesh's host arrays, as its kernels take them.
    pub(crate) fn raw(&mut self) -> cavity_device::dynamic::layout::RawDynamicMesh {
        self.mesh.raw()
    }

    /// The mesh's input counts of vertices, edges and faces.
    pub(crate) fn inputs(&self) -> [u32; 3] {
        crate::backend::export::input_counts(self.mesh)
    }

    /// Rounds on `mesh` with the deterministic schedule.
    pub fn new(mesh: &'a mut DynamicMesh) -> Self {
        CpuRounds::with_backend(mesh, CpuBackend::new())
    }

    /// Rounds on `mesh` on `cpu` (with its schedule).
    pub fn with_backend(mesh: &'a mut DynamicMesh, cpu: CpuBackend) -> Self {
        CpuRounds {
            mesh,
            cpu,
            scratch: Vec::new(),
            rings: Vec::new(),
            ring_room: RingRoom::default(),
            rounds: 0,
            statuses: VecDeque::new(),
        }
    }
}

impl<C: ElementKernels> ForEach<C> for CpuRounds<'_> {
    fn for_each(&mut self, c: &C) -> Result<(), RunError> {
        let raw = self.mesh.raw();
        let smem = compute::shared_bytes::<C>(&raw.cap, 1);
        // SAFETY: `raw` names the mesh's arrays, which nothing else touches
        // until the call returns; each block writes only the attributes of
        // its patch's owned elements.
        unsafe {
            self.cpu
                .launch::<ForEachKernel<C>>(raw.num_patches, smem, (raw, *c, 0))
        };
        Ok(())
    }

    fn for_each_in(&mut self, c: &C, patches: &[u32]) -> Result<(), RunError> {
        let raw = self.mesh.raw();
        check_patch_list(patches, raw.num_patches)?;
        if patches.is_empty() {
            return Ok(());
        }
        let smem = compute::shared_bytes::<C>(&raw.cap, 1);
        let list = patches.as_ptr() as u64;
        // SAFETY: as in `for_each`; the list holds distinct patch slots in
        // use, one per block.
        unsafe {
            self.cpu
                .launch::<ForEachKernel<C>>(patches.len() as u32, smem, (raw, *c, list))
        };
        Ok(())
    }
}

impl CpuRounds<'_> {
    /// Runs `launch` with the rings' scratch for `room` (zeroed status
    /// word) and returns the launch's status word (`ring_status`).
    fn with_rings(
        rings: &mut Vec<u32>,
        room: RingRoom,
        cap: &Capacity,
        patches: u32,
        launch: impl FnOnce(u32, RingScratch),
    ) -> u32 {
        let parallel = 4 * rayon::current_num_threads() as u32;
        let grid = room.grid(cap, patches, parallel);
        let words = ring::scratch_words(cap, grid, room.capacity()) as usize;
        rings.resize(words + 1, 0);
        rings[words] = 0;
        let base = rings.as_mut_ptr() as u64;
        launch(
            grid,
            RingScratch {
                entries: base,
                overflow: base + 4 * words as u64,
                capacity: room.capacity(),
                pad: 0,
            },
        );
        rings[words]
    }
}

impl<C: RingKernels> ForEachRing<C> for CpuRounds<'_> {
    fn for_each_ring(&mut self, c: &C) -> Result<(), RunError> {
        let raw = self.mesh.raw();
        let smem = ring::shared_bytes(&raw.cap, 1);
        let (cpu, rings) = (&self.cpu, &mut self.rings);
        self.ring_room.run(|room| {
            let status = Self::with_rings(rings, room, &raw.cap, raw.num_patches, |grid, s| {
                // SAFETY: `raw` names the mesh's arrays, which nothing else
                // touches until the call returns; each block writes only
                // its patches' owned vertices and its scratch region.
                unsafe { cpu.launch::<RingKernel<C>>(grid, smem, (raw, *c, s)) }
            });
            Ok(((), status))
        })
    }
}

impl<A: CavityApp + Sync> Update<A> for CpuRounds<'_> {
    fn survey(&mut self, app: &A) -> Result<(), RunError> {
        let raw = self.mesh.raw();
        // SAFETY: as in `round`.
        unsafe { self.cpu.survey(&raw, app, self.rounds) };
        Ok(())
    }

    fn round(&mut self, app: &A, blocks: u32) -> Result<(), RunError> {
        let salt = self.rounds;
        self.rounds = self.rounds.wrapping_add(1);
        let deterministic = self.cpu.schedule() == Schedule::Deterministic;
        let blocks = if deterministic {
            territories::prepare(self.mesh, salt)
        } else {
            blocks
        };
        let raw = self.mesh.raw();
        // SAFETY: `raw` names the mesh's arrays, which nothing else touches
        // until the calls return (`self.mesh` is borrowed mutably).
        unsafe { self.cpu.update_round(&raw, app, blocks, salt) };
        if deterministic {
            territories::release(self.mesh);
        }
        let raw = self.mesh.raw();
        // SAFETY: as above.
        unsafe { self.cpu.cleanup(&raw) };
        let m = &*self.mesh;
        self.statuses
            .push_back(status_of(&m.queue_state, &m.stats, &m.flags));
        Ok(())
    }
}

impl Rounds for CpuRounds<'_> {
    fn refill(&mut self, changed_only: bool) -> Result<(), RunError> {
        refill_host(self.mesh, changed_only);
        Ok(())
    }

    fn slice(&mut self, seed: Kind) -> Result<(), RunError> {
        let raw = self.mesh.raw();
        // SAFETY: as in `round`.
        unsafe { self.cpu.slice(&raw, seed) };
        self.mesh.num_patches = self.mesh.queue_state[queue::PATCHES as usize];
        let raw = self.mesh.raw();
        // SAFETY: as in `round`.
        unsafe { self.cpu.cleanup(&raw) };
        Ok(())
    }

    fn attributes(&self) -> &AttributeLayout {
        self.mesh.attributes()
    }

    fn export_query(&mut self, query: Query) -> Result<SlotRows, RunError> {
        let raw = self.mesh.raw();
        let slots = (raw.cap.patches * raw.cap.of(query.source())) as usize;
        let smem = compute::shared_bytes_of(query, &raw.cap, 1);
        let mut counts = vec![0u32; slots];
        let q = query as u32;
        // SAFETY: as in `round`; `counts` holds one entry per source slot
        // and the counting pass writes no values.
        unsafe {
            self.cpu.launch::<ExportQuery>(
                raw.num_patches,
                smem,
                (raw, q, counts.as_mut_ptr() as u64, 0, 0),
            )
        };
        let mut offsets = QueryResult::offsets_of(&counts);
        let total = offsets.pop().unwrap_or(0);
        let mut values = vec![0u32; total as usize];
        // SAFETY: as above; `values` holds the rows `offsets` place.
        unsafe {
            self.cpu.launch::<ExportQuery>(
                raw.num_patches,
                smem,
                (
                    raw,
                    q,
                    counts.as_mut_ptr() as u64,
                    offsets.as_ptr() as u64,
                    values.as_mut_ptr() as u64,
                ),
            )
        };
        Ok(SlotRows {
            counts,
            offsets,
            values,
        })
    }

    fn export_ring(&mut self, k: u32) -> Result<SlotRows, RunError> {
        let raw = self.mesh.raw();
        let slots = (raw.cap.patches * raw.cap.vertices) as usize;
        let smem = ring::shared_bytes(&raw.cap, 1);
        let mut counts = vec![0u32; slots.max(1)];
        let (cpu, rings) = (&self.cpu, &mut self.rings);
        let room = self.ring_room.run(|room| {
            let counted = counts.as_mut_ptr() as u64;
            let status = Self::with_rings(rings, room, &raw.cap, raw.num_patches, |grid, s| {
                // SAFETY: as in `for_each_ring`; `counts` holds one entry
                // per vertex slot and the counting pass writes no values.
                unsafe { cpu.launch::<ExportRing>(grid, smem, (raw, k, s, counted, 0, 0)) }
            });
            Ok((room, status))
        })?;
        let mut offsets = QueryResult::offsets_of(&counts);
        let total = offsets.pop().unwrap_or(0);
        let mut values = vec![0u32; total as usize];
        // The same rings: they fit the room the counting pass found.
        let mut room = room;
        room.run(|room| {
            let status = Self::with_rings(rings, room, &raw.cap, raw.num_patches, |grid, s| {
                let params = (
                    raw,
                    k,
                    s,
                    counts.as_mut_ptr() as u64,
                    offsets.as_ptr() as u64,
                    values.as_mut_ptr() as u64,
                );
                // SAFETY: as above; `values` holds the rows `offsets`
                // place.
                unsafe { cpu.launch::<ExportRing>(grid, smem, params) }
            });
            Ok(((), status))
        })?;
        counts.truncate(slots);
        Ok(SlotRows {
            counts,
            offsets,
            values,
        })
    }

    fn take_count(&mut self) -> Result<u64, RunError> {
        let counted = &mut self.mesh.stats[stat::COUNTED as usize];
        Ok(u64::from(std::mem::take(counted)))
    }

    fn take_marked_patches(&mut self) -> Result<Vec<u32>, RunError> {
        let patches = self.mesh.num_patches as usize;
        Ok(take_marks(&mut self.mesh.flags[..patches]))
    }

    fn reduce(&mut self, r: &Reduction) -> Result<f64, RunError> {
        attributes::check_reduction(r, &self.mesh.cap)?;
        let raw = self.mesh.raw();
        // SAFETY: as in `round`.
        let partials = unsafe { self.cpu.reduce(&raw, r) };
        Ok(attributes::combine_partials(r, &partials))
    }

    fn status(&mut self) -> Result<Status, RunError> {
        self.statuses.clear();
        let m = &*self.mesh;
        Ok(status_of(&m.queue_state, &m.stats, &m.flags))
    }

    fn round_status(&mut self) -> Result<Status, RunError> {
        match self.statuses.pop_front() {
            Some(status) => Ok(status),
            None => self.status(),
        }
    }

    /// With the racing schedule, as on the GPU (the host gains nothing,
    /// but runs the same sequence of rounds the GPU's sweeps do).
    fn runs_ahead(&self) -> bool {
        self.cpu.schedule() == Schedule::Racing
    }

    fn mesh(&mut self) -> Result<&DynamicMesh, RunError> {
        Ok(self.mesh)
    }

    fn set_by_input(
        &mut self,
        kind: Kind,
        first: u32,
        words: u32,
        values: &[u32],
    ) -> Result<(), RunError> {
        Ok(self.mesh.set_words_by_input(kind, first, words, values)?)
    }

    fn device(&self) -> String {
        self.cpu.name()
    }
}

impl<C: PatchKernels> ForEachPatch<C> for CpuRounds<'_> {
    fn for_each_patch(&mut self, c: &C) -> Result<(), RunError> {
        let words = patch_scratch_words(c, &self.mesh.cap)?;
        if self.scratch.len() < words {
            self.scratch.resize(words, 0);
        }
        let raw = self.mesh.raw();
        let smem = c.shared_bytes(&raw.cap, 1);
        // SAFETY: the scratch's words live in `self` through the call.
        let scratch = unsafe {
            Scratch::from_raw(self.scratch.as_mut_ptr() as u64, self.scratch.len() as u32)
        };
        // SAFETY: as in `round`; one block per patch slot in use, each
        // writing its own patch's elements and the scratch words its
        // computation's contract gives it.
        unsafe {
            self.cpu
                .launch::<PatchKernel<C>>(raw.num_patches, smem, (raw, *c, scratch))
        };
        Ok(())
    }
}
