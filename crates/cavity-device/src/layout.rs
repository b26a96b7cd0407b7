//! The patched mesh as it lies in global memory: per-patch LAR matrices
//! (FE with the edge-orientation bit, EV) in 16-bit local indices, owned and
//! active bitmasks, the ribbon table of not-owned elements and the patch stash.
//!
//! RXMesh (Mahmoud et al. 2021) section 6.1 and the dynamic system's
//! section 5.1 / appendix A: a not-owned (ribbon) element of patch `p` is
//! stored as a 32-bit value naming its owner patch by an index into `p`'s
//! *patch stash* (the list of neighbour patches) and its local index in the
//! owner. Handles are global: the owned elements of patch `p` are numbered
//! `base(p) .. base(p) + owned(p)` so attributes are stored per patch,
//! contiguously (the dynamic paper's localized attribute allocation, fig. 8).

use crate::kernel::slice_at;

/// Bit 0 of an FE entry: set when the face traverses the edge from its second
/// EV vertex to its first. The local edge index is the entry shifted right by 1.
pub const FE_REVERSED: u16 = 1;

/// Largest number of local edges a patch may hold: FE keeps 15 bits of
/// index, and the vertex queries count the `2 × edges` half-edges in 16 bits.
pub const MAX_LOCAL_EDGES: u32 = (1 << 15) - 1;
/// Largest number of local faces a patch may hold: the vertex queries index
/// corners (`3 × face + i`) in 16 bits.
pub const MAX_LOCAL_FACES: u32 = 0xffff / 3;
/// Largest number of local vertices a patch may hold (16-bit indices).
pub const MAX_LOCAL_ELEMENTS: u32 = 1 << 16;

/// Element kinds of a triangle mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Kind {
    /// 0-cells.
    Vertex = 0,
    /// 1-cells.
    Edge = 1,
    /// 2-cells (triangles).
    Face = 2,
}

impl Kind {
    /// The three kinds, in discriminant order.
    pub const ALL: [Kind; 3] = [Kind::Vertex, Kind::Edge, Kind::Face];

    /// `f(self)`, called in one match arm per kind with the kind as a
    /// constant, so that the inlined `f` is specialized per kind. A kind
    /// read from data (an attribute handle's) otherwise selects per-kind
    /// fields at run time, and on the GPU a struct indexed at run time
    /// moves to local memory (slow; it grew the valence flip's stack
    /// frame tenfold).
    #[inline(always)]
    pub fn specialize<R>(self, f: impl FnOnce(Kind) -> R) -> R {
        match self {
            Kind::Vertex => f(Kind::Vertex),
            Kind::Edge => f(Kind::Edge),
            Kind::Face => f(Kind::Face),
        }
    }

    /// The kind of discriminant `k` (faces for 2 and above).
    #[inline(always)]
    pub fn from_u32(k: u32) -> Kind {
        match k {
            0 => Kind::Vertex,
            1 => Kind::Edge,
            _ => Kind::Face,
        }
    }
}

/// Header of one patch: counts, offsets into the shared arrays of
/// [`PatchMesh`], and the first global handle of each owned element kind.
/// 64 bytes per patch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct PatchInfo {
    /// Local vertices, owned first then not-owned (ribbon).
    pub num_vertices: u32,
    /// Local edges, owned first.
    pub num_edges: u32,
    /// Local faces, owned first.
    pub num_faces: u32,
    /// Owned vertices (local indices `0..owned_vertices`).
    pub owned_vertices: u32,
    /// Owned edges.
    pub owned_edges: u32,
    /// Owned faces.
    pub owned_faces: u32,
    /// First FE entry (three per local face); a multiple of 8, and the
    /// patch's FE is padded to a multiple of 8 entries (16 bytes).
    pub fe_offset: u32,
    /// First EV entry (two per local edge); aligned and padded as FE.
    pub ev_offset: u32,
    /// First ribbon entry: not-owned vertices, then edges, then faces.
    pub ribbon_offset: u32,
    /// First entry of the patch stash (neighbour patch ids).
    pub stash_offset: u32,
    /// Entries in the patch stash.
    pub stash_len: u32,
    /// First bitmask word: owned V, active V, owned E, active E, owned F,
    /// active F, each `ceil(n / 32)` words.
    pub mask_offset: u32,
    /// Global handle of owned local vertex 0.
    pub vertex_base: u32,
    /// Global handle of owned local edge 0.
    pub edge_base: u32,
    /// Global handle of owned local face 0.
    pub face_base: u32,
    /// Number of FF entries of the patch's faces (sizes the FF buffer).
    pub ff_entries: u32,
}

impl PatchInfo {
    /// Local element count of `kind`.
    #[inline(always)]
    pub fn count(&self, kind: Kind) -> u32 {
        match kind {
            Kind::Vertex => self.num_vertices,
            Kind::Edge => self.num_edges,
            Kind::Face => self.num_faces,
        }
    }

