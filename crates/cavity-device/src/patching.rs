//! Patching on the device: the face partition of RXMesh (Mahmoud et al.
//! 2021, section 6.3 and appendix C) as level-synchronous searches over
//! the face graph, one face per thread, which the host
//! (`cavity::backend::partition`) drives:
//!
//! 1. seeds: the faces whose hash falls under a threshold ([`MarkSeeds`],
//!    then compacted), about one per patch;
//! 2. assignment: every face joins its nearest seed by a multi-source
//!    breadth-first search, one level a launch ([`ClearLabels`],
//!    [`PlaceSeeds`], [`AssignLevel`]); a face reached at level `l` takes
//!    the smallest label among its neighbours reached at `l - 1`, so every
//!    patch is connected and the result does not depend on the threads.
//!    Where the search stalls with faces unreached (a component without a
//!    seed), the unreached faces without an unreached neighbour of a lower
//!    index become seeds ([`MarkUnreached`]) and the search goes on;
//! 3. Lloyd iterations: each patch's new seed is its face farthest from the
//!    patch's rim (faces on an open edge or next to another patch), found
//!    by a search inward from the rim ([`PatchRim`], [`InwardLevel`]) and
//!    the deepest face of each patch, the lowest-numbered of equals
//!    ([`Deepest`], [`PickDeepest`]);
//! 4. seed addition: a patch over the size limit ([`Survey`] counts them)
//!    gets a second seed at its face farthest from its seed (the same
//!    [`Deepest`] and [`PickDeepest`] over the assignment's levels), and
//!    the searches of the round run on the faces of those patches alone
//!    (listed: [`item`]), the rest of the mesh left as it is;
//! 5. merging: each patch chooses its smallest neighbouring patch that it
//!    fits with within the limit ([`SmallestNeighbor`], [`ChooseNeighbor`])
//!    and two patches that chose each other become one ([`MergeChosen`]);
//! 6. numbering: patches in the order of their lowest face ([`Survey`]
//!    finds it, [`MarkLowest`] marks it for a scan, [`Renumber`] applies
//!    it).
//!
//! The face graph is CSR rows (`offsets`, `neighbors`): the faces sharing
//! an edge with each face, itself excluded, in the order of the face's
//! edges and of each edge's faces; it is built on the device from the
//! face-edge and edge-face relations by a count, a scan and a fill
//! ([`CountFaceNeighbors`], [`FillFaceNeighbors`]). Maxima and minima are
//! atomic maxima (a minimum as the maximum of complements), so every
//! result is fixed by the graph and the seeds alone.

use crate::array::{BOUNDS, In, InOut, chunk};

/// No label, and no level (a face not reached yet).
pub const NONE: u32 = u32::MAX;

/// A face's hash for seed selection: SplitMix32-style mixing of the face
/// and the salt, spread over all 32 bits.
#[inline(always)]
pub fn face_hash(face: u32, salt: u32) -> u32 {
    let mut z = face.wrapping_mul(0x9e37_79b9) ^ salt;
    z = (z ^ (z >> 16)).wrapping_mul(0x85eb_ca6b);
    z = (z ^ (z >> 13)).wrapping_mul(0xc2b2_ae35);
    z ^ (z >> 16)
}

/// Calls `each` with every face other than `f` on `f`'s edges (`fe`:
/// three edges a face; `ef`: the edge-face rows, `[offsets, faces]`), in
/// the order of its edges and of each edge's faces; returns whether one
/// of its edges is open (of one face).
#[inline(always)]
fn face_neighbours(
    fe: &In<u32>,
    ef: &crate::array::Ins<u32, 2>,
    f: u32,
    mut each: impl FnMut(u32),
) -> bool {
    let [ef_offsets, ef_faces] = &ef.0;
    let mut open = false;
    for j in 0..3 {
        let e = fe.get((3 * f).wrapping_add(j));
        let (a, b) = (ef_offsets.get(e), ef_offsets.get(e.wrapping_add(1)));
        open |= b.wrapping_sub(a) == 1;
        for i in a..b {
            let g = ef_faces.get(i);
            if g != f {
                each(g);
            }
        }
    }
    open
}

