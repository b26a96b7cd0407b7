//! One block's launch of a computation: the shared-memory windows
//! ([`Windows`]), the query's relation in compressed rows built there
//! ([`build_rows`]) and the loop over the owned active
//! elements ([`each_element`]).

use super::ElementComputation;
use super::element::Element;
use super::rows::Rows;
use super::sweeps::{Gather, Gathered, Sweep, Sweeps, pick};
use crate::attribute::Attr;
use crate::block::{Block, Shared, SharedArena};
use crate::dynamic::layout::{Capacity, computation_writes};
use crate::dynamic::patch::{DynMesh, PatchCopy};
use crate::layout::Kind;
use crate::query::Query;

/// The relation a transposed query needs: `(rows' kind, element kind
/// whose incidences are transposed, incidences per element)`.
#[inline(always)]
pub(super) fn transposed(query: Query) -> Option<(Kind, Kind, u32)> {
    match query {
        Query::VV | Query::VE => Some((Kind::Vertex, Kind::Edge, 2)),
        Query::VF => Some((Kind::Vertex, Kind::Face, 3)),
        Query::EF => Some((Kind::Edge, Kind::Face, 3)),
        Query::EV | Query::FV | Query::FE | Query::FF => None,
    }
}

/// Shared-memory windows: the patch copy, the rows, the scan's scratch
/// and the faces per edge (when counted).
pub(in crate::dynamic) struct Windows {
    pub(in crate::dynamic) copy: PatchCopy,
    pub(in crate::dynamic) rows: Rows,
    pub(in crate::dynamic) scratch: Shared<u32>,
    pub(super) faces: Option<Shared<u32>>,
    /// A sweeping computation's carried values and flags ([`Carried`]).
    pub(super) carried: Option<Carried>,
    /// The gathered words ([`ElementComputation::GATHERED_WORDS`]): per
    /// vertex slot, `3 + words` of them.
    pub(super) gathered: Option<(Shared<u32>, u32)>,
}

impl Windows {
    pub(in crate::dynamic) fn alloc(
        arena: &mut SharedArena,
        cap: &Capacity,
        (query, needs): (Query, Needs),
        threads: u32,
        p: u32,
    ) -> Windows {
        let copy = PatchCopy::alloc(arena, *cap, p);
        let (rows, of, per) =
            transposed(query)
                .filter(|_| needs.results)
                .unwrap_or((Kind::Vertex, Kind::Vertex, 0));
        let n = if per == 0 { 1 } else { cap.of(rows) + 1 };
        let ends = arena.alloc(n);
        let entries = arena.alloc((per * cap.of(of)).max(1));
        let scratch = arena.alloc(crate::block::scan_scratch_len(threads));
        let faces = needs.faces_per_edge.then(|| arena.alloc(cap.edges.max(1)));
        let slots = cap.of(query.source()).max(1);
        let carried = needs.sweeping.then(|| Carried {
            buffers: [0; 4].map(|_| arena.alloc(slots)),
            launch: [0; 2].map(|_| arena.alloc(slots)),
            active: arena.alloc(slots),
            flags: arena.alloc(5),
        });
        let gathered = needs.gathered.map(|words| {
            let stride = 3 + words;
            (arena.alloc(stride * cap.vertices.max(1)), stride)
        });
        Windows {
            copy,
            rows: Rows { ends, entries },
            scratch,
            faces,
            carried,
            gathered,
        }
    }
}

/// The shared memory of a sweeping computation ([`Sweeps`]).
#[derive(Clone, Copy)]
pub(super) struct Carried {
    /// Pair `j`'s two buffers: `2j` and `2j + 1` (sweep `k` reads buffer
    /// `k % 2` and writes the other).
    pub(super) buffers: [Shared<u32>; 4],
    /// Per pair, the launch's values.
    pub(super) launch: [Shared<u32>; 2],
    /// Per element slot, 1 where the element computes.
    pub(super) active: Shared<u32>,
    /// Sweep `k`'s count at `k % 2`, its request for another sweep at
    /// `2 + k % 3` (zeroed a sweep ahead, read after its barrier: three
    /// turns so that no thread zeroes one another may still read).
    pub(super) flags: Shared<u32>,
}

