//! The `smooth-split` example's host side: runs the example kernel crate
//! (`smooth-split-kernels`) on a dynamic mesh through a [`Backend`], on the
//! GPU or the CPU backend.
//!
//! [`run`] first splits every interior vertex of valence above a limit
//! (the user's cavity, [`SplitHighValence`]), then smooths the result with
//! a few Laplacian steps (the user's per-vertex computation, [`Smooth`]),
//! ping-ponging between two vertex attributes; the mesh's own positions
//! stay as the splits left them, and the output takes the smoothed ones.

use cavity::TriMesh;
use cavity::attributes::AttributeLayout;
use cavity::backend::Backend;
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::rounds::{ForEach, RunError, sweeps};
use cavity_device::dynamic::layout::POSITION;
use smooth_split_kernels::{Smooth, SplitHighValence};

/// The kernel crate's PTX, built by `build.rs` (empty without the NVPTX
/// toolchain; the CPU backend needs none).
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/smooth_split_kernels.ptx"));

/// What [`run`] does.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Interior vertices with more edges than this are split (at least 5:
    /// lower limits count as 5, see `SplitHighValence`).
    pub max_valence: u32,
    /// Smoothing steps.
    pub steps: u32,
    /// Smoothing step size, 0 to 1.
    pub lambda: f32,
    /// Faces per patch.
    pub patch_size: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_valence: 8,
            steps: 10,
            lambda: 0.5,
            patch_size: 512,
        }
    }
}

/// What [`run`] produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The split mesh with smoothed positions.
    pub mesh: TriMesh,
    /// The split mesh before smoothing.
    pub split: TriMesh,
    /// Vertices split.
    pub splits: u64,
}

/// Splits `input`'s high-valence vertices and smooths the result on
/// `backend` (see the crate overview).
///
/// # Errors
/// The mesh cannot be patched or laid out, the kernels cannot be loaded
/// (the PTX was built without the NVPTX toolchain, on the GPU), or a
/// round fails (out of capacity: raise the patch size).
pub fn run(
    backend: &Backend,
    input: &TriMesh,
    settings: &Settings,
) -> Result<Outcome, Box<dyn std::error::Error>> {
    if matches!(backend, Backend::Cuda(_)) && PTX.is_empty() {
        return Err(
            "the example's kernels were built without the NVPTX toolchain: use --device cpu".into(),
        );
    }
    backend.add_kernels(PTX)?;
    let mut layout = AttributeLayout::new();
    let ping = layout.vertex::<f32, 3>("ping")?;
    let pong = layout.vertex::<f32, 3>("pong")?;
    let mut mesh = DynamicMesh::with_attributes(
        input,
        settings.patch_size,
        CapacityFactors::default(),
        &layout,
    )?;
    let split = SplitHighValence {
        max_valence: settings.max_valence.max(5),
    };
    let (splits, last) = backend
        .run_rounds(
            &mut mesh,
            |r| -> Result<_, RunError> {
                let report = sweeps(r, &split, false, None)?;
                let (mut from, mut to) = (POSITION, ping);
                for _ in 0..settings.steps {
                    r.for_each(&Smooth {
                        from,
                        to,
                        lambda: settings.lambda,
                    })?;
                    from = to;
                    to = if to == ping { pong } else { ping };
                }
                Ok((report.flips, from))
            },
            |e| e,
        )?
        .value;
    let split_mesh = mesh.to_mesh();
    let mut smoothed = split_mesh.clone();
    if settings.steps > 0 {
        smoothed.positions = mesh.attribute(&last)?;
    }
    Ok(Outcome {
        mesh: smoothed,
        split: split_mesh,
        splits,
    })
}
