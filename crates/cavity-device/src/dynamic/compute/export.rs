//! The first-order queries of the dynamic mesh exported by slot: the
//! kernel [`ExportQuery`] and its body [`export`].

use super::FOR_EACH_BOUNDS;
use super::element::Element;
use super::launch::{Calling, Needs, each_element};
use super::sweeps::Sweeps;
use crate::block::{Block, SharedArena};
use crate::dynamic::global::GlobalU32;
use crate::dynamic::layout::RawDynamicMesh;
use crate::dynamic::patch::DynMesh;
use crate::query::Query;

/// Kernel body of the query export: for every owned active source element
/// `l` of patch slot `p` (slot index `p × cap + l`), with `offsets` null
/// its row's length goes to `counts[slot]`; otherwise row `i` goes to
/// `values[offsets[slot] + i]` as the owner's slot index of each result
/// (`q × cap + l_q` of the target kind), resolved through the ribbon.
#[inline(always)]
pub fn export<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    p: u32,
    query: Query,
    out: &ExportArrays,
) {
    let (source, target) = (query.source(), query.target());
    let screen = None::<fn(&Element<'_, B>) -> bool>;
    each_element(
        block,
        arena,
        mesh,
        p,
        (query, Needs::RESULTS),
        (screen, Sweeps::ONE, None),
        Calling(|e: &Element<'_, B>| {
            let slot = p * mesh.cap.of(source) + e.local();
            if out.offsets.is_none() {
                out.counts.store(slot, e.len());
                return;
            }
            let start = out.offsets.map_or(0, |o| o.load(slot));
            for (i, n) in e.neighbors().enumerate() {
                let (q, l) = e.copy.owner_or_self(block, target, n);
                out.values
                    .store(start + i as u32, q * mesh.cap.of(target) + l);
            }
        }),
    );
}

/// The query export's arrays (see [`export`]).
pub struct ExportArrays {
    /// Per source slot: the row's length (the counting pass).
    pub counts: GlobalU32,
    /// Per source slot: the row's first value (the filling pass).
    pub offsets: Option<GlobalU32>,
    /// The rows' values.
    pub values: GlobalU32,
}

crate::kernel! {
    @core
    /// The first-order query `query` (a [`Query`] code, not FF) of the
    /// dynamic mesh exported by slot ([`export`]): with `offsets` 0 the
    /// counting pass, else the filling pass. One block per patch slot in
    /// use, [`shared_bytes_of`](super::shared_bytes_of) the query's shared memory.
    ///
    /// # Safety
    /// The mesh describes live arrays of a dynamic mesh; `counts` and
    /// (when not 0) `offsets` hold one entry per slot of the source kind
    /// (`cap.patches × cap`), `values` as many entries as the counts sum
    /// to (or is 0 in the counting pass).
    #[launch_bounds = FOR_EACH_BOUNDS]
    pub kernel ExportQuery(launch, mesh: RawDynamicMesh, query: u32, counts: u64, offsets: u64, values: u64) {
        let Some(query) = Query::from_u32(query).filter(|&q| q != Query::FF) else {
            return;
        };
        // SAFETY: the kernel's contract.
        let (m, out) = unsafe {
            (
                DynMesh::new(&mesh),
                ExportArrays {
                    counts: GlobalU32::new(counts),
                    offsets: (offsets != 0).then(|| GlobalU32::new(offsets)),
                    values: GlobalU32::new(values),
                },
            )
        };
        export(launch.block, launch.arena, &m, launch.block_idx, query, &out);
    }
}