/// Shared-memory bytes of the kernels that count what they did
/// ([`AssignLevel`], [`InwardLevel`], [`MergeChosen`]): one word a block.
pub const COUNTER_SHARED_BYTES: usize = 16;

/// Runs `each` over the block's chunk of `n` elements (each call returns
/// whether it counts) and adds the block's count to `counter[0]` with one
/// global atomic a block: a global atomic a counted element, all on one
/// word, serialized the searches' levels.
#[inline(always)]
fn counted<B: crate::block::Block>(
    launch: &mut crate::kernel::Launch<'_, B>,
    n: u32,
    counter: &InOut<u32>,
    mut each: impl FnMut(u32) -> bool,
) {
    let block = launch.block;
    let total = launch.arena.alloc::<u32>(1);
    launch.arena.check();
    if block.thread_idx() == 0 {
        total.set(0, 0);
    }
    block.sync();
    let (start, end) = chunk(launch.block_idx, n);
    let mut mine = 0;
    block.for_each(end - start, |k| mine += u32::from(each(start + k)));
    if mine > 0 {
        block.shared_fetch_add(total, 0, mine);
    }
    block.sync();
    if block.thread_idx() == 0 && total.get(0) > 0 {
        counter.fetch_add(0, total.get(0));
    }
}

/// The neighbours of face `f` in the CSR rows.
#[inline(always)]
fn row(offsets: &In<u32>, f: u32) -> (u32, u32) {
    (offsets.get(f), offsets.get(f + 1))
}

/// Item `i` of a launch over a list (`listed` not 0: `list[i]`) or over
/// everything (item `i` is `i`, `list` unread): the searches run on the
/// whole mesh, or on the faces of the patches a round of seed addition
/// splits (and [`PlaceSeeds`] places the listed seeds). The entries of a
/// list are distinct: the kernels that count what they did would count an
/// entry twice.
#[inline(always)]
pub fn item(list: &In<u32>, listed: u32, i: u32) -> u32 {
    if listed != 0 { list.get(i) } else { i }
}

crate::kernel! {
    @core
    /// The face graph's row lengths: for each of the `n` faces (`fe`:
    /// three edges each; `ef`: the edge-face rows, `[offsets, faces]`),
    /// `counts[f]` is the number of faces other than `f` on its edges,
    /// counted once per edge they share; `rim[f]` is 1 for a face with an
    /// open edge (an edge of one face), else 0.
    ///
    /// # Safety
    /// Checked: the relations are only read; each face's count and rim
    /// word are written by one thread.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountFaceNeighbors(
        launch,
        fe: In<u32>,
        ef: crate::array::Ins<u32, 2>,
        n: u32,
        counts: InOut<u32>,
        rim: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let mut count = 0u32;
            let open = face_neighbours(&fe, &ef, f, |_| count += 1);
            counts.set(f, count);
            rim.set(f, u32::from(open));
        });
    }
}

crate::kernel! {
    @core
    /// The face graph's rows: for each of the `n` faces, the faces other
    /// than it on its edges (`fe`, `ef` as [`CountFaceNeighbors`] reads
    /// them), in the order of its edges and of each edge's faces, written
    /// from `offsets[f]` (the scanned counts) into `neighbors`.
    ///
    /// # Safety
    /// Checked: the relations and offsets are only read; each face's row
    /// is written by one thread (a bad offset stops at the bounds check).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FillFaceNeighbors(
        launch,
        fe: In<u32>,
        ef: crate::array::Ins<u32, 2>,
        offsets: In<u32>,
        n: u32,
        neighbors: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let mut at = offsets.get(f);
            face_neighbours(&fe, &ef, f, |g| {
                neighbors.set(at, g);
                at = at.wrapping_add(1);
            });
        });
    }
}

