//! Patching on the device ([`Backend::partition`]): the face partition of
//! RXMesh (Mahmoud et al. 2021, section 6.3 and appendix C), Lloyd
//! iterations by level-synchronous breadth-first searches from the seeds
//! and seed addition for patches over the size limit, run by the kernels of
//! `cavity_device::patching` on the GPU or, the same kernels, on the CPU
//! backend ([`PartitionRounds`] sets how long each phase runs), then
//! neighbouring patches that fit together merged in pairs.
//! [`crate::patcher::partition`] is the host's method and stays
//! the reference; both give connected patches within the limit, numbered
//! in the order of their lowest face.
//!
//! The host only drives: it uploads the face-edge and edge-face relations
//! (the device builds the face graph's CSR rows and the rim flags from
//! them), reads one counter every four levels to see when a search is
//! done, and moves the seed lists (a word a patch) between the phases.

use cavity_device::array::blocks;
use cavity_device::patching::{
    AssignLevel, COUNTER_SHARED_BYTES, ChooseNeighbor, ClearLabels, CountFaceNeighbors, Deepest,
    FillFaceNeighbors, InwardLevel, MarkFlagged, MarkLowest, MarkSeeds, MarkUnreached, MergeChosen,
    PatchRim, PickDeepest, PlaceSeeds, Renumber, SmallestNeighbor, Survey,
};

use super::Backend;
use super::buffer::Buffer;
use super::error::BackendError;
use super::topology::{Relations, TopologyOn};
use crate::dynamic::DynamicError;
use crate::patcher::{self, MAX_PATCH_SIZE, Partition, PatchError};
use crate::settings::{NamesSettings, Setting};
use crate::topology::Topology;

/// How many rounds of each phase [`Backend::partition_with`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionRounds {
    /// Lloyd iterations after the first assignment (each moves every seed
    /// to its patch's center and assigns again). Default 2.
    pub lloyd: u32,
    /// Rounds of seed addition (each gives every oversized patch a second
    /// seed and runs one Lloyd iteration on the faces of those patches,
    /// the rest of the mesh left as it is) before the host splits what is
    /// still oversized, as its own patcher does. Default 12.
    pub addition: u32,
    /// Rounds of merging neighbouring patches that fit together (each
    /// patch chooses its smallest neighbour it fits with; pairs that chose
    /// each other merge). Default 8.
    pub merge: u32,
}

impl Default for PartitionRounds {
    fn default() -> Self {
        PartitionRounds {
            lloyd: 2,
            addition: 12,
            merge: 8,
        }
    }
}

/// Why [`Backend::partition`] failed.
#[derive(Debug, thiserror::Error)]
pub enum PartitionError {
    /// The patch size is out of range.
    #[error(transparent)]
    Patch(#[from] PatchError),
    /// A launch, allocation or copy failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl NamesSettings for PartitionError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            PartitionError::Patch(e) => e.settings(),
            PartitionError::Backend(e) => e.settings(),
        }
    }
}

crate::names_settings!(PartitionError);

impl PartitionError {
    /// The error as one of a caller whose errors wrap the dynamic mesh's
    /// and the backend's: a patch error as [`DynamicError::Patch`].
    pub fn into_either<E: From<DynamicError> + From<BackendError>>(self) -> E {
        match self {
            PartitionError::Patch(e) => DynamicError::Patch(e).into(),
            PartitionError::Backend(e) => e.into(),
        }
    }
}

/// A partition left on the backend ([`Backend::partition_on`]).
pub(crate) struct Labels {
    /// Each face's patch.
    pub(crate) face_patch: Buffer<u32>,
    /// Patches, numbered `0..num_patches` in the order of their lowest
    /// face.
    pub(crate) num_patches: u32,
    /// The Lloyd iterations run.
    pub(crate) iterations: u32,
}

impl Backend {
    /// Partitions the `num_faces` faces of `topo` into connected patches of
    /// at most `max_patch_size` faces on this backend (see the
    /// [module](self)): [`crate::patcher::partition`]'s contract, with
    /// `iterations` the Lloyd iterations run. About one seed per four
    /// fifths of the limit is drawn by a hash of the face and `seed`; the
    /// result depends only on the mesh, the limit and `seed`, on either
    /// backend and any thread count.
    ///
    /// # Errors
    /// [`PatchError::PatchSize`] outside `1..=MAX_PATCH_SIZE`; a backend
    /// error from a launch, an allocation or a copy.
    pub fn partition(
        &self,
        topo: &Topology,
        num_faces: usize,
        max_patch_size: u32,
        seed: u64,
    ) -> Result<Partition, PartitionError> {
        let rounds = PartitionRounds::default();
        self.partition_with(topo, num_faces, max_patch_size, seed, rounds)
    }