impl Carried {
    /// What sweep `k` reads and writes.
    #[inline(always)]
    pub(super) fn sweep(&self, sweeps: Sweeps, k: u32) -> Sweep {
        let (r, w) = if k % 2 == 0 { (0, 1) } else { (1, 0) };
        Sweep {
            sweeps,
            values: [self.buffers[r], self.buffers[2 + r]],
            next: [self.buffers[w], self.buffers[2 + w]],
            launch: self.launch,
            flags: self.flags,
            k,
        }
    }
}

/// What a kernel builds besides the patch copy: the query's results and
/// the faces per edge.
#[derive(Clone, Copy)]
pub(in crate::dynamic) struct Needs {
    pub(super) results: bool,
    pub(super) faces_per_edge: bool,
    pub(super) sweeping: bool,
    /// Gathered words per vertex besides the positions, where gathered.
    pub(super) gathered: Option<u32>,
}

impl Needs {
    /// What computation `C` reads.
    pub(super) const fn of<C: ElementComputation>() -> Needs {
        Needs {
            results: C::QUERY_RESULTS,
            faces_per_edge: C::FACES_PER_EDGE,
            sweeping: C::SWEEPING,
            gathered: if C::SWEEPING || C::GATHERS {
                Some(C::GATHERED_WORDS)
            } else {
                None
            },
        }
    }

    /// The query's results only (the query export).
    pub(in crate::dynamic) const RESULTS: Needs = Needs {
        results: true,
        faces_per_edge: false,
        sweeping: false,
        gathered: None,
    };
}

/// Shared-memory bytes of computation `C`'s kernel with `threads` threads.
pub fn shared_bytes<C: ElementComputation>(cap: &Capacity, threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    Windows::alloc(&mut arena, cap, (C::QUERY, Needs::of::<C>()), threads, 0);
    arena.used()
}

/// Counts the active faces of every local edge into `faces`. Returns
/// after a barrier.
#[inline(always)]
pub(super) fn count_edge_faces<B: Block>(block: &B, copy: &PatchCopy, faces: Shared<u32>) {
    block.for_each(copy.count(Kind::Edge), |e| faces.set(e, 0));
    block.sync();
    block.for_each(copy.count(Kind::Face), |f| {
        if copy.is_active(Kind::Face, f) {
            for i in 0..3 {
                block.shared_fetch_add(faces, copy.face_edge(f, i).0, 1);
            }
        }
    });
    block.sync();
}

/// Builds the rows of `query` (a block-cooperative transpose of the active
/// elements' incidences: count, scan, fill, sort), each row in ascending
/// local index. Returns after a barrier.
#[inline(always)]
pub(in crate::dynamic) fn build_rows<B: Block>(
    block: &B,
    copy: &PatchCopy,
    query: Query,
    rows: &Rows,
    scratch: Shared<u32>,
) {
    let Some((kind, of, per)) = transposed(query) else {
        return;
    };
    let n = copy.count(kind);
    let m = copy.count(of);
    let target = |x: u32, i: u32| -> u32 {
        match of {
            Kind::Edge => copy.edge_vertices(x)[i as usize % 2],
            _ if kind == Kind::Vertex => copy.face_vertices(x)[i as usize % 3],
            _ => copy.face_edge(x, i % 3).0,
        }
    };
    block.for_each(n + 1, |s| rows.ends.set(s, 0));
    block.sync();
    block.for_each(m, |x| {
        if copy.is_active(of, x) {
            for i in 0..per {
                block.shared_fetch_add(rows.ends, target(x, i), 1);
            }
        }
    });
    block.sync();
    block.scan(rows.ends, n + 1, scratch, false);
    block.sync();
    block.for_each(m, |x| {
        if copy.is_active(of, x) {
            for i in 0..per {
                // Each placement advances the row's start: afterwards
                // `ends[s]` is the end of row `s`.
                let at = block.shared_fetch_add(rows.ends, target(x, i), 1);
                rows.entries.set(at, x as u16);
            }
        }
    });
    block.sync();
    // The placements race on the GPU: each row is sorted (insertion sort,
    // rows are short), so that its order, and every sum a computation
    // takes over it, is the same on every run and on both backends.
    block.for_each(n, |s| {
        let start = rows.start(s);
        for i in start + 1..rows.end(s) {
            let x = rows.entries.get(i);
            let mut j = i;
            while j > start && rows.entries.get(j - 1) > x {
                rows.entries.set(j, rows.entries.get(j - 1));
                j -= 1;
            }
            rows.entries.set(j, x);
        }
    });
    block.sync();
}