crate::kernel! {
    @core
    /// Marks the initial seeds of `n` faces: `marks[f]` is 1 where
    /// [`face_hash`]`(f, salt)` is below `threshold`, else 0 (`marks` has
    /// `n + 1` words for the scan of [`crate::array::compact`]; the last is
    /// left as it is).
    ///
    /// # Safety
    /// Checked: `marks` is written by atomic stores.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MarkSeeds(launch, n: u32, salt: u32, threshold: u32, marks: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            marks.set(f, u32::from(face_hash(f, salt) < threshold));
        });
    }
}

crate::kernel! {
    @core
    /// Starts an assignment: every one of `n` faces (items: [`item`] of
    /// `list`) unlabelled and unreached ([`NONE`]).
    ///
    /// # Safety
    /// Checked: the arrays are written by atomic stores.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel ClearLabels(
        launch,
        n: u32,
        list: In<u32>,
        listed: u32,
        label: InOut<u32>,
        level: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = item(&list, listed, start + k);
            label.set(f, NONE);
            level.set(f, NONE);
        });
    }
}

crate::kernel! {
    @core
    /// Places the seeds of items `first..count` ([`item`] of `list`: the
    /// seeds' indices) of `seeds` (faces): seed `i` gets label `i` and
    /// level `at`.
    ///
    /// # Safety
    /// Checked: the seeds are only read; labels and levels are written by
    /// atomic stores.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel PlaceSeeds(
        launch,
        seeds: In<u32>,
        list: In<u32>,
        listed: u32,
        first: u32,
        count: u32,
        at: u32,
        label: InOut<u32>,
        level: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, count - first);
        launch.block.for_each(end - start, |k| {
            let i = item(&list, listed, first + start + k);
            let f = seeds.get(i);
            label.set(f, i);
            level.set(f, at);
        });
    }
}

crate::kernel! {
    @core
    /// One level `at` (at least 1) of the nearest-seed search over `n`
    /// faces (items: [`item`] of `list`): every face not reached yet with
    /// a neighbour reached at `at - 1` takes the smallest label among those
    /// neighbours and level `at`; `reached[0]` counts the faces reached. Dynamic shared memory:
    /// [`COUNTER_SHARED_BYTES`].
    ///
    /// # Safety
    /// Checked: the rows are only read; a face's label and level are
    /// written only by its own thread, and only where the level was
    /// [`NONE`], while the words read of other faces are those at `at - 1`,
    /// which no thread writes in this launch.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel AssignLevel(
        launch,
        n: u32,
        list: In<u32>,
        listed: u32,
        at: u32,
        offsets: In<u32>,
        neighbors: In<u32>,
        label: InOut<u32>,
        level: InOut<u32>,
        reached: InOut<u32>,
    ) {
        counted(launch, n, &reached, |i| {
            let f = item(&list, listed, i);
            if level.get(f) != NONE {
                return false;
            }
            let (a, b) = row(&offsets, f);
            let mut best = NONE;
            let mut j = a;
            while j < b {
                let g = neighbors.get(j);
                j += 1;
                if level.get(g) == at - 1 {
                    best = best.min(label.get(g));
                }
            }
            if best != NONE {
                label.set(f, best);
                level.set(f, at);
            }
            best != NONE
        });
    }
}

crate::kernel! {
    @core
    /// Where the search stalled: marks (`marks[f] = 1`, else 0) the
    /// unreached faces with no unreached neighbour of a lower index, at
    /// least one in each component the seeds missed.
    ///
    /// # Safety
    /// Checked: the inputs are only read; `marks` is written by atomic
    /// stores.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MarkUnreached(
        launch,
        n: u32,
        offsets: In<u32>,
        neighbors: In<u32>,
        level: In<u32>,
        marks: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let mut mark = level.get(f) == NONE;
            let (a, b) = row(&offsets, f);
            let mut j = a;
            while mark && j < b {
                let g = neighbors.get(j);
                j += 1;
                mark = !(g < f && level.get(g) == NONE);
            }
            marks.set(f, u32::from(mark));
        });
    }
}

