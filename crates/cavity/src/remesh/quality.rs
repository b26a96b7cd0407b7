//! Mesh quality as the dynamic paper's table 4 reports it for isotropic
//! remeshing (section 6.3): face count, shortest and longest edge as a
//! multiple of the target length L, smallest, largest and mean vertex
//! valence; plus the smallest angle and the share of edges in the
//! remeshing band [4/5 L, 4/3 L].

use glam::DVec3;
use rayon::prelude::*;

use crate::TriMesh;
use crate::topology::Topology;

/// Table-4 statistics of a triangle mesh against a target edge length.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Quality {
    /// Faces.
    pub faces: usize,
    /// Vertices referenced by a face.
    pub vertices: usize,
    /// Unique edges.
    pub edges: usize,
    /// Shortest edge over L.
    pub min_edge: f64,
    /// Longest edge over L.
    pub max_edge: f64,
    /// Mean edge length (model units).
    pub mean_edge: f64,
    /// Smallest valence (edges per vertex) over vertices with a face.
    pub min_valence: u32,
    /// Largest valence.
    pub max_valence: u32,
    /// Mean valence.
    pub mean_valence: f64,
    /// Smallest interior angle of any face, in degrees (0 for a degenerate
    /// face).
    pub min_angle: f64,
    /// Share of edges with length in [4/5 L, 4/3 L] (0 to 1).
    pub in_band: f64,
}

/// Mean edge length of `mesh` over its unique edges (0 without edges): the
/// default target length of isotropic remeshing.
pub fn mean_edge_length(mesh: &TriMesh) -> f64 {
    let topo = Topology::new(mesh);
    let sum: f64 = topo.ev.par_iter().map(|&e| length(mesh, e)).sum();
    sum / topo.ev.len().max(1) as f64
}

fn length(mesh: &TriMesh, [a, b]: [u32; 2]) -> f64 {
    point(mesh, a).distance(point(mesh, b))
}

/// Vertex `v` of `mesh` in double precision.
pub(crate) fn point(mesh: &TriMesh, v: u32) -> DVec3 {
    DVec3::from(mesh.positions[v as usize].map(f64::from))
}

/// Smallest interior angle of triangle `t` of `mesh`, in degrees.
fn smallest_angle(mesh: &TriMesh, t: [u32; 3]) -> f64 {
    let p = t.map(|v| point(mesh, v));
    (0..3)
        .map(|k| {
            let (u, v) = (p[(k + 1) % 3] - p[k], p[(k + 2) % 3] - p[k]);
            u.cross(v).length().atan2(u.dot(v)).to_degrees()
        })
        .fold(180.0, f64::min)
}

impl Quality {
    /// The statistics of `mesh` against target length `target` (model
    /// units, positive).
    pub fn of(mesh: &TriMesh, target: f64) -> Quality {
        let topo = Topology::new(mesh);
        let lengths: Vec<f64> = topo.ev.par_iter().map(|&e| length(mesh, e)).collect();
        let (lo, hi) = (0.8 * target, 4.0 / 3.0 * target);
        let in_band = lengths.iter().filter(|&&l| l >= lo && l <= hi).count();
        let mut valence = vec![0u32; mesh.num_vertices()];
        for &[a, b] in &topo.ev {
            valence[a as usize] += 1;
            valence[b as usize] += 1;
        }
        let used: Vec<u32> = (0..mesh.num_vertices())
            .filter(|&v| topo.vf_offsets[v] < topo.vf_offsets[v + 1])
            .map(|v| valence[v])
            .collect();
        let edges = lengths.len();
        Quality {
            faces: mesh.num_faces(),
            vertices: used.len(),
            edges,
            min_edge: lengths.iter().copied().fold(f64::INFINITY, f64::min) / target,
            max_edge: lengths.iter().copied().fold(0.0, f64::max) / target,
            mean_edge: lengths.iter().sum::<f64>() / edges.max(1) as f64,
            min_valence: used.iter().copied().min().unwrap_or(0),
            max_valence: used.iter().copied().max().unwrap_or(0),
            mean_valence: used.iter().map(|&v| v as f64).sum::<f64>() / used.len().max(1) as f64,
            min_angle: mesh
                .faces
                .par_iter()
                .map(|&t| smallest_angle(mesh, t))
                .reduce(|| 180.0, f64::min),
            in_band: in_band as f64 / edges.max(1) as f64,
        }
    }
}
