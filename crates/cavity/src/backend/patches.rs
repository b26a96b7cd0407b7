//! A mesh's patches as a backend holds them: the static patch layout in
//! the backend's buffers ([`PatchBuffers`], built by
//! [`super::patch_build`]) or on the host ([`PatchedMesh`]). What a
//! topology keeps for later placements (`TopologyOn::keeping_patches`).

use cavity_device::layout::PatchInfo;

use super::buffer::Buffer;
use crate::patched::PatchedMesh;

/// The static patch layout in a backend's buffers
/// ([`super::Backend::patch_buffers`]): the arrays of [`PatchedMesh`] as
/// the device built them, FE and EV as words of two 16-bit entries, with
/// the headers on the host too.
pub struct PatchBuffers {
    /// The patch headers.
    pub(crate) infos: Vec<PatchInfo>,
    /// The headers on the backend, `INFO_WORDS` words a patch.
    pub(crate) header_words: Buffer<u32>,
    /// FE and EV, two entries a word.
    pub(crate) fe_words: Buffer<u32>,
    pub(crate) ev_words: Buffer<u32>,
    /// Ribbon entries, stashes and bitmasks.
    pub(crate) ribbon: Buffer<u32>,
    pub(crate) stash: Buffer<u32>,
    pub(crate) masks: Buffer<u32>,
    /// The entries of FE, EV, ribbon, stash and masks.
    pub(crate) lens: [u32; 5],
    /// Each kind's handle → input element and input element → handle.
    pub(crate) maps: [[Buffer<u32>; 2]; 3],
    /// Input vertices, edges and faces.
    pub(crate) counts: [u32; 3],
    pub(crate) patch_size: u32,
    pub(crate) lloyd_iterations: u32,
}

/// A mesh's patches as a backend builds them best (`Backend::patches`).
pub(crate) enum Patches {
    /// Built on the backend and left there.
    OnBackend(Box<PatchBuffers>),
    /// Built on the host.
    Host(Box<PatchedMesh>),
}