crate::kernel! {
    @core
    /// The rim of every patch, depth 0: the faces on an open edge
    /// (`rim[f]` not 0) or next to a face of another patch; every other
    /// face's depth is [`NONE`].
    ///
    /// # Safety
    /// Checked: the inputs are only read; `depth` is written by atomic
    /// stores.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel PatchRim(
        launch,
        n: u32,
        list: In<u32>,
        listed: u32,
        offsets: In<u32>,
        neighbors: In<u32>,
        rim: In<u32>,
        label: In<u32>,
        depth: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = item(&list, listed, start + k);
            let p = label.get(f);
            let mut edge = rim.get(f) != 0;
            let (a, b) = row(&offsets, f);
            let mut j = a;
            while !edge && j < b {
                edge = label.get(neighbors.get(j)) != p;
                j += 1;
            }
            depth.set(f, if edge { 0 } else { NONE });
        });
    }
}

crate::kernel! {
    @core
    /// One level `at` (at least 1) of the search inward from the rims:
    /// every face without a depth next to a face of its own patch at depth
    /// `at - 1` gets depth `at`; `reached[0]` counts them. Dynamic shared
    /// memory: [`COUNTER_SHARED_BYTES`].
    ///
    /// # Safety
    /// Checked: as [`AssignLevel`], a face's depth is written only by its
    /// own thread where it was [`NONE`], and the depths read of others are
    /// `at - 1`.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel InwardLevel(
        launch,
        n: u32,
        list: In<u32>,
        listed: u32,
        at: u32,
        offsets: In<u32>,
        neighbors: In<u32>,
        label: In<u32>,
        depth: InOut<u32>,
        reached: InOut<u32>,
    ) {
        counted(launch, n, &reached, |i| {
            let f = item(&list, listed, i);
            if depth.get(f) != NONE {
                return false;
            }
            let p = label.get(f);
            let (a, b) = row(&offsets, f);
            let mut j = a;
            while j < b {
                let g = neighbors.get(j);
                j += 1;
                if label.get(g) == p && depth.get(g) == at - 1 {
                    depth.set(f, at);
                    return true;
                }
            }
            false
        });
    }
}

crate::kernel! {
    @core
    /// Each patch's largest depth: `best[p]` (0 to start) becomes the
    /// maximum of `depth[f]` over its faces.
    ///
    /// # Safety
    /// Checked: the inputs are only read; `best` by atomic maxima.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel Deepest(
        launch,
        n: u32,
        list: In<u32>,
        listed: u32,
        label: In<u32>,
        depth: In<u32>,
        best: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = item(&list, listed, start + k);
            best.fetch_max(label.get(f), depth.get(f));
        });
    }
}

crate::kernel! {
    @core
    /// Each patch's lowest-numbered face at its largest depth (`best`, from
    /// [`Deepest`]): `pick[p]` (0 to start) becomes the complement of it.
    ///
    /// # Safety
    /// Checked: the inputs are only read; `pick` by atomic maxima.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel PickDeepest(
        launch,
        n: u32,
        list: In<u32>,
        listed: u32,
        label: In<u32>,
        depth: In<u32>,
        best: In<u32>,
        pick: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = item(&list, listed, start + k);
            let p = label.get(f);
            if depth.get(f) == best.get(p) {
                pick.fetch_max(p, !f);
            }
        });
    }
}

crate::kernel! {
    @core
    /// Marks the faces of the patches flagged in `flags` (`marks[f] = 1`
    /// where `flags[label[f]]` is not 0, else 0), for a compaction into
    /// the list of faces a round of seed addition searches.
    ///
    /// # Safety
    /// Checked: the labels and flags are only read; `marks` is written by
    /// atomic stores.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MarkFlagged(launch, n: u32, label: In<u32>, flags: In<u32>, marks: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            marks.set(f, u32::from(flags.get(label.get(f)) != 0));
        });
    }
}

