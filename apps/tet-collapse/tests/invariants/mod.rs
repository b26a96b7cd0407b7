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

/// The diagonal of `mesh`'s bounding box.
pub fn diagonal(mesh: &TetMesh) -> f64 {
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for p in &mesh.positions {
        for k in 0..3 {
            lo[k] = lo[k].min(f64::from(p[k]));
            hi[k] = hi[k].max(f64::from(p[k]));
        }
    }
    (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt()
}

/// The median length of `mesh`'s edges.
pub fn median_edge(mesh: &TetMesh) -> f64 {
    let mut l: Vec<f64> = mesh
        .edges()
        .iter()
        .map(|&[a, b]| {
            let (p, q) = (mesh.positions[a as usize], mesh.positions[b as usize]);
            (0..3)
                .map(|k| f64::from(p[k] - q[k]).powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    l.sort_by(f64::total_cmp);
    l[l.len() / 2]
}

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