/// What [`each_element`] does with an element, inlined into its loop (a
/// call would keep the element in local memory on the GPU).
pub(super) trait Visit<B: Block> {
    fn visit(&mut self, element: &Element<'_, B>);
}

/// A computation's [`ElementComputation::compute`].
pub(super) struct Computing<'c, C>(pub(super) &'c C);

impl<B: Block, C: ElementComputation> Visit<B> for Computing<'_, C> {
    #[inline(always)]
    fn visit(&mut self, element: &Element<'_, B>) {
        self.0.compute(element);
    }
}

/// A closure of the core's kernels.
pub(super) struct Calling<F>(pub(super) F);

impl<B: Block, F: FnMut(&Element<'_, B>)> Visit<B> for Calling<F> {
    #[inline(always)]
    fn visit(&mut self, element: &Element<'_, B>) {
        (self.0)(element);
    }
}

/// Calls `f` on every owned active element of `query`'s source kind in
/// patch slot `p` (nothing for a slot not in use), with the query's rows
/// built in shared memory and the faces per edge counted as `needs` says
/// ([`shared_bytes`], [`shared_bytes_of`]). With `screen`, a patch none of
/// whose elements `screen` accepts (seen without query results) returns
/// before building them, and `f` runs on the elements `screen` accepts
/// (asked again, with the query's results). With more than one of
/// `sweeps` (and the carried windows), `f` runs up to that many times per
/// element ([`Sweeps`], `screen` asked once per element), and the carried
/// values of the elements `screen` accepts are stored after.
#[inline(always)]
pub(super) fn each_element<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    p: u32,
    (query, needs): (Query, Needs),
    (screen, sweeps, gather): (
        Option<impl Fn(&Element<'_, B>) -> bool>,
        Sweeps,
        Option<Gather>,
    ),
    mut f: impl Visit<B>,
) {
    if p >= mesh.num_patches {
        return;
    }
    let Windows {
        copy,
        rows,
        scratch,
        faces,
        carried,
        gathered,
    } = Windows::alloc(arena, &mesh.cap, (query, needs), block.block_dim(), p);
    arena.check();
    // With a screen, the connectivity (most of the patch) is loaded only
    // once the screen found an element: the screen sees the masks and
    // the element's own attributes.
    if screen.is_some() {
        copy.load_masks(block, mesh);
    } else {
        copy.load(block, mesh);
    }
    block.sync();
    let kind = query.source();
    // The gathered words, once loaded (with the connectivity).
    let view = gathered.map(|(words, stride)| Gathered {
        words,
        stride,
        gather: gather.map_or(Gather::NONE, |g| g.held_by(mesh)),
    });
    let element =
        |l: u32, loaded: bool, faces: Option<Shared<u32>>, sweep: Option<Sweep>| Element {
            block,
            mesh,
            copy: &copy,
            rows: &rows,
            faces,
            query,
            results: loaded && needs.results,
            sweep,
            gathered: view.filter(|_| loaded),
            l,
        };
    let owned = |l: u32| copy.is_owned(kind, l) && copy.is_active(kind, l);
    if let Some(screen) = &screen {
        let mut any = false;
        block.for_each(copy.count(kind), |l| {
            if owned(l) {
                any |= screen(&element(l, false, None, None));
            }
        });
        if !block.sync_any(any) {
            return;
        }
        copy.load_connectivity(block, mesh);
        block.sync();
    }
    if needs.results {
        build_rows(block, &copy, query, &rows, scratch);
    }
    if let Some(faces) = faces {
        count_edge_faces(block, &copy, faces);
    }
    if let Some(g) = view {
        // Every local vertex's position and gathered words, from its
        // owner (the attributes the mesh holds).
        let [(a, n), (b, m)] = g.gather.attrs;
        block.for_each(copy.count(Kind::Vertex), |v| {
            let at = copy
                .is_active(Kind::Vertex, v)
                .then(|| copy.owner_or_self(block, Kind::Vertex, v));
            let load = |word| at.map_or(0, |o| mesh.load_value(Kind::Vertex, o, word, 1)[0]);
            let base = g.stride * v;
            for i in 0..3 {
                g.words.set(base + i, load(i));
            }
            for i in 0..n {
                g.words.set(base + 3 + i, load(a + i));
            }
            for i in 0..m {
                g.words.set(base + 3 + n + i, load(b + i));
            }
        });
        block.sync();
    }
    let pairs = sweeps.pairs as usize;
    let held = |offset: u32| mesh.holds(&Attr::<u32, 1>::new(kind, offset));
    let sweeping = carried.filter(|_| {
        sweeps.count > 1
            && sweeps.kind == kind
            && (0..pairs).all(|j| held(sweeps.read[j]) && held(sweeps.write[j]))
    });
    if let Some(c) = sweeping {
        // The launch's carried values of every local element and the
        // positions of every local vertex, from their owners, and which
        // elements compute.
        block.for_each(copy.count(kind), |l| {
            let owner = copy
                .is_active(kind, l)
                .then(|| copy.owner_or_self(block, kind, l));
            for j in 0..2 {
                if j < pairs {
                    let value = owner.map_or(0, |o| mesh.load_value(kind, o, sweeps.read[j], 1)[0]);
                    c.buffers[2 * j].set(l, value);
                    c.launch[j].set(l, value);
                }
            }
            let computes = owned(l)
                && screen
                    .as_ref()
                    .is_none_or(|s| s(&element(l, true, faces, None)));
            c.active.set(l, u32::from(computes));
        });
        if block.thread_idx() == 0 {
            for i in 0..5 {
                c.flags.set(i, 0);
            }
        }
        block.sync();
    }
    // One sweep without carried values; with them, up to `sweeps.count`
    // (one call site of `f`, which inlines).
    let rounds = if sweeping.is_some() { sweeps.count } else { 1 };
    let mut turn = 0;
    for k in 0..rounds {
        turn = k;
        let sweep = sweeping.map(|c| c.sweep(sweeps, k));
        if let Some(s) = sweep.filter(|_| block.thread_idx() == 0) {
            s.flags.set(s.count_at(k + 1), 0);
            s.flags.set(s.asked_at(k + 1), 0);
        }
        block.for_each(copy.count(kind), |l| {
            let computes = match (sweeping, sweep) {
                (Some(c), Some(s)) => {
                    // An element that sets no value carries its last one.
                    for j in 0..2 {
                        if j < pairs {
                            pick(s.next, j).set(l, pick(s.values, j).get(l));
                        }
                    }
                    c.active.get(l) != 0
                }
                _ => {
                    owned(l)
                        && screen
                            .as_ref()
                            .is_none_or(|s| s(&element(l, true, faces, None)))
                }
            };
            if computes {
                f.visit(&element(l, true, faces, sweep));
            }
        });
        let Some(s) = sweep else {
            return;
        };
        block.sync();
        if s.flags.get(s.asked_at(k)) == 0 {
            break;
        }
    }
    let Some(c) = sweeping else {
        return;
    };
    let last = c.sweep(sweeps, turn);
    // The last sweep's count.
    if block.thread_idx() == 0 {
        mesh.add_stat(
            crate::dynamic::layout::stat::COUNTED,
            last.flags.get(last.count_at(turn)),
        );
    }
    block.for_each(copy.count(kind), |l| {
        if c.active.get(l) != 0 {
            for (j, &word) in sweeps.write.iter().enumerate().take(pairs) {
                let write = Attr::<u32, 1>::new(kind, word);
                if computation_writes(kind, &write) {
                    let value = pick(last.next, j).get(l);
                    mesh.store_attr_as(kind, &write, (p, l), [value]);
                }
            }
        }
    });
}

/// Shared-memory bytes of the kernels of `query` (the query export's, or a
/// computation's with that query) with `threads` threads.
pub fn shared_bytes_of(query: Query, cap: &Capacity, threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    Windows::alloc(&mut arena, cap, (query, Needs::RESULTS), threads, 0);
    arena.used()
}
