//! The sequential collapse (the paper's "CPU-sequential" baseline,
//! section 4): each iteration pushes every admissible edge into a priority
//! queue by cost, then pops them in order and collapses each that is
//! still admissible in the mesh as the earlier collapses left it (the same
//! predicates as the parallel version, `kernels::collapse::check`),
//! updating the stars as it goes; then the mesh is compacted and the
//! boundary classes recomputed. Classes only rise from one iteration to
//! the next (a corner stays a corner). It is the oracle of the parallel
//! collapse's invariants and its speed baseline.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use cavity_tet_collapse_kernels::collapse::check;
use cavity_tet_collapse_kernels::criterion::Criterion;
use cavity_tet_collapse_kernels::star::{Star, has};

use crate::boundary::{Classes, classify_vertices};
use crate::{Iteration, Settings, TetMesh};

/// The mesh as the sequential collapse holds it during an iteration.
struct Working {
    positions: Vec<[f32; 3]>,
    values: Vec<f32>,
    tets: Vec<[u32; 4]>,
    alive_tet: Vec<bool>,
    stars: Vec<Vec<u32>>,
    on_boundary: Vec<bool>,
    alive: Vec<bool>,
    cells: usize,
}

impl Star for Working {
    fn star_len(&self, v: u32) -> u32 {
        self.stars[v as usize].len() as u32
    }

    fn star_tet(&self, v: u32, i: u32) -> u32 {
        self.stars[v as usize][i as usize]
    }

    fn tet(&self, t: u32) -> [u32; 4] {
        self.tets[t as usize]
    }

    fn position(&self, v: u32) -> [f64; 3] {
        self.positions[v as usize].map(f64::from)
    }

    fn on_boundary(&self, v: u32) -> bool {
        self.on_boundary[v as usize]
    }

    fn value(&self, v: u32) -> f64 {
        self.values.get(v as usize).map_or(0.0, |&x| f64::from(x))
    }
}

impl Working {
    fn new(mesh: &TetMesh, values: &[f32], on_boundary: Vec<bool>) -> Working {
        let mut stars = vec![Vec::new(); mesh.positions.len()];
        for (t, tet) in mesh.tets.iter().enumerate() {
            for &v in tet {
                stars[v as usize].push(t as u32);
            }
        }
        Working {
            positions: mesh.positions.clone(),
            values: values.to_vec(),
            tets: mesh.tets.clone(),
            alive_tet: vec![true; mesh.tets.len()],
            stars,
            on_boundary,
            alive: vec![true; mesh.positions.len()],
            cells: mesh.tets.len(),
        }
    }

    /// Whether edge `(a, b)` is still in the mesh.
    fn has_live_edge(&self, a: u32, b: u32) -> bool {
        self.alive[a as usize]
            && self.alive[b as usize]
            && self.stars[a as usize]
                .iter()
                .any(|&t| has(self.tets[t as usize], b))
    }

    /// Collapses `remove` into `keep` at `position`, with the field's
    /// `value` there.
    fn collapse(&mut self, keep: u32, remove: u32, position: [f32; 3], value: f64) {
        let (k, r) = (keep as usize, remove as usize);
        for t in std::mem::take(&mut self.stars[r]) {
            let tet = &mut self.tets[t as usize];
            if has(*tet, keep) {
                self.alive_tet[t as usize] = false;
                self.cells -= 1;
                for v in *tet {
                    if v != remove {
                        self.stars[v as usize].retain(|&u| u != t);
                    }
                }
            } else {
                for v in tet.iter_mut() {
                    if *v == remove {
                        *v = keep;
                    }
                }
                self.stars[k].push(t);
            }
        }
        self.positions[k] = position;
        if let Some(x) = self.values.get_mut(k) {
            *x = value as f32;
        }
        self.alive[r] = false;
        self.on_boundary[k] |= self.on_boundary[r];
    }

    /// The mesh left, compacted, its field, and each old vertex's new
    /// index (`u32::MAX` for a removed one).
    fn compact(self) -> (TetMesh, Vec<f32>, Vec<u32>) {
        let mut index = vec![u32::MAX; self.positions.len()];
        let mut positions = Vec::new();
        let mut values = Vec::new();
        for (v, &alive) in self.alive.iter().enumerate() {
            if alive {
                index[v] = positions.len() as u32;
                positions.push(self.positions[v]);
                if let Some(&x) = self.values.get(v) {
                    values.push(x);
                }
            }
        }
        let tets = self
            .tets
            .iter()
            .zip(&self.alive_tet)
            .filter(|&(_, &alive)| alive)
            .map(|(t, _)| t.map(|v| index[v as usize]))
            .collect();
        (TetMesh { positions, tets }, values, index)
    }
}