    /// Owned element count of `kind`.
    #[inline(always)]
    pub fn owned(&self, kind: Kind) -> u32 {
        match kind {
            Kind::Vertex => self.owned_vertices,
            Kind::Edge => self.owned_edges,
            Kind::Face => self.owned_faces,
        }
    }

    /// Global handle of owned local element 0 of `kind`.
    #[inline(always)]
    pub fn base(&self, kind: Kind) -> u32 {
        match kind {
            Kind::Vertex => self.vertex_base,
            Kind::Edge => self.edge_base,
            Kind::Face => self.face_base,
        }
    }

    /// First ribbon entry of `kind`.
    #[inline(always)]
    pub fn ribbon_start(&self, kind: Kind) -> u32 {
        let v = self.num_vertices - self.owned_vertices;
        let e = self.num_edges - self.owned_edges;
        self.ribbon_offset
            + match kind {
                Kind::Vertex => 0,
                Kind::Edge => v,
                Kind::Face => v + e,
            }
    }

    /// First word of the owned (`active == false`) or active bitmask of `kind`.
    #[inline(always)]
    pub fn mask_start(&self, kind: Kind, active: bool) -> u32 {
        let wv = self.num_vertices.div_ceil(32);
        let we = self.num_edges.div_ceil(32);
        let wf = self.num_faces.div_ceil(32);
        let (start, words) = match kind {
            Kind::Vertex => (0, wv),
            Kind::Edge => (2 * wv, we),
            Kind::Face => (2 * wv + 2 * we, wf),
        };
        self.mask_offset + start + if active { words } else { 0 }
    }

    /// Bitmask words of the patch (owned and active, all kinds).
    pub fn mask_words(&self) -> u32 {
        2 * (self.num_vertices.div_ceil(32)
            + self.num_edges.div_ceil(32)
            + self.num_faces.div_ceil(32))
    }
}

/// A ribbon entry: the owner's index in the patch stash and the local index
/// in the owner patch.
#[inline(always)]
pub fn ribbon_entry(stash_index: u32, owner_local: u32) -> u32 {
    (stash_index << 16) | owner_local
}

/// The owner's index in the patch stash and the local index in the owner
/// of a ribbon entry (the inverse of [`ribbon_entry`]).
#[inline(always)]
pub fn ribbon_owner(entry: u32) -> (u32, u32) {
    (entry >> 16, entry & 0xffff)
}

/// Borrowed view of a patched mesh (global memory on the GPU, host memory on
/// the CPU backend). Shapes: `patches[P]`; `fe[3 * local faces]`;
/// `ev[2 * local edges]`; `ribbon[not-owned elements]`; `stash[..]`;
/// `masks[..]`, all indexed through the offsets in [`PatchInfo`].
#[derive(Clone, Copy)]
pub struct PatchMesh<'a> {
    /// One header per patch.
    pub patches: &'a [PatchInfo],
    /// FE: three entries per local face, `(local edge << 1) | reversed`.
    pub fe: &'a [u16],
    /// EV: two local vertices per local edge.
    pub ev: &'a [u16],
    /// Ribbon table, see [`ribbon_entry`].
    pub ribbon: &'a [u32],
    /// Patch stash: neighbour patch ids.
    pub stash: &'a [u32],
    /// Owned and active bitmasks.
    pub masks: &'a [u32],
}

impl PatchMesh<'_> {
    /// Whether bit `local` of the owned (`active == false`) or active mask of
    /// `kind` in the patch is set.
    #[inline(always)]
    pub fn mask_bit(&self, info: &PatchInfo, kind: Kind, active: bool, local: u32) -> bool {
        let w = self.masks[(info.mask_start(kind, active) + local / 32) as usize];
        (w >> (local % 32)) & 1 == 1
    }
}

/// The arrays of a [`PatchMesh`] as raw device addresses and lengths, the
/// one struct a kernel receives (by value, in parameter space: no global
/// read before the patch header) to see the patched mesh.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct RawPatchMesh {
    /// Address of `patches`.
    pub patches: u64,
    /// Address of `fe`.
    pub fe: u64,
    /// Address of `ev`.
    pub ev: u64,
    /// Address of `ribbon`.
    pub ribbon: u64,
    /// Address of `stash`.
    pub stash: u64,
    /// Address of `masks`.
    pub masks: u64,
    /// Lengths of the six arrays, in entries, in the order above.
    pub lens: [u32; 6],
}

impl RawPatchMesh {
    /// The view over the arrays.
    ///
    /// # Safety
    /// Every address must be valid for reads of its length in entries (or
    /// the length zero) for the lifetime `'a`, and not written meanwhile.
    #[inline(always)]
    pub unsafe fn view<'a>(&self) -> PatchMesh<'a> {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            PatchMesh {
                patches: slice_at(self.patches, self.lens[0]),
                fe: slice_at(self.fe, self.lens[1]),
                ev: slice_at(self.ev, self.lens[2]),
                ribbon: slice_at(self.ribbon, self.lens[3]),
                stash: slice_at(self.stash, self.lens[4]),
                masks: slice_at(self.masks, self.lens[5]),
            }
        }
    }
}