    /// [`Backend::partition`] with the rounds of each phase given.
    ///
    /// # Errors
    /// As [`Backend::partition`].
    pub fn partition_with(
        &self,
        topo: &Topology,
        num_faces: usize,
        max_patch_size: u32,
        seed: u64,
        rounds: PartitionRounds,
    ) -> Result<Partition, PartitionError> {
        let topo = TopologyOn::uploaded(self, topo)?;
        let on = self.partition_on(&topo, num_faces, max_patch_size, seed, rounds)?;
        Ok(Partition {
            face_patch: self.download(on.face_patch, num_faces)?,
            num_patches: on.num_patches,
            iterations: on.iterations,
        })
    }

    /// [`Backend::partition_with`] from `topo`'s relations on the backend,
    /// the result left there.
    ///
    /// # Errors
    /// As [`Backend::partition`].
    pub(crate) fn partition_on(
        &self,
        topo: &TopologyOn<'_>,
        num_faces: usize,
        max_patch_size: u32,
        seed: u64,
        rounds: PartitionRounds,
    ) -> Result<Labels, PartitionError> {
        if max_patch_size == 0 || max_patch_size > MAX_PATCH_SIZE {
            return Err(PatchError::PatchSize(max_patch_size).into());
        }
        if num_faces == 0 {
            return Ok(Labels {
                face_patch: self.zeros(0)?,
                num_patches: 1,
                iterations: 0,
            });
        }
        let n = u32::try_from(num_faces).map_err(|_| BackendError::TooLarge(num_faces))?;
        let relations = topo.relations().ok_or(BackendError::Inconsistent(
            "the partition's relations are not on the backend",
        ))?;
        let mut search = Search::new(self, relations, n)?;
        let target = patcher::chunk_target(max_patch_size);
        let mut seeds = search.initial_seeds(target, seed as u32 ^ (seed >> 32) as u32)?;
        search.assign(&mut seeds)?;
        let mut iterations = 0;
        for _ in 0..rounds.lloyd {
            seeds = search.centers(&Faces::All, seeds.len())?;
            search.assign(&mut seeds)?;
            iterations += 1;
        }
        for _ in 0..rounds.addition {
            let sizes = search.sizes(seeds.len())?;
            let oversized: Vec<u32> = (0..sizes.len() as u32)
                .filter(|&p| sizes[p as usize] > max_patch_size)
                .collect();
            if oversized.is_empty() {
                break;
            }
            search.split(&mut seeds, &oversized)?;
            iterations += 1;
        }
        for _ in 0..rounds.merge {
            if !search.merge(seeds.len(), max_patch_size)? {
                break;
            }
        }
        let (sizes, lowest) = search.survey(seeds.len())?;
        let sizes = self.download(sizes, seeds.len())?;
        if sizes.iter().any(|&s| s > max_patch_size) {
            let mut label = self.download(search.label, num_faces)?;
            let topo = topo.host(self)?;
            patcher::split_oversized_patches(&topo, &mut label, seeds.len() as u32, max_patch_size);
            let num_patches = patcher::renumber(&mut label);
            return Ok(Labels {
                face_patch: self.upload(&label)?,
                num_patches,
                iterations,
            });
        }
        let num_patches = search.renumber(&lowest)?;
        Ok(Labels {
            face_patch: search.label,
            num_patches,
            iterations,
        })
    }
}

/// Levels a search launches between two reads of its count of reached
/// faces: each read waits for the device (about as long as a level over a
/// few million faces takes), and the levels past the search's end do
/// nothing.
const LEVELS_PER_READ: u32 = 4;

/// Which levels [`Search::deepest`] reads.
enum Depth {
    /// The assignment's: the distance from the patch's seed.
    FromSeed,
    /// The inward search's: the distance from the patch's rim.
    FromRim,
}

