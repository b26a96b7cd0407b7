//! Area-weighted unit vertex normals of a mesh (RXMesh, listing 1) on a
//! backend, at any scale: the kernel sees the mesh in the unit box
//! ([`crate::normalize`]), where face normals neither overflow nor
//! underflow `f32`.

use crate::backend::{Backend, BackendError, positions_by_handle};
use crate::patcher::PatchError;
use crate::settings::{NamesSettings, Setting};
use crate::{Kind, PatchedMesh, TriMesh};

/// Errors of [`vertex_normals`].
#[derive(Debug, thiserror::Error)]
pub enum NormalsError {
    /// Patching failed (the message names the setting).
    #[error(transparent)]
    Patch(#[from] PatchError),
    /// The GPU failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl NamesSettings for NormalsError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            NormalsError::Patch(e) => e.settings(),
            NormalsError::Backend(e) => e.settings(),
        }
    }
}

/// The unit normal of every vertex of `mesh` in input order, `[x, y, z]`:
/// the normalized sum of its faces' normals weighted by their areas;
/// `[0, 0, 0]` for a vertex without a face of nonzero area. Patches of at
/// most `patch_size` faces.
///
/// # Errors
/// A patch size out of range or a patch too large; a failed GPU run.
pub fn vertex_normals(
    mesh: &TriMesh,
    patch_size: u32,
    backend: &Backend,
) -> Result<Vec<[f32; 3]>, NormalsError> {
    let patched = PatchedMesh::new(mesh, patch_size)?;
    let normalized = crate::normalize::Normalization::of(mesh).apply(mesh);
    let positions = positions_by_handle(&patched, &normalized.positions);
    let by_handle = backend.vertex_normals(&patched, &positions)?;
    let mut normals = vec![[0f32; 3]; mesh.num_vertices()];
    for (h, &v) in patched.to_input(Kind::Vertex).iter().enumerate() {
        normals[v as usize] = [by_handle[3 * h], by_handle[3 * h + 1], by_handle[3 * h + 2]];
    }
    Ok(normals)
}
