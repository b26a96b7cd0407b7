//! Attribute words read back by input element: what an application that
//! leaves the mesh unchanged (normals, smoothing, denoising) needs of the
//! rounds' result, without copying the dynamic mesh back. The host's
//! order ("element order": `DynamicMesh::sources` of the host crate) puts
//! the surviving input elements first, by input index; [`GatherByInput`]
//! writes each active owned element's words at its input index, so that
//! the host only drops the input elements the mesh does not hold. An
//! element a fill-in added has no input index: the kernel counts them,
//! and the host then reads the mesh back instead.

use crate::kernel::ELEMENT_BOUNDS;
use crate::layout::Kind;

use super::global::GlobalU32;
use super::layout::{ELEMENT_INPUT_INDEX, INPUT_INDEX_ATTR, NEW_ELEMENT, RawDynamicMesh};
use super::patch::DynMesh;

crate::kernel! {
    @core
    /// Words `first..first + words` of every active owned element of
    /// `kind` (`Kind::from_u32`) of used patch slot `p` (a block each)
    /// into `out[words × input..]`, where `input` is the element's input
    /// index (below `inputs`), with `present[input]` set to 1;
    /// `strays[0]` counts the elements without one (an input index of
    /// [`NEW_ELEMENT`], or of a kind without attribute words) or past
    /// `inputs`.
    ///
    /// # Safety
    /// `mesh` describes the live arrays of a dynamic mesh that nothing
    /// writes meanwhile, whose attribute words of `kind` hold
    /// `first + words` words an element; `out` points at `words × inputs`
    /// words, `present` at `inputs` and `strays` at one, all zeroed.
    #[launch_bounds = ELEMENT_BOUNDS]
    pub kernel GatherByInput(
        launch,
        mesh: RawDynamicMesh,
        kind: u32,
        first: u32,
        words: u32,
        inputs: u32,
        out: u64,
        present: u64,
        strays: u64,
    ) {
        // SAFETY: the kernel's contract.
        let (m, out, present, strays) = unsafe {
            (
                DynMesh::new(&mesh),
                GlobalU32::new(out),
                GlobalU32::new(present),
                GlobalU32::new(strays),
            )
        };
        let p = launch.block_idx;
        let kind = Kind::from_u32(kind);
        let index_word = match kind {
            Kind::Vertex => INPUT_INDEX_ATTR,
            Kind::Edge | Kind::Face => ELEMENT_INPUT_INDEX,
        };
        let indexed = m.cap.attr_stride(kind) > index_word;
        let mut lost = 0;
        launch.block.for_each(m.count(p, kind), |l| {
            if !m.owns_active(p, kind, l) {
                return;
            }
            let input = if indexed {
                m.load_value(kind, (p, l), index_word, 1)[0]
            } else {
                NEW_ELEMENT
            };
            if input >= inputs {
                lost += 1;
                return;
            }
            present.store(input, 1);
            for w in 0..words {
                out.store(input * words + w, m.load_value(kind, (p, l), first + w, 1)[0]);
            }
        });
        if lost > 0 {
            strays.fetch_add(0, lost);
        }
    }
}