/// The face graph and the searches' arrays on a backend.
struct Search<'a> {
    backend: &'a Backend,
    /// Faces.
    n: u32,
    /// CSR rows of the face graph: the faces sharing an edge with each.
    offsets: Buffer<u32>,
    neighbors: Buffer<u32>,
    /// 1 for a face on an open edge.
    rim: Buffer<u32>,
    /// Each face's patch (its seed's index).
    label: Buffer<u32>,
    /// The assignment's level of each face.
    level: Buffer<u32>,
    /// The inward search's depth of each face.
    depth: Buffer<u32>,
    /// Faces reached by the searches so far (one counter, never reset).
    reached: Buffer<u32>,
    /// The level the next search over listed faces starts from: above
    /// every level in `level`, so that a listed face's search never takes
    /// a level of a face outside the list for one of its own.
    next_level: u32,
    /// A word standing for the list of a launch over all faces.
    unlisted: Buffer<u32>,
}

/// The faces a search works on.
enum Faces {
    /// Every face of the mesh.
    All,
    /// The first `count` faces of the list (the faces of the patches a
    /// round of seed addition splits).
    Listed(Buffer<u32>, u32),
}

impl Faces {
    /// A launch's items: their count (`n` faces in all), the list
    /// (`unlisted` for all faces) and whether it is read
    /// ([`cavity_device::patching::item`]).
    fn items<'f>(&'f self, n: u32, unlisted: &'f Buffer<u32>) -> (u32, &'f Buffer<u32>, u32) {
        match self {
            Faces::All => (n, unlisted, 0),
            Faces::Listed(list, count) => (*count, list, 1),
        }
    }
}

impl<'a> Search<'a> {
    /// The face graph (`n` faces) built on the backend from the mesh's
    /// face-edge and edge-face `relations` ([`CountFaceNeighbors`], a
    /// scan, [`FillFaceNeighbors`]), the arrays made.
    fn new(backend: &'a Backend, relations: &Relations, n: u32) -> Result<Self, BackendError> {
        let b = backend;
        let Relations {
            fe, ef_offsets, ef, ..
        } = relations;
        let mut offsets = b.zeros::<u32>(n as usize + 1)?;
        let mut rim = b.zeros::<u32>(n as usize)?;
        let params = (fe, [ef_offsets, ef], n, &mut offsets, &mut rim);
        b.launch::<CountFaceNeighbors>(blocks(n), (0, 0), params)?;
        b.exclusive_scan(&mut offsets, n + 1)?;
        let entries = b.element(&offsets, n as usize)?;
        let mut neighbors = b.zeros::<u32>(entries as usize)?;
        let params = (fe, [ef_offsets, ef], &offsets, n, &mut neighbors);
        b.launch::<FillFaceNeighbors>(blocks(n), (0, 0), params)?;
        Ok(Search {
            backend,
            n,
            offsets,
            neighbors,
            rim,
            label: backend.zeros(n as usize)?,
            level: backend.zeros(n as usize)?,
            depth: backend.zeros(n as usize)?,
            reached: backend.zeros(1)?,
            next_level: 0,
            unlisted: backend.zeros(1)?,
        })
    }

    /// The faces whose hash with `salt` falls in the lowest `1 / target`
    /// of the range, in increasing order.
    fn initial_seeds(&mut self, target: u32, salt: u32) -> Result<Vec<u32>, BackendError> {
        let b = self.backend;
        let threshold = ((1u64 << 32) / u64::from(target) - 1) as u32;
        let mut marks = b.zeros::<u32>(self.n as usize + 1)?;
        b.launch::<MarkSeeds>(
            blocks(self.n),
            (0, 0),
            (self.n, salt, threshold, &mut marks),
        )?;
        let (list, count) = b.compact(&mut marks, None, self.n)?;
        b.download(list, count as usize)
    }

    /// Faces reached so far.
    fn reached(&self) -> Result<u32, BackendError> {
        self.backend.element(&self.reached, 0)
    }

