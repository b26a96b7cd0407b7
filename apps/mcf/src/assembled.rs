//! The flow's step on an assembled system, for the intrinsic Delaunay
//! Laplacian (Sharp and Crane 2020, sections 4.5-4.6; [`crate::intrinsic`]):
//! its edges are not the mesh's, so the patches' matrix-free product
//! cannot apply it. The host flips the intrinsic triangulation of the
//! current positions and assembles `A = M + dt K` over the free vertices
//! in compressed rows ([`StepSystem::assemble`]); the backend solves `A u
//! = -dt K x` by preconditioned conjugate gradients on arrays
//! ([`StepSystem::solve`], the kernels of `cavity_mcf_kernels::assembled`:
//! the GPU on its stream, the CPU backend the same kernels).

use cavity::backend::Backend;
use cavity::backend::BackendError;
use cavity::backend::buffer::Buffer;
use cavity_mcf_kernels::assembled::{blocks, launch_shared_bytes};
use cavity_mcf_kernels::{DirectionUpdate, ResidualUpdate, SystemProduct};

use crate::StepReport;
use crate::cg::{CgSteps, conjugate_gradient};
use crate::intrinsic::IntrinsicLaplacian;

/// One step's system `A u = b` over the free vertices, in compressed rows:
/// `A = M + dt K` (`M` the intrinsic triangulation's lumped areas, `K` its
/// cotan stiffness), `b = -dt K x`, `u` the step's displacement.
#[derive(Clone, Debug, PartialEq)]
pub struct StepSystem {
    /// The vertex of each row (the free vertices, ascending).
    pub free: Vec<u32>,
    /// Row `i`'s entries are `offsets[i]..offsets[i + 1]` (rows + 1).
    pub offsets: Vec<u32>,
    /// Each entry's column (a free neighbour's row).
    pub columns: Vec<u32>,
    /// Each entry's value negated: `dt w_ij` (non-negative where the
    /// intrinsic triangulation is Delaunay).
    pub weights: Vec<f32>,
    /// Each row's diagonal `m_i + dt Σ_j w_ij` (over every neighbour,
    /// fixed ones too).
    pub diagonal: Vec<f32>,
    /// The Jacobi preconditioner `1 / diagonal`, or 1 without
    /// preconditioning.
    pub inverse_diagonal: Vec<f32>,
    /// The right-hand side `-dt Σ_j w_ij (x_i - x_j)`, three words a row.
    pub rhs: Vec<f32>,
}

impl StepSystem {
    /// The system of the step from `positions` with the intrinsic
    /// Laplacian `laplacian` of those positions, the vertices marked in
    /// `fixed` kept in place, the time step `dt` (squared units of the
    /// positions), Jacobi-preconditioned when `precondition`. A vertex
    /// without mass is kept in place too.
    pub fn assemble(
        laplacian: &IntrinsicLaplacian,
        positions: &[[f32; 3]],
        fixed: &[bool],
        dt: f64,
        precondition: bool,
    ) -> StepSystem {
        let n = positions.len();
        let free_vertex =
            |v: usize| !fixed[v] && laplacian.mass[v] > 0.0 && laplacian.mass[v].is_finite();
        let mut row_of = vec![u32::MAX; n];
        let free: Vec<u32> = (0..n as u32).filter(|&v| free_vertex(v as usize)).collect();
        for (row, &v) in free.iter().enumerate() {
            row_of[v as usize] = row as u32;
        }
        let mut system = StepSystem {
            offsets: Vec::with_capacity(free.len() + 1),
            columns: Vec::new(),
            weights: Vec::new(),
            diagonal: Vec::with_capacity(free.len()),
            inverse_diagonal: Vec::with_capacity(free.len()),
            rhs: Vec::with_capacity(3 * free.len()),
            free: Vec::new(),
        };
        system.offsets.push(0);
        for &v in &free {
            let v = v as usize;
            let x = positions[v].map(f64::from);
            let (mut diagonal, mut kx) = (laplacian.mass[v], [0.0f64; 3]);
            let entries = laplacian.offsets[v] as usize..laplacian.offsets[v + 1] as usize;
            for k in entries {
                let (j, w) = (laplacian.neighbours[k] as usize, laplacian.weights[k]);
                diagonal += dt * w;
                for (c, kx) in kx.iter_mut().enumerate() {
                    *kx += w * (x[c] - f64::from(positions[j][c]));
                }
                if row_of[j] != u32::MAX {
                    system.columns.push(row_of[j]);
                    system.weights.push((dt * w) as f32);
                }
            }
            system.offsets.push(system.columns.len() as u32);
            system.diagonal.push(diagonal as f32);
            system.inverse_diagonal.push(if precondition {
                (1.0 / diagonal) as f32
            } else {
                1.0
            });
            system.rhs.extend(kx.map(|y| (-dt * y) as f32));
        }
        system.free = free;
        system
    }

