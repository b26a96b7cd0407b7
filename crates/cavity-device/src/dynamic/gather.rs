//! Attribute words read and written by input element, what an application
//! that leaves the mesh unchanged (normals, smoothing, denoising, geodesic
//! distance) needs of the rounds without copying the dynamic mesh either
//! way. The host's order ("element order": `DynamicMesh::sources` of the
//! host crate) puts the surviving input elements first, by input index;
//! [`GatherByInput`] writes each active owned element's words (and its
//! owner patch) at its input index, so that the host only drops the input
//! elements the mesh does not hold. An element a fill-in added has no
//! input index, and one may share its index with another: the kernel
//! counts both, and the host then reads the mesh back instead. [`ScatterByInput`] writes every local element's words,
//! ribbon copies included, from an array by input index.

use crate::kernel::ELEMENT_BOUNDS;
use crate::layout::Kind;

use super::global::GlobalU32;
use super::layout::{NEW_ELEMENT, RawDynamicMesh, input_index_word};
use super::patch::DynMesh;

crate::kernel! {
    @core
    /// Words `first..first + words` of every active owned element of
    /// `kind` (`Kind::from_u32`) of used patch slot `p` (a block each)
    /// into `out[words × input..]`, where `input` is the element's input
    /// index (below `inputs`), with `present[input]` counting the elements
    /// of that input (1 unless a fill-in copied an index) and, unless
    /// `owners` is 0, `owners[input]` to `p`; `strays[0]` counts the
    /// elements without one (an input index of [`NEW_ELEMENT`], or of a
    /// kind without attribute words) or past `inputs`.
    ///
    /// # Safety
    /// `mesh` describes the live arrays of a dynamic mesh that nothing
    /// writes meanwhile, whose attribute words of `kind` hold
    /// `first + words` words an element; `out` points at `words × inputs`
    /// words, `present` and `owners` (unless 0) at `inputs` and `strays`
    /// at one, all zeroed.
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
        owners: u64,
        strays: u64,
    ) {
        // SAFETY: the kernel's contract.
        let (m, out, present, owner, strays) = unsafe {
            (
                DynMesh::new(&mesh),
                GlobalU32::new(out),
                GlobalU32::new(present),
                GlobalU32::new(owners),
                GlobalU32::new(strays),
            )
        };
        let p = launch.block_idx;
        let kind = Kind::from_u32(kind);
        let index_word = input_index_word(kind);
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
            present.fetch_add(input, 1);
            if owners != 0 {
                owner.store(input, p);
            }
            for w in 0..words {
                out.store(input * words + w, m.load_value(kind, (p, l), first + w, 1)[0]);
            }
        });
        if lost > 0 {
            strays.fetch_add(0, lost);
        }
    }
}

crate::kernel! {
    @core
    /// Words `first..first + words` of every local element of `kind`
    /// (`Kind::from_u32`) of used patch slot `p` (a block each), owned or
    /// not, set from `values[words × input..]`, where `input` is the
    /// element's input index; an element without one below `inputs` keeps
    /// its words.
    ///
    /// # Safety
    /// `mesh` describes the live arrays of a dynamic mesh that nothing
    /// else reads or writes meanwhile, whose attribute words of `kind`
    /// hold `first + words` words an element; `values` points at
    /// `words × inputs` words.
    #[launch_bounds = ELEMENT_BOUNDS]
    pub kernel ScatterByInput(
        launch,
        mesh: RawDynamicMesh,
        kind: u32,
        first: u32,
        words: u32,
        inputs: u32,
        values: u64,
    ) {
        // SAFETY: the kernel's contract.
        let (m, values) = unsafe { (DynMesh::new(&mesh), GlobalU32::new(values)) };
        let p = launch.block_idx;
        let kind = Kind::from_u32(kind);
        let index_word = input_index_word(kind);
        if m.cap.attr_stride(kind) <= index_word {
            return;
        }
        launch.block.for_each(m.count(p, kind), |l| {
            let input = m.load_value(kind, (p, l), index_word, 1)[0];
            if input >= inputs {
                return;
            }
            for w in 0..words {
                let v = values.load(input * words + w);
                m.store_value(kind, (p, l), first + w, [v, 0], 1);
            }
        });
    }
}
