//! Bilateral mesh denoising (Fleishman, Drori and Cohen-Or 2003) on a
//! backend, the way RXMesh runs it (section 8.3): each iteration filters
//! every vertex along its normal over the neighbourhood the ball of radius
//! twice its shortest edge bounds, gathered by the higher-order ring query
//! (`cavity_device::dynamic::ring`, RXMesh section 6.2), which reads the
//! neighbouring patches a ring reaches.
//!
//! An application crate on cavity's public model: the computations are in
//! `cavity-denoise-kernels` (the normals and `σc` per vertex, the filter
//! over the ring, the move), their PTX this crate's own module ([`PTX`]); an iteration
//! is three launches inside `Backend::run_rounds` ([`iterate`]).
//! [`denoise`] takes a [`TriMesh`] at any scale (it works in the unit box,
//! `cavity::normalize`); [`serial`] is the plain serial filter over the
//! reference mesh, the oracle of the tests and the single-thread baseline
//! of the benchmark ([`bench`](mod@bench)).

pub mod bench;
pub mod serial;

pub use cavity_denoise_kernels::{DenoiseFilter, DenoiseMove, DenoiseNormals, MIN_SIGMA_S};

use std::time::Instant;

use cavity::attributes::{Attr, AttributeLayout, AttributeSet};
use cavity::backend::AnyRounds;
use cavity::backend::{Backend, PlaceError, TopologyOn};
use cavity::computation::ComputationError;
use cavity::dynamic::CapacityFactors;
use cavity::normalize::Normalization;
use cavity::rings::ForEachRing;
use cavity::rounds::{ForEach, Rounds, RunError};
use cavity::settings::{NamesSettings, OutOfRange, Setting};
use cavity::topology::Topology;
use cavity::{MeshError, TriMesh};

cavity::kernel_module!("cavity_denoise_kernels.ptx");

/// The denoising's settings, as its errors name them
/// ([`DenoiseError::Settings`]).
pub mod setting {
    use cavity::settings::Setting;

    /// Iterations ([`crate::DenoiseSettings::iterations`]).
    pub const ITERATIONS: Setting = Setting::new("iterations", "the number of iterations");
    /// The most hops of a neighbourhood
    /// ([`crate::DenoiseSettings::max_hops`]).
    pub const MAX_HOPS: Setting = Setting::new("max_hops", "the hops of a neighbourhood");
}

/// Errors of the denoising.
#[derive(Debug, thiserror::Error)]
pub enum DenoiseError {
    /// A setting out of range: change the setting it names.
    #[error(transparent)]
    Settings(#[from] OutOfRange),
    /// The mesh has a non-finite coordinate or a bad face (the message
    /// names it).
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// Laying the mesh out, the run (a neighbourhood of more than
    /// `cavity::rings::RingRoom::MAX` vertices: lower the hops), the GPU or
    /// an attribute failed.
    #[error(transparent)]
    Computation(#[from] ComputationError),
}

cavity::computation_error_from!(DenoiseError::Computation);

impl NamesSettings for DenoiseError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            DenoiseError::Computation(e) => e.settings(),
            DenoiseError::Settings(e) => e.settings(),
            DenoiseError::Mesh(_) => Vec::new(),
        }
    }
}

cavity::names_settings!(DenoiseError);

/// What one denoising does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DenoiseSettings {
    /// Filter iterations (at least 1).
    pub iterations: u32,
    /// The most hops of a neighbourhood (at least 1; `u32::MAX`, the
    /// default: until no vertex of a hop is inside the ball, as RXMesh).
    pub max_hops: u32,
    /// Faces per patch at most.
    pub patch_size: u32,
}

impl Default for DenoiseSettings {
    /// Five iterations (RXMesh's default), neighbourhoods as far as the
    /// ball reaches, patches of 512 faces.
    fn default() -> Self {
        DenoiseSettings {
            iterations: 5,
            max_hops: u32::MAX,
            patch_size: 512,
        }
    }
}

impl DenoiseSettings {
    /// Checks every field's range.
    ///
    /// # Errors
    /// [`DenoiseError::Settings`] naming the field out of range.
    pub fn check(&self) -> Result<(), DenoiseError> {
        let bad = |setting, message| Err(OutOfRange::new(setting, message).into());
        if self.iterations == 0 {
            return bad(setting::ITERATIONS, "must be at least 1");
        }
        if self.max_hops == 0 {
            return bad(setting::MAX_HOPS, "must be at least 1");
        }
        Ok(())
    }
}

/// What a denoising did.
#[derive(Clone, Debug, PartialEq)]
pub struct DenoiseReport {
    /// Iterations run.
    pub iterations: u32,
    /// The largest neighbourhood of the last iteration (vertices, the
    /// vertex excluded).
    pub largest_neighbourhood: u32,
    /// Seconds of the iterations on the host's clock (the launches and
    /// their end; the mesh's upload and copy back excluded).
    pub filter_seconds: f64,
    /// Device memory of the dynamic mesh with the denoising's attributes,
    /// bytes per face (the rings' scratch excluded).
    pub bytes_per_face: f64,
    /// The device that ran it.
    pub device: String,
}

