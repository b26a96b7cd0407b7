//! Area-weighted unit vertex normals of a mesh (RXMesh, listing 1) on a
//! backend, at any scale: the computation sees the mesh in the unit box
//! (`cavity::normalize`), where face normals neither overflow nor
//! underflow `f32`.
//!
//! An application crate on cavity's public model: the per-vertex
//! computation is in `cavity-normals-kernels`, its PTX in `cavity-app-ptx`
//! (every application's kernels, built once); [`vertex_normals`] declares
//! a vertex attribute, builds the dynamic mesh and runs the computation
//! through `Backend::run_rounds`.

pub use cavity_normals_kernels::VertexNormals;

use cavity::TriMesh;
use cavity::attributes::{AttributeError, AttributeLayout};
use cavity::backend::{Backend, BackendError};
use cavity::dynamic::{CapacityFactors, DynamicError, DynamicMesh};
use cavity::normalize::Normalization;
use cavity::rounds::{ForEach, RunError};
use cavity::settings::{NamesSettings, Setting};

/// Errors of [`vertex_normals`].
#[derive(Debug, thiserror::Error)]
pub enum NormalsError {
    /// Patching or laying the mesh out failed (the message names the
    /// setting).
    #[error(transparent)]
    Dynamic(#[from] DynamicError),
    /// The computation failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The GPU failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The attribute could not be declared or read (a bug).
    #[error(transparent)]
    Attribute(#[from] AttributeError),
}

impl NamesSettings for NormalsError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            NormalsError::Dynamic(e) => e.settings(),
            NormalsError::Run(e) => e.settings(),
            NormalsError::Backend(e) => e.settings(),
            NormalsError::Attribute(_) => Vec::new(),
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
    cavity_app_ptx::add_to(backend)?;
    let normalized = Normalization::of(mesh).apply(mesh);
    let mut layout = AttributeLayout::new();
    let out = layout.vertex::<f32, 3>("normal")?;
    let mut dynamic =
        DynamicMesh::with_attributes(&normalized, patch_size, CapacityFactors::STATIC, &layout)?;
    backend.run_rounds(&mut dynamic, |r| r.for_each(&VertexNormals { out }), |e| e)?;
    // An unchanged mesh lists its vertices in the input's order.
    Ok(dynamic.attribute(&out)?)
}