/// A queued candidate: its cost and edge.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Candidate {
    cost: f64,
    edge: [u32; 2],
}

impl Eq for Candidate {}

impl Ord for Candidate {
    /// Reversed, so that the max-heap pops the lowest cost first (ties: the
    /// lower edge).
    fn cmp(&self, other: &Candidate) -> Ordering {
        other
            .cost
            .total_cmp(&self.cost)
            .then_with(|| other.edge.cmp(&self.edge))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Candidate) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// `mesh` (with its per-vertex field `values`, empty for none)
/// collapsed sequentially with `criterion` and `settings`, the field at
/// the vertices left, and each iteration's collapses. Unreferenced input
/// vertices are kept.
pub fn collapse_sequential<C: Criterion>(
    mesh: &TetMesh,
    values: &[f32],
    criterion: &C,
    settings: &Settings,
) -> (TetMesh, Vec<f32>, Vec<Iteration>) {
    collapse_sequential_observed(mesh, values, criterion, settings, |_| {})
}

/// [`collapse_sequential`], calling `observe` with the mesh after every
/// iteration (the tests' per-iteration checks).
pub fn collapse_sequential_observed<C: Criterion>(
    mesh: &TetMesh,
    values: &[f32],
    criterion: &C,
    settings: &Settings,
    mut observe: impl FnMut(&TetMesh),
) -> (TetMesh, Vec<f32>, Vec<Iteration>) {
    let mut mesh = mesh.clone();
    let mut values = values.to_vec();
    let mut previous: Option<Vec<u32>> = None;
    let mut iterations = Vec::new();
    let target = settings.target_cells.unwrap_or(0);
    while (iterations.len() as u32) < settings.max_iterations && mesh.tets.len() > target {
        let surface = crate::checks::boundary_surface(&mesh);
        let mut classes = classify_vertices(
            &mesh.positions,
            &surface.triangles,
            mesh.positions.len(),
            settings.epsilon_f,
            settings.epsilon_r,
        );
        if let Some(previous) = &previous {
            for (c, &p) in classes.class.iter_mut().zip(previous) {
                *c = (*c).max(p);
            }
        }
        let mut w = Working::new(&mesh, &values, classes.on_boundary.clone());
        let admissible = |w: &Working, classes: &Classes, a: u32, b: u32| {
            let sharp = classes.sharp.contains(&(a.min(b), a.max(b)));
            let (ca, cb) = (classes.class[a as usize], classes.class[b as usize]);
            check(w, criterion, a, b, ca, cb, sharp, settings.trial())
        };
        let mut queue: BinaryHeap<Candidate> = mesh
            .edges()
            .into_iter()
            .filter_map(|[a, b]| {
                let cost = criterion.cost(&w, a, b)?;
                admissible(&w, &classes, a, b)?;
                Some(Candidate { cost, edge: [a, b] })
            })
            .collect();
        let mut collapses = 0;
        while let Some(Candidate { edge: [a, b], .. }) = queue.pop() {
            if w.cells <= target {
                break;
            }
            if !w.has_live_edge(a, b) || criterion.cost(&w, a, b).is_none() {
                continue;
            }
            if let Some(c) = admissible(&w, &classes, a, b) {
                w.collapse(c.keep, c.remove, c.position, c.value);
                let kept = classes.class[c.remove as usize].max(classes.class[c.keep as usize]);
                classes.class[c.keep as usize] = kept;
                collapses += 1;
            }
        }
        let (next, next_values, index) = w.compact();
        let mut carried = vec![0u32; next.positions.len()];
        for (old, &new) in index.iter().enumerate() {
            if new != u32::MAX {
                carried[new as usize] = classes.class[old];
            }
        }
        previous = Some(carried);
        mesh = next;
        values = next_values;
        observe(&mesh);
        iterations.push(Iteration {
            collapses,
            cells: mesh.tets.len(),
        });
        if collapses == 0 || collapses <= settings.epsilon_c {
            break;
        }
    }
    (mesh, values, iterations)
}