/// The attributes the denoising needs on a dynamic mesh (all vertex
/// attributes).
#[derive(Clone, Copy, Debug, AttributeSet)]
#[attributes(prefix = "denoise", kind = "vertex")]
pub struct DenoiseAttributes {
    /// Unit normals.
    pub normal: Attr<f32, 3>,
    /// Shortest edges, `σc`.
    pub sigma_c: Attr<f32, 1>,
    /// Filtered positions.
    pub filtered: Attr<f32, 3>,
    /// Neighbourhood sizes (the vertex excluded).
    pub size: Attr<u32, 1>,
}

/// One iteration on the mesh `r` holds, whose layout declared `a`
/// ([`AttributeSet::declare`]): normals and `σc`, the filter over each vertex's ring of
/// at most `max_hops` hops, the move. On the GPU it returns once the move
/// is launched (the filter waits for its rings' overflow word).
///
/// # Errors
/// A failed computation ([`RunError`]; a neighbourhood too large for the
/// rings' scratch).
pub fn iterate(
    r: &mut AnyRounds<'_>,
    a: &DenoiseAttributes,
    max_hops: u32,
) -> Result<(), RunError> {
    r.for_each(&DenoiseNormals {
        normal: a.normal,
        sigma_c: a.sigma_c,
    })?;
    r.for_each_ring(&DenoiseFilter {
        normal: a.normal,
        sigma_c: a.sigma_c,
        out: a.filtered,
        size: a.size,
        max_hops,
    })?;
    r.for_each(&DenoiseMove { to: a.filtered })
}

/// `mesh` after [`DenoiseSettings::iterations`] iterations of bilateral
/// denoising, with the report. The filter runs in the unit box
/// (`cavity::normalize`), so its result does not depend on the mesh's
/// scale. Faces and vertex order are the input's.
///
/// # Errors
/// Settings out of range; a mesh with a non-finite coordinate or a bad
/// face; a patch size out of range or a patch too large; a neighbourhood
/// too large; a failed GPU run.
pub fn denoise(
    mesh: &TriMesh,
    settings: &DenoiseSettings,
    backend: &Backend,
) -> Result<(TriMesh, DenoiseReport), DenoiseError> {
    settings.check()?;
    mesh.validate()?;
    denoise_checked(mesh, &backend.topology_on(mesh)?, settings, backend)
}

/// [`denoise`] with the topology of `mesh` given (`Topology::new(mesh)`),
/// for a caller that has it.
///
/// # Errors
/// As [`denoise`].
pub fn denoise_with(
    mesh: &TriMesh,
    topology: &Topology,
    settings: &DenoiseSettings,
    backend: &Backend,
) -> Result<(TriMesh, DenoiseReport), DenoiseError> {
    denoise_on(mesh, &TopologyOn::of(backend, topology)?, settings, backend)
}

/// [`denoise_with`] from the topology of `mesh` made for `backend`
/// (`Backend::topology_on`, `TopologyOn::of`): one that keeps its patches
/// (`TopologyOn::keeping_patches`) reuses those of an earlier call at the
/// same patch size.
///
/// # Errors
/// As [`denoise_with`].
pub fn denoise_on(
    mesh: &TriMesh,
    topology: &TopologyOn<'_>,
    settings: &DenoiseSettings,
    backend: &Backend,
) -> Result<(TriMesh, DenoiseReport), DenoiseError> {
    settings.check()?;
    mesh.validate()?;
    denoise_checked(mesh, topology, settings, backend)
}

/// [`denoise_on`] of a mesh validated with its settings checked.
fn denoise_checked(
    mesh: &TriMesh,
    topology: &TopologyOn<'_>,
    settings: &DenoiseSettings,
    backend: &Backend,
) -> Result<(TriMesh, DenoiseReport), DenoiseError> {
    crate::add_kernels(backend)?;
    let normalization = Normalization::of(mesh);
    let mut layout = AttributeLayout::new();
    let a = DenoiseAttributes::declare(&mut layout)?;
    // On the GPU patched and laid out on the device, where the layout
    // stays; the host normalizes meanwhile.
    let sizes = (CapacityFactors::STATIC, &layout);
    let (placed, normalized) = backend
        .place_normalized(mesh, &normalization, topology, settings.patch_size, sizes)
        .map_err(PlaceError::into_either::<DenoiseError>)?;
    let bytes_per_face = placed.bytes_per_face();
    // Only the positions are read back.
    let driver = |r: &mut AnyRounds<'_>| -> Result<_, DenoiseError> {
        let start = Instant::now();
        for _ in 0..settings.iterations {
            iterate(r, &a, settings.max_hops)?;
        }
        r.take_count()?;
        let seconds = start.elapsed().as_secs_f64();
        let largest = r.max(&a.size)? as u32;
        Ok((seconds, largest, r.vertex_positions()?))
    };
    let ran = backend.run_placed_without_mesh(placed, driver)?;
    let (filter_seconds, largest, (positions, sources)) = ran.value;
    let out = normalization.moved(mesh, &normalized, positions, &sources);
    let report = DenoiseReport {
        iterations: settings.iterations,
        largest_neighbourhood: largest,
        filter_seconds,
        bytes_per_face,
        device: ran.device,
    };
    Ok((out, report))
}