    /// Assigns every face to its nearest seed (seed `i` is face
    /// `seeds[i]`, its patch `i`); a component without a seed gets new
    /// ones (appended to `seeds`) where the search stalls.
    fn assign(&mut self, seeds: &mut Vec<u32>) -> Result<(), BackendError> {
        let b = self.backend;
        let n = self.n;
        let params = (n, &self.unlisted, 0, &mut self.label, &mut self.level);
        b.launch::<ClearLabels>(blocks(n), (0, 0), params)?;
        let mut placed = 0;
        let mut at = 0;
        let mut covered = 0;
        let mut before = self.reached()?;
        loop {
            if placed < seeds.len() {
                let list = b.upload(seeds)?;
                let count = seeds.len() as u32;
                b.launch::<PlaceSeeds>(
                    blocks(count - placed as u32),
                    (0, 0),
                    (
                        &list,
                        &self.unlisted,
                        0,
                        placed as u32,
                        count,
                        at,
                        &mut self.label,
                        &mut self.level,
                    ),
                )?;
                covered += count - placed as u32;
                placed = seeds.len();
            }
            if covered == n {
                self.next_level = at + 1;
                return Ok(());
            }
            // A batch of levels, then one read of the count: a level
            // after the search is done reaches nothing and changes nothing.
            self.assign_levels(&Faces::All, &mut at)?;
            let after = self.reached()?;
            let grew = after.wrapping_sub(before);
            covered += grew;
            before = after;
            if grew == 0 && covered < n {
                // Seeds for the components no seed reached, placed at the
                // last level searched (the batch reached nothing).
                let mut marks = b.zeros::<u32>(n as usize + 1)?;
                b.launch::<MarkUnreached>(
                    blocks(n),
                    (0, 0),
                    (n, &self.offsets, &self.neighbors, &self.level, &mut marks),
                )?;
                let (list, count) = b.compact(&mut marks, None, n)?;
                seeds.extend(b.download(list, count as usize)?);
            }
        }
    }

    /// The nearest-seed search's next [`LEVELS_PER_READ`] levels over
    /// `faces` ([`AssignLevel`]), after level `at`, which it advances.
    ///
    /// # Errors
    /// As [`Backend::launch`].
    fn assign_levels(&mut self, faces: &Faces, at: &mut u32) -> Result<(), BackendError> {
        let (m, list, listed) = faces.items(self.n, &self.unlisted);
        for _ in 0..LEVELS_PER_READ {
            *at += 1;
            self.backend.launch::<AssignLevel>(
                blocks(m),
                (COUNTER_SHARED_BYTES, COUNTER_SHARED_BYTES),
                (
                    m,
                    list,
                    listed,
                    *at,
                    &self.offsets,
                    &self.neighbors,
                    &mut self.label,
                    &mut self.level,
                    &mut self.reached,
                ),
            )?;
        }
        Ok(())
    }

    /// Each of the `count` patches' face farthest from its rim (the
    /// lowest-numbered of equals): the next seeds. With listed `faces` (all
    /// the faces of some patches) only those patches' are found; the
    /// others' are `u32::MAX`.
    fn centers(&mut self, faces: &Faces, count: usize) -> Result<Vec<u32>, BackendError> {
        let b = self.backend;
        let (m, list, listed) = faces.items(self.n, &self.unlisted);
        b.launch::<PatchRim>(
            blocks(m),
            (0, 0),
            (
                m,
                list,
                listed,
                &self.offsets,
                &self.neighbors,
                &self.rim,
                &self.label,
                &mut self.depth,
            ),
        )?;
        let mut before = self.reached()?;
        let mut at = 0;
        loop {
            for _ in 0..LEVELS_PER_READ {
                at += 1;
                b.launch::<InwardLevel>(
                    blocks(m),
                    (COUNTER_SHARED_BYTES, COUNTER_SHARED_BYTES),
                    (
                        m,
                        list,
                        listed,
                        at,
                        &self.offsets,
                        &self.neighbors,
                        &self.label,
                        &mut self.depth,
                        &mut self.reached,
                    ),
                )?;
            }
            let after = self.reached()?;
            if after == before {
                break;
            }
            before = after;
        }
        self.deepest(faces, count, Depth::FromRim)
    }

    /// Each of the `count` patches' lowest-numbered face of the largest
    /// depth (`which`), among `faces` (`u32::MAX` for a patch without).
    fn deepest(
        &mut self,
        faces: &Faces,
        count: usize,
        which: Depth,
    ) -> Result<Vec<u32>, BackendError> {
        let b = self.backend;
        let (m, list, listed) = faces.items(self.n, &self.unlisted);
        let depth = match which {
            Depth::FromSeed => &self.level,
            Depth::FromRim => &self.depth,
        };
        let mut best = b.zeros::<u32>(count)?;
        let params = (m, list, listed, &self.label, depth, &mut best);
        b.launch::<Deepest>(blocks(m), (0, 0), params)?;
        let mut pick = b.zeros::<u32>(count)?;
        let params = (m, list, listed, &self.label, depth, &best, &mut pick);
        b.launch::<PickDeepest>(blocks(m), (0, 0), params)?;
        Ok(b.download(pick, count)?.into_iter().map(|p| !p).collect())
    }

