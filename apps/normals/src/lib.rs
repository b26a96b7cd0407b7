//! Area-weighted unit vertex normals of a mesh (RXMesh, listing 1) on a
//! backend, at any scale: the computation sees the mesh in the unit box
//! (`cavity::normalize`), where face normals neither overflow nor
//! underflow `f32`.
//!
//! An application crate on cavity's public model: the per-vertex
//! computation is in `cavity-normals-kernels`, its PTX this crate's own module
//! ([`PTX`], loaded by [`add_kernels`]); [`vertex_normals`] declares
//! a vertex attribute, builds the dynamic mesh and runs the computation
//! through `Backend::run_rounds`.

pub use cavity_normals_kernels::VertexNormals;

use cavity::TriMesh;
use cavity::attributes::AttributeLayout;
use cavity::backend::{Backend, PlaceError, TopologyOn};
use cavity::computation::ComputationError;
use cavity::dynamic::CapacityFactors;
use cavity::normalize::Normalization;
use cavity::rounds::{ForEach, Rounds};
use cavity::topology::Topology;

cavity::kernel_module!("cavity_normals_kernels.ptx");

/// Errors of [`vertex_normals`]: a failed computation (layout, run, GPU,
/// attribute).
pub type NormalsError = ComputationError;

/// The unit normal of every vertex of `mesh` in input order, `[x, y, z]`:
/// the normalized sum of its faces' normals weighted by their areas;
/// `[0, 0, 0]` for a vertex without a face of nonzero area. Patches of at
/// most `patch_size` faces. The topology is built where the backend
/// builds it best (`Backend::topology_on`: on the GPU on the device, where
/// the patching reads it).
///
/// # Errors
/// A patch size out of range or a patch too large; a face's vertex past
/// the vertices (`BackendError::Index`); a failed GPU run.
pub fn vertex_normals(
    mesh: &TriMesh,
    patch_size: u32,
    backend: &Backend,
) -> Result<Vec<[f32; 3]>, NormalsError> {
    vertex_normals_on(mesh, &backend.topology_on(mesh)?, patch_size, backend)
}

/// [`vertex_normals`] with the topology of `mesh` given
/// (`Topology::new(mesh)`), for a caller that has it.
///
/// # Errors
/// As [`vertex_normals`].
pub fn vertex_normals_with(
    mesh: &TriMesh,
    topology: &Topology,
    patch_size: u32,
    backend: &Backend,
) -> Result<Vec<[f32; 3]>, NormalsError> {
    vertex_normals_on(
        mesh,
        &TopologyOn::of(backend, topology)?,
        patch_size,
        backend,
    )
}

/// [`vertex_normals`] from the topology of `mesh` made for `backend`
/// (`Backend::topology_on`, `TopologyOn::of`): one that keeps its patches
/// (`TopologyOn::keeping_patches`) reuses those of an earlier call at the
/// same patch size.
///
/// # Errors
/// As [`vertex_normals`].
pub fn vertex_normals_on(
    mesh: &TriMesh,
    topology: &TopologyOn<'_>,
    patch_size: u32,
    backend: &Backend,
) -> Result<Vec<[f32; 3]>, NormalsError> {
    crate::add_kernels(backend)?;
    let normalization = Normalization::of(mesh);
    let mut layout = AttributeLayout::new();
    let out = layout.vertex::<f32, 3>("normal")?;
    // On the GPU patched and laid out on the device, where the layout
    // stays; the host normalizes meanwhile.
    let sizes = (CapacityFactors::STATIC, &layout);
    let (placed, _) = backend
        .place_normalized(mesh, &normalization, topology, patch_size, sizes)
        .map_err(PlaceError::into_either::<NormalsError>)?;
    // An unchanged mesh lists its vertices in the input's order; only the
    // normals are read back.
    let ran = backend.run_placed_without_mesh(placed, |r| -> Result<_, NormalsError> {
        r.for_each(&VertexNormals { out })?;
        Ok(r.owned_values(&out)?.1)
    })?;
    Ok(ran.value)
}
