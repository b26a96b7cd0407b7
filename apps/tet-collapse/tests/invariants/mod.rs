//! The robustness checks of section 4.1 for the collapse's tests: after
//! an iteration, every triangle in one or two tetrahedra with opposite
//! orientations when shared, no inverted or zero-volume tetrahedron, no
//! duplicated vertex (`checks::check_valid`); the boundary's components,
//! closedness, manifoldness and genus as the input's; the input's corners
//! in place; and the boundary's Hausdorff distance to the input's.
#![allow(dead_code)]

use cavity_tet_collapse::boundary::classify_vertices;
use cavity_tet_collapse::checks::{SurfaceTopology, boundary_surface, check_valid, hausdorff};
use cavity_tet_collapse::kernels::boundary::CORNER;
use cavity_tet_collapse::{Settings, TetMesh};

/// The corner vertices' positions of `mesh`.
pub fn corners(mesh: &TetMesh, settings: &Settings) -> Vec<[f32; 3]> {
    let surface = boundary_surface(mesh);
    let classes = classify_vertices(
        &mesh.positions,
        &surface.triangles,
        mesh.positions.len(),
        settings.epsilon_f,
        settings.epsilon_r,
    );
    (0..mesh.positions.len())
        .filter(|&v| classes.class[v] == CORNER)
        .map(|v| mesh.positions[v])
        .collect()
}

/// The median edge length and the box's diagonal the tests scale by: the
/// library's, which pick parameters here and check nothing.
pub use cavity_tet_collapse::simplify::{diagonal, median_edge_length as median_edge};

/// The boundary components' (closed, manifold, genus), sorted.
fn shape(t: &SurfaceTopology) -> Vec<(bool, bool, Option<u32>)> {
    let mut s: Vec<_> = t
        .components
        .iter()
        .map(|c| (c.closed, c.manifold, c.genus))
        .collect();
    s.sort();
    s
}

/// What an iteration must keep of its input.
pub struct Invariants {
    input: TetMesh,
    corners: Vec<[f32; 3]>,
    /// The largest Hausdorff distance seen, over the box's diagonal.
    pub hausdorff: f64,
    /// The first violation seen.
    pub failure: Option<String>,
    /// Iterations checked.
    pub iterations: usize,
}

impl Invariants {
    /// The invariants of `input` under `settings`.
    pub fn of(input: &TetMesh, settings: &Settings) -> Invariants {
        Invariants {
            input: input.clone(),
            corners: corners(input, settings),
            hausdorff: 0.0,
            failure: None,
            iterations: 0,
        }
    }

    /// Checks the mesh after an iteration (the first violation is kept).
    pub fn check(&mut self, output: &TetMesh) {
        self.iterations += 1;
        if self.failure.is_none()
            && let Err(e) = self.violation(output)
        {
            self.failure = Some(format!("iteration {}: {e}", self.iterations));
        }
    }

    fn violation(&mut self, output: &TetMesh) -> Result<(), String> {
        check_valid(output, 0.0).map_err(|e| e.to_string())?;
        let (before, after) = (boundary_surface(&self.input), boundary_surface(output));
        let (tb, ta) = (before.topology(), after.topology());
        if shape(&tb) != shape(&ta) {
            return Err(format!("boundary topology {tb:?} became {ta:?}"));
        }
        for c in &self.corners {
            if !output.positions.contains(c) {
                return Err(format!("corner at {c:?} moved"));
            }
        }
        let h = hausdorff(&before, &self.input.positions, &after, &output.positions);
        self.hausdorff = self.hausdorff.max(h / diagonal(&self.input));
        Ok(())
    }

    /// `Ok` with the largest Hausdorff distance, or the first violation.
    pub fn result(self) -> Result<f64, String> {
        match self.failure {
            Some(e) => Err(e),
            None => Ok(self.hausdorff),
        }
    }
}
