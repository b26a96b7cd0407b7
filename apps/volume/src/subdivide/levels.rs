//! Levels of subdivision as a command runs them: the memory they need,
//! estimated before anything is allocated ([`plan`]), and each level on
//! the backend followed by the validity pass on the host
//! ([`subdivide_valid`]).

use std::time::Instant;

use cavity::backend::Backend;
use rayon::prelude::*;

use super::Counts;
use crate::VolumeError;
use crate::mesh::{CellVertices, VolumeMesh};
use crate::quality::{Quality, Relaxation, Validity, keep_valid, quality};
use crate::resident::ResidentMesh;
use crate::signed::{index, is_negative};

/// The sizes of a mesh that the counts of the next level follow from
/// (eqs. 1-4 with the relations' entries written through them).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sizes {
    counts: [f64; 4],
    /// Entries of ∂2 (the faces' sizes summed).
    nnz2: f64,
    /// Entries of ∂3.
    nnz3: f64,
    /// Each cell's faces' sizes, summed over the cells: twice the entries
    /// of cell-edges (every edge of a closed cell lies in two of its
    /// faces).
    corners: f64,
}

impl Sizes {
    fn of(mesh: &VolumeMesh) -> Sizes {
        let d2 = mesh.d2();
        let corners: usize = mesh
            .d3()
            .entries()
            .par_iter()
            .map(|&f| d2.row(index(f)).len())
            .sum();
        Sizes {
            counts: mesh.counts().map(|x| x as f64),
            nnz2: d2.entries().len() as f64,
            nnz3: mesh.d3().entries().len() as f64,
            corners: corners as f64,
        }
    }

    /// Entries of cell-edges and of cell-vertices (Euler's `v - e + f = 2`
    /// for each closed cell).
    fn cell_relations(&self) -> [f64; 2] {
        let edges = self.corners / 2.0;
        [edges, edges - self.nnz3 + 2.0 * self.counts[3]]
    }

    /// The sizes after one level: a new cell per vertex `v` of each cell,
    /// with `2k` quadrilaterals for the `k` faces of the cell at `v`.
    fn next(&self) -> Sizes {
        let [v, e, f, c] = self.counts;
        let [cell_edges, cell_vertices] = self.cell_relations();
        let faces = self.nnz2 + cell_edges;
        Sizes {
            counts: [
                v + e + f + c,
                2.0 * e + self.nnz2 + self.nnz3,
                faces,
                cell_vertices,
            ],
            nnz2: 4.0 * faces,
            nnz3: 2.0 * self.corners,
            corners: 8.0 * self.corners,
        }
    }

    /// Bytes of the operators and positions on a backend: positions,
    /// pairs, ∂2 and ∂3 in CSR.
    fn operator_bytes(&self) -> f64 {
        let [v, e, f, c] = self.counts;
        4.0 * (3.0 * v + 2.0 * e + (f + 1.0) + self.nnz2 + (c + 1.0) + self.nnz3)
    }

    /// Bytes of the nine relations a level reads (offsets and entries).
    fn relation_bytes(&self) -> f64 {
        let [v, e, f, c] = self.counts;
        let [cell_edges, cell_vertices] = self.cell_relations();
        let rows = 2.0 * (f + 1.0) + 3.0 * (c + 1.0) + 3.0 * (v + 1.0) + 2.0 * (e + 1.0);
        let entries = 3.0 * self.nnz2 + 2.0 * e + self.nnz3 + 2.0 * (cell_edges + cell_vertices);
        4.0 * (rows + entries)
    }
}

/// What `levels` levels of subdivision of a mesh will need, estimated
/// from its sizes before anything is allocated.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The counts after each level (vertices, edges, faces, cells).
    pub counts: Vec<Counts>,
    /// The most host memory at once, bytes: the meshes before and after
    /// the last level as operators, its cell-vertex lists, the three
    /// position arrays of the validity pass and the written text; with the
    /// CPU backend its buffers too ([`Plan::device_bytes`]).
    pub host_bytes: u64,
    /// The most memory on the backend at once, bytes: the last level's
    /// mesh, its nine relations and the new mesh.
    pub device_bytes: u64,
}