    /// A round of seed addition: each patch of `oversized` (over the size
    /// limit) gets a second seed at its face farthest from its seed; the
    /// faces of these patches are assigned to the nearest of their seeds
    /// (neighbouring oversized patches share their faces out anew), the
    /// patches take one Lloyd iteration ([`Search::centers`]) and are
    /// assigned again; the other patches are left as they are. The
    /// searches run on the listed faces of these patches alone (where the
    /// assignment does not reach every listed face, which connected
    /// patches rule out, the whole mesh is assigned again).
    fn split(&mut self, seeds: &mut Vec<u32>, oversized: &[u32]) -> Result<(), BackendError> {
        let b = self.backend;
        let n = self.n;
        let mut flags = vec![0u32; seeds.len()];
        for &p in oversized {
            flags[p as usize] = 1;
        }
        let flags = b.upload(&flags)?;
        let mut marks = b.zeros::<u32>(n as usize + 1)?;
        let params = (n, &self.label, &flags, &mut marks);
        b.launch::<MarkFlagged>(blocks(n), (0, 0), params)?;
        let (list, count) = b.compact(&mut marks, None, n)?;
        let faces = Faces::Listed(list, count);
        let farthest = self.deepest(&faces, seeds.len(), Depth::FromSeed)?;
        let mut placed = oversized.to_vec();
        for &p in oversized {
            placed.push(seeds.len() as u32);
            seeds.push(farthest[p as usize]);
        }
        if !self.assign_listed(&faces, seeds, &placed)? {
            return self.assign(seeds);
        }
        let centers = self.centers(&faces, seeds.len())?;
        for &i in &placed {
            seeds[i as usize] = centers[i as usize];
        }
        if !self.assign_listed(&faces, seeds, &placed)? {
            return self.assign(seeds);
        }
        Ok(())
    }

    /// Assigns every listed face (`faces`, all the faces of some patches)
    /// to its nearest seed among the seeds `placed` (indices into `seeds`,
    /// on distinct listed faces: a patch's seed and its face farthest from
    /// it, at a larger level, or the centers of distinct patches); the
    /// levels start above every level in use. Returns whether every listed
    /// face was reached (false: a search that stalled).
    fn assign_listed(
        &mut self,
        faces: &Faces,
        seeds: &[u32],
        placed: &[u32],
    ) -> Result<bool, BackendError> {
        let b = self.backend;
        let (m, list, listed) = faces.items(self.n, &self.unlisted);
        let params = (m, list, listed, &mut self.label, &mut self.level);
        b.launch::<ClearLabels>(blocks(m), (0, 0), params)?;
        let seeds_on = b.upload(seeds)?;
        let placed_on = b.upload(placed)?;
        let count = placed.len() as u32;
        let mut at = self.next_level;
        let params = (
            &seeds_on,
            &placed_on,
            1,
            0,
            count,
            at,
            &mut self.label,
            &mut self.level,
        );
        b.launch::<PlaceSeeds>(blocks(count), (0, 0), params)?;
        let mut covered = count;
        let mut before = self.reached()?;
        while covered < m {
            self.assign_levels(faces, &mut at)?;
            let after = self.reached()?;
            let grew = after.wrapping_sub(before);
            before = after;
            if grew == 0 {
                break;
            }
            covered += grew;
        }
        self.next_level = at + 1;
        Ok(covered == m)
    }

    /// Each of the `count` patches' size and its lowest face's complement
    /// ([`Survey`]), on the backend.
    fn survey(&mut self, count: usize) -> Result<(Buffer<u32>, Buffer<u32>), BackendError> {
        let b = self.backend;
        let n = self.n;
        let mut sizes = b.zeros::<u32>(count)?;
        let mut lowest = b.zeros::<u32>(count)?;
        b.launch::<Survey>(blocks(n), (0, 0), (n, &self.label, &mut sizes, &mut lowest))?;
        Ok((sizes, lowest))
    }

    /// Each of the `count` patches' size, on the host.
    fn sizes(&mut self, count: usize) -> Result<Vec<u32>, BackendError> {
        let (sizes, _) = self.survey(count)?;
        self.backend.download(sizes, count)
    }