    /// Rows of the system.
    pub fn rows(&self) -> usize {
        self.free.len()
    }

    /// The step's displacement (one per row) by preconditioned conjugate
    /// gradients (Shewchuk 1994, B3) on `backend` from `u = 0`, with the
    /// report (the stopping rules of `crate::cg`, as [`crate::solve_step`]).
    ///
    /// # Errors
    /// A missing kernel, a failed launch or copy ([`BackendError`]).
    pub fn solve(
        &self,
        backend: &Backend,
        tolerance: f32,
        max_iterations: u32,
    ) -> Result<(Vec<[f32; 3]>, StepReport), BackendError> {
        let rows = self.rows() as u32;
        let b = backend;
        let zeros = || b.zeros::<f32>(3 * rows as usize);
        let mut steps = ArraySteps {
            backend,
            rows,
            grid: blocks(rows),
            offsets: b.upload(&self.offsets)?,
            columns: b.upload(&self.columns)?,
            weights: b.upload(&self.weights)?,
            diagonal: b.upload(&self.diagonal)?,
            inverse_diagonal: b.upload(&self.inverse_diagonal)?,
            r: b.upload(&self.rhs)?,
            u: zeros()?,
            d: zeros()?,
            q: zeros()?,
            partials: b.zeros::<u32>(2 * blocks(rows) as usize)?,
        };
        let report = conjugate_gradient(&mut steps, tolerance, max_iterations)?;
        let u = b.download(steps.u, 3 * rows as usize)?;
        Ok((u.as_chunks::<3>().0.to_vec(), report))
    }
}

/// The conjugate gradient's operations on the system's arrays on a
/// backend (three words a row in the vectors), with the kernels of
/// `cavity_mcf_kernels::assembled`.
struct ArraySteps<'a> {
    backend: &'a Backend,
    rows: u32,
    grid: u32,
    offsets: Buffer<u32>,
    columns: Buffer<u32>,
    weights: Buffer<f32>,
    diagonal: Buffer<f32>,
    inverse_diagonal: Buffer<f32>,
    r: Buffer<f32>,
    u: Buffer<f32>,
    d: Buffer<f32>,
    q: Buffer<f32>,
    /// An `f64` per block, two words, low first.
    partials: Buffer<u32>,
}

impl ArraySteps<'_> {
    /// The blocks' partials summed in block order.
    fn sum(&self) -> Result<f64, BackendError> {
        Ok(self
            .backend
            .read_partials(&self.partials, self.grid)?
            .into_iter()
            .sum())
    }
}

impl CgSteps for ArraySteps<'_> {
    type Error = BackendError;

    fn start(&mut self) -> Result<f64, BackendError> {
        // d ← D⁻¹ r; a step of 0 (`u` and `r` unchanged) gives rᵀ D⁻¹ r
        // from the kernel every step's comes from.
        self.direction(0.0)?;
        self.step(0.0)
    }

    fn product(&mut self) -> Result<f64, BackendError> {
        let params = (
            &self.offsets,
            &self.columns,
            &self.weights,
            &self.diagonal,
            self.rows,
            &self.d,
            &mut self.q,
            &mut self.partials,
        );
        self.backend
            .launch::<SystemProduct>(self.grid, launch_shared_bytes(), params)?;
        self.sum()
    }

    fn step(&mut self, alpha: f64) -> Result<f64, BackendError> {
        let params = (
            alpha as f32,
            self.rows,
            &self.d,
            &self.q,
            &self.inverse_diagonal,
            &mut self.u,
            &mut self.r,
            &mut self.partials,
        );
        self.backend
            .launch::<ResidualUpdate>(self.grid, launch_shared_bytes(), params)?;
        self.sum()
    }

    fn direction(&mut self, beta: f64) -> Result<(), BackendError> {
        let params = (
            beta as f32,
            self.rows,
            &self.r,
            &self.inverse_diagonal,
            &mut self.d,
        );
        self.backend
            .launch::<DirectionUpdate>(self.grid, (0, 0), params)
    }
}