crate::kernel! {
    @core
    /// Each patch's size and lowest face: `sizes[p]` (0 to start) counts
    /// its faces and `lowest[p]` (0 to start) becomes the complement of its
    /// lowest-numbered face.
    ///
    /// # Safety
    /// Checked: the labels are only read; the others by atomic additions
    /// and maxima.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel Survey(launch, n: u32, label: In<u32>, sizes: InOut<u32>, lowest: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let p = label.get(f);
            sizes.fetch_add(p, 1);
            lowest.fetch_max(p, !f);
        });
    }
}

crate::kernel! {
    @core
    /// Marks (`marks[f] = 1`, else 0) each patch's lowest face (`lowest`
    /// from [`Survey`]), for a scan that numbers the patches in the order
    /// of their lowest faces.
    ///
    /// # Safety
    /// Checked: the inputs are only read; `marks` by atomic stores.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MarkLowest(launch, n: u32, label: In<u32>, lowest: In<u32>, marks: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            marks.set(f, u32::from(!lowest.get(label.get(f)) == f));
        });
    }
}

crate::kernel! {
    @core
    /// Renumbers the patches: each face's label becomes the scanned mark
    /// (`numbers`, the exclusive scan of [`MarkLowest`]'s marks) of its
    /// patch's lowest face.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each face's label is read and
    /// written by its own thread only.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel Renumber(launch, n: u32, numbers: In<u32>, lowest: In<u32>, label: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            label.set(f, numbers.get(!lowest.get(label.get(f))));
        });
    }
}

crate::kernel! {
    @core
    /// Merging, first pass: each patch's smallest neighbouring patch it can
    /// merge with within `max` faces (`sizes` from [`Survey`]): `best[p]`
    /// (0 to start: none) becomes the complement of that size.
    ///
    /// # Safety
    /// Checked: the inputs are only read; `best` by atomic maxima.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SmallestNeighbor(
        launch,
        n: u32,
        max: u32,
        offsets: In<u32>,
        neighbors: In<u32>,
        label: In<u32>,
        sizes: In<u32>,
        best: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let p = label.get(f);
            let room = max.saturating_sub(sizes.get(p));
            let (a, b) = row(&offsets, f);
            let mut j = a;
            while j < b {
                let q = label.get(neighbors.get(j));
                j += 1;
                if q != p && sizes.get(q) <= room {
                    best.fetch_max(p, !sizes.get(q));
                }
            }
        });
    }
}

crate::kernel! {
    @core
    /// Merging, second pass: each patch's choice, the lowest-numbered of
    /// its neighbouring patches of the size [`SmallestNeighbor`] found:
    /// `choice[p]` (0 to start: none) becomes its complement.
    ///
    /// # Safety
    /// Checked: the inputs are only read; `choice` by atomic maxima.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel ChooseNeighbor(
        launch,
        n: u32,
        offsets: In<u32>,
        neighbors: In<u32>,
        label: In<u32>,
        sizes: In<u32>,
        best: In<u32>,
        choice: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let p = label.get(f);
            let want = best.get(p);
            if want == 0 {
                return;
            }
            let (a, b) = row(&offsets, f);
            let mut j = a;
            while j < b {
                let q = label.get(neighbors.get(j));
                j += 1;
                if q != p && !sizes.get(q) == want {
                    choice.fetch_max(p, !q);
                }
            }
        });
    }
}

crate::kernel! {
    @core
    /// Merging, last pass: two patches that chose each other
    /// ([`ChooseNeighbor`]) become one, the lower-numbered; `merged[0]`
    /// counts the faces relabelled. Dynamic shared memory:
    /// [`COUNTER_SHARED_BYTES`].
    ///
    /// # Safety
    /// Checked: the choices are only read; each face's label is read and
    /// written by its own thread only.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MergeChosen(
        launch,
        n: u32,
        choice: In<u32>,
        label: InOut<u32>,
        merged: InOut<u32>,
    ) {
        counted(launch, n, &merged, |f| {
            let p = label.get(f);
            let c = choice.get(p);
            if c == 0 {
                return false;
            }
            let q = !c;
            let merges = q < p && choice.get(q) == !p;
            if merges {
                label.set(f, q);
            }
            merges
        });
    }
}