    /// Merges pairs of neighbouring patches (of `count` labels) that fit
    /// within `max` faces together and chose each other, each patch
    /// choosing its smallest such neighbour; whether any merged.
    fn merge(&mut self, count: usize, max: u32) -> Result<bool, BackendError> {
        let b = self.backend;
        let n = self.n;
        let (sizes, _) = self.survey(count)?;
        let mut best = b.zeros::<u32>(count)?;
        b.launch::<SmallestNeighbor>(
            blocks(n),
            (0, 0),
            (
                n,
                max,
                &self.offsets,
                &self.neighbors,
                &self.label,
                &sizes,
                &mut best,
            ),
        )?;
        let mut choice = b.zeros::<u32>(count)?;
        b.launch::<ChooseNeighbor>(
            blocks(n),
            (0, 0),
            (
                n,
                &self.offsets,
                &self.neighbors,
                &self.label,
                &sizes,
                &best,
                &mut choice,
            ),
        )?;
        let before = self.reached()?;
        b.launch::<MergeChosen>(
            blocks(n),
            (COUNTER_SHARED_BYTES, COUNTER_SHARED_BYTES),
            (n, &choice, &mut self.label, &mut self.reached),
        )?;
        Ok(self.reached()? != before)
    }

    /// Renumbers the patches in the order of their lowest faces (`lowest`
    /// from [`Search::survey`]); returns the patch count.
    fn renumber(&mut self, lowest: &Buffer<u32>) -> Result<u32, BackendError> {
        let b = self.backend;
        let n = self.n;
        let mut marks = b.zeros::<u32>(n as usize + 1)?;
        b.launch::<MarkLowest>(blocks(n), (0, 0), (n, &self.label, lowest, &mut marks))?;
        b.exclusive_scan(&mut marks, n + 1)?;
        let count = b.element(&marks, n as usize)?;
        b.launch::<Renumber>(blocks(n), (0, 0), (n, &marks, lowest, &mut self.label))?;
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TriMesh;
    use crate::backend::cpu::CpuBackend;

    /// An `n × n` grid of quads, two triangles each.
    fn grid(n: u32) -> TriMesh {
        let at = |i: u32, j: u32| i * (n + 1) + j;
        let positions = (0..=n)
            .flat_map(|i| (0..=n).map(move |j| [j as f32, i as f32, 0.0]))
            .collect();
        let faces = (0..n)
            .flat_map(|i| {
                (0..n).flat_map(move |j| {
                    let (a, b, c, d) = (at(i, j), at(i, j + 1), at(i + 1, j + 1), at(i + 1, j));
                    [[a, b, c], [a, c, d]]
                })
            })
            .collect();
        TriMesh { positions, faces }
    }

    /// A round of seed addition leaves every patch it does not split as it
    /// was, and gives each face of a split patch the label of a split
    /// patch or of a seed added to one (neighbouring split patches share
    /// their faces out anew): no label crosses in from outside the listed
    /// faces.
    #[test]
    fn seed_addition_changes_only_the_split_patches() {
        let b = Backend::Cpu(CpuBackend::new());
        let mesh = grid(60);
        let topo = Topology::new(&mesh);
        let topo = TopologyOn::uploaded(&b, &topo).unwrap();
        let relations = topo.relations().unwrap();
        let n = mesh.num_faces() as u32;
        let max = 40;
        let mut search = Search::new(&b, relations, n).unwrap();
        let mut seeds = search.initial_seeds(patcher::chunk_target(max), 7).unwrap();
        search.assign(&mut seeds).unwrap();
        seeds = search.centers(&Faces::All, seeds.len()).unwrap();
        search.assign(&mut seeds).unwrap();
        let sizes = search.sizes(seeds.len()).unwrap();
        let oversized: Vec<u32> = (0..sizes.len() as u32)
            .filter(|&p| sizes[p as usize] > max)
            .collect();
        assert!(!oversized.is_empty(), "no patch to split");
        let before = b.read_back(&search.label, n as usize).unwrap();
        let count = seeds.len() as u32;
        search.split(&mut seeds, &oversized).unwrap();
        let after = b.read_back(&search.label, n as usize).unwrap();
        assert_eq!(seeds.len(), count as usize + oversized.len());
        let placed = |label: u32| label >= count || oversized.binary_search(&label).is_ok();
        for f in 0..n as usize {
            let (was, is) = (before[f], after[f]);
            if placed(was) {
                assert!(placed(is), "face {f} of split patch {was} took label {is}");
            } else {
                assert_eq!(is, was, "face {f} of an unsplit patch");
            }
        }
        // Every seed of the round holds faces.
        for (j, &p) in oversized.iter().enumerate() {
            for label in [p, count + j as u32] {
                assert!(after.contains(&label), "patch {label} is empty");
            }
        }
    }
}