/// The [`Plan`] of `levels` levels of subdivision of `mesh` on `backend`.
///
/// # Errors
/// [`VolumeError::Oversized`] (naming the levels to lower) when a level
/// would have more elements of a kind than the `2³¹ - 1` a ternary entry
/// indexes, or arrays past 32-bit indices.
pub fn plan(mesh: &VolumeMesh, levels: u32, backend: &Backend) -> Result<Plan, VolumeError> {
    let mut sizes = Sizes::of(mesh);
    let mut counts = Vec::new();
    let (mut host, mut device) = (0f64, 0f64);
    for level in 1..=levels {
        let next = sizes.next();
        let names = ["vertices", "edges", "faces", "cells"];
        let words = [3.0, 2.0, 4.0, 8.0];
        for ((what, n), w) in names.iter().zip(next.counts).zip(words) {
            if n > i32::MAX as f64 || n * w > u32::MAX as f64 {
                return Err(VolumeError::Oversized {
                    levels,
                    why: format!(
                        "level {level} would have about {n:.3e} {what}, more than the 2^31 - 1 a ternary entry indexes"
                    ),
                });
            }
        }
        let on_device = sizes.operator_bytes() + sizes.relation_bytes() + next.operator_bytes();
        // Two meshes as operators, the cells as lists (an enum each), three
        // position arrays and the output's text (about 16 bytes a number).
        let [v, _, _, c] = next.counts;
        let lists = c * std::mem::size_of::<CellVertices>() as f64;
        let text = 16.0 * (3.0 * v + 8.0 * c);
        let mut on_host = sizes.operator_bytes() + next.operator_bytes() + lists + 36.0 * v + text;
        if matches!(backend, Backend::Cpu(_)) {
            on_host += on_device;
        }
        host = host.max(on_host);
        device = device.max(on_device);
        counts.push(next.counts.map(|x| x as usize));
        sizes = next;
    }
    Ok(Plan {
        counts,
        host_bytes: host as u64,
        device_bytes: device as u64,
    })
}

impl Plan {
    /// Checks the plan against the memory there is: `host` bytes
    /// available on the host and, on a GPU, `device` bytes free there
    /// (`None` where unknown: not checked).
    ///
    /// # Errors
    /// [`VolumeError::Oversized`] with the estimate, naming the levels to
    /// lower.
    pub fn check(
        &self,
        levels: u32,
        host: Option<u64>,
        device: Option<u64>,
    ) -> Result<(), VolumeError> {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        for (needed, available, place) in [
            (self.host_bytes, host, "host memory"),
            (self.device_bytes, device, "device memory"),
        ] {
            if let Some(a) = available
                && needed > a
            {
                let [v, e, f, c] = self.counts.last().copied().unwrap_or_default();
                return Err(VolumeError::Oversized {
                    levels,
                    why: format!(
                        "{v} vertices, {e} edges, {f} faces and {c} cells need about {:.1} GiB of {place}, {:.1} GiB available",
                        gib(needed),
                        gib(a)
                    ),
                });
            }
        }
        Ok(())
    }
}

/// The positions of the linear split of `mesh` as one level numbers the
/// new vertices: each vertex where it is, then each edge's midpoint, each
/// face's centre and each cell's centre (`cell_centres`: the level's cell
/// points, which are the centres).
pub fn linear_split(mesh: &VolumeMesh, cell_centres: &[[f32; 3]]) -> Vec<[f32; 3]> {
    let p = mesh.positions();
    let d2 = mesh.d2();
    let mut out = p.to_vec();
    out.par_extend(mesh.edges().par_iter().map(|&[a, b]| {
        let (a, b) = (p[a as usize], p[b as usize]);
        std::array::from_fn(|k| 0.5 * (a[k] + b[k]))
    }));
    out.par_extend((0..d2.rows()).into_par_iter().map(|f| {
        let row = d2.row(f);
        let mut sum = [0.0f32; 3];
        for &x in row {
            let [a, b] = mesh.edges()[index(x) as usize];
            let tail = if is_negative(x) { b } else { a };
            for (s, q) in sum.iter_mut().zip(p[tail as usize]) {
                *s += q;
            }
        }
        sum.map(|s| s / row.len().max(1) as f32)
    }));
    out.extend_from_slice(cell_centres);
    out
}

/// One level's outcome.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevelReport {
    /// The level, from 1.
    pub level: u32,
    /// Cells the plain rules invert (scaled Jacobian not positive).
    pub plain_inverted: usize,
    /// The quality of the level's cells at the positions kept.
    pub quality: Quality,
    /// What the validity pass did (default with [`Validity::Plain`]).
    pub relaxation: Relaxation,
    /// Seconds of the level on the backend, copies included.
    pub subdivision_seconds: f64,
    /// Seconds of the validity pass (the check, the relaxation and the
    /// quality) on the host.
    pub validity_seconds: f64,
}

/// A subdivided mesh with its cell-vertex lists and each level's report.
#[derive(Clone, Debug)]
pub struct Subdivided {
    /// The mesh.
    pub mesh: VolumeMesh,
    /// Its cells as cell-vertex lists ([`VolumeMesh::cells`]).
    pub cells: Vec<CellVertices>,
    /// One per level.
    pub levels: Vec<LevelReport>,
}

/// `levels` levels of Catmull-Clark subdivision of `mesh`, each on
/// `backend` ([`ResidentMesh::subdivide`]) and then checked on the host:
/// with [`Validity::Keep`] the vertices of every inverted cell relaxed
/// towards the [`linear_split`] (see the [module](super) for what that
/// guarantees), with [`Validity::Plain`] only counted. `progress` hears
/// of each level as it starts.
///
/// # Errors
/// As [`super::subdivide`].
pub fn subdivide_valid(
    backend: &Backend,
    mesh: &VolumeMesh,
    levels: u32,
    validity: Validity,
    progress: impl Fn(u32),
) -> Result<Subdivided, VolumeError> {
    let mut reports = Vec::new();
    let mut current: Option<(VolumeMesh, Vec<CellVertices>)> = None;
    for level in 1..=levels {
        progress(level);
        let t = Instant::now();
        let old = current.as_ref().map_or(mesh, |(m, _)| m);
        let resident = ResidentMesh::upload(backend, old)?.subdivide()?;
        // The cell lists formed on the backend (hexahedra only, after a
        // level).
        let lists = resident.cell_lists()?;
        let next = resident.download()?;
        let cells = lists.unwrap_or_else(|| next.cells());
        let subdivision_seconds = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let [v, e, f, _] = old.counts();
        let (positions, relaxation) = match validity {
            Validity::Keep => {
                let linear = linear_split(old, &next.positions()[v + e + f..]);
                let (positions, r) = keep_valid(&cells, &linear, next.positions(), 0.0);
                (Some(positions), r)
            }
            Validity::Plain => (None, Relaxation::default()),
        };
        let next = match positions {
            Some(p) => next.with_positions(p)?,
            None => next,
        };
        let quality = quality(&cells, next.positions());
        reports.push(LevelReport {
            level,
            plain_inverted: match validity {
                Validity::Keep => relaxation.plain_inverted,
                Validity::Plain => quality.inverted,
            },
            quality,
            relaxation,
            subdivision_seconds,
            validity_seconds: t.elapsed().as_secs_f64(),
        });
        current = Some((next, cells));
    }
    let (mesh, cells) = match current {
        Some(c) => c,
        None => (mesh.clone(), mesh.cells()),
    };
    Ok(Subdivided {
        mesh,
        cells,
        levels: reports,
    })
}
