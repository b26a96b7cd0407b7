//! GPolylla on a backend (the paper's section 6, Algorithm 7): the
//! half-edge arrays copied to the GPU (or kept on the host for the CPU
//! backend), the kernels of `cavity-polylla-kernels` one after another,
//! the polygons' seeds compacted by a scan, the result copied back. Each
//! step is timed: with CUDA events on the GPU, by the wall clock on the
//! CPU backend.

use std::time::Instant;

use cavity::backend::{Backend, BackendError};
use cavity_arrays::{Device, Words};
use cavity_arrays_kernels::blocks;
use cavity_polylla_kernels::{
    BarrierTips, FrontierEdges, LongestEdges, MergeFrontier, MoveSeeds, PolygonSeeds, Relink,
    SeedEdges,
};
use cudarc::driver::sys::CUevent_flags;

use crate::PolyllaError;
use crate::halfedge::HalfEdges;
use crate::sequential::Polylla;

/// The milliseconds of each step of a run, in order: the upload, the
/// kernels (with the names of the paper's table 1 where they match), the
/// compaction, the download.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    /// Each step's name and milliseconds.
    pub steps: Vec<(&'static str, f64)>,
}

impl Timings {
    /// The milliseconds of the steps that are not copies (the kernels and
    /// the compaction).
    pub fn kernels(&self) -> f64 {
        self.steps
            .iter()
            .filter(|(n, _)| !n.starts_with("copy"))
            .map(|s| s.1)
            .sum()
    }

    /// The milliseconds of every step.
    pub fn total(&self) -> f64 {
        self.steps.iter().map(|s| s.1).sum()
    }
}

/// Times the steps of a run on a backend.
struct Clock<'a> {
    backend: &'a Backend,
    timings: Timings,
}

impl Clock<'_> {
    /// Runs `f` as step `name`, timed.
    fn step<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce() -> Result<T, PolyllaError>,
    ) -> Result<T, PolyllaError> {
        let driver = |what: &'static str| {
            move |source| PolyllaError::Backend(BackendError::Driver { what, source })
        };
        match self.backend {
            Backend::Cuda(gpu) => {
                let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
                let start = gpu
                    .stream()
                    .record_event(flags)
                    .map_err(driver("recording an event"))?;
                let out = f()?;
                let end = gpu
                    .stream()
                    .record_event(flags)
                    .map_err(driver("recording an event"))?;
                let ms = start.elapsed_ms(&end).map_err(driver("timing"))?;
                self.timings.steps.push((name, f64::from(ms)));
                Ok(out)
            }
            Backend::Cpu(_) => {
                let t = Instant::now();
                let out = f()?;
                self.timings
                    .steps
                    .push((name, t.elapsed().as_secs_f64() * 1e3));
                Ok(out)
            }
        }
    }
}

/// The words of `mesh`'s positions: each coordinate's `f64` as its low
/// and high word.
fn position_words(mesh: &HalfEdges) -> Vec<u32> {
    mesh.positions
        .iter()
        .flatten()
        .flat_map(|x| {
            let b = x.to_bits();
            [b as u32, (b >> 32) as u32]
        })
        .collect()
}

/// GPolylla of `mesh` on `backend`: the same [`Polylla`] as
/// [`crate::polylla_sequential`], with the time of each step.
///
/// # Errors
/// [`PolyllaError::Backend`] when the GPU's kernels are missing, a launch
/// or a copy fails (out of memory included); [`PolyllaError::Input`] past
/// `2³² - 1` half-edges.
pub fn polylla(backend: &Backend, mesh: &HalfEdges) -> Result<(Polylla, Timings), PolyllaError> {
    if mesh.len() >= u32::MAX as usize / 4 {
        return Err(PolyllaError::Input(format!(
            "{} half-edges, more than 32-bit indices reach",
            mesh.len()
        )));
    }
    cavity_app_ptx::add_to(backend)?;
    let d = Device::new(backend);
    let mut clock = Clock {
        backend,
        timings: Timings::default(),
    };
    let (halfedges, interior) = (mesh.len() as u32, mesh.interior);
    let vertices = mesh.positions.len() as u32;
    let (origin, twin, next, prev, edge_of_vertex, positions) =
        clock.step("copy to device", || {
            Ok((
                d.upload(&mesh.origin)?,
                d.upload(&mesh.twin)?,
                d.upload(&mesh.next)?,
                d.upload(&mesh.prev)?,
                d.upload(&mesh.edge_of_vertex)?,
                d.upload(&position_words(mesh))?,
            ))
        })?;
    let zeros = |n: u32| -> Result<Words, PolyllaError> { Ok(d.zeros(n as usize)?) };
    let (mut longest, mut frontier, mut extra) =
        (zeros(halfedges)?, zeros(halfedges)?, zeros(halfedges)?);
    let (mut seeds, mut moved, mut marks) =
        (zeros(interior)?, zeros(interior)?, zeros(interior + 1)?);
    let (mut new_next, mut new_prev, mut repaired) =
        (zeros(halfedges)?, zeros(halfedges)?, zeros(1)?);
    let [o, t, n, p, ev, pos] =
        [&origin, &twin, &next, &prev, &edge_of_vertex, &positions].map(|w| d.read(w));
    let (l, f, x) = (
        d.address(&mut longest),
        d.address(&mut frontier),
        d.address(&mut extra),
    );
    let (s, m, pm) = (
        d.address(&mut seeds),
        d.address(&mut moved),
        d.address(&mut marks),
    );
    let (nn, np, r) = (
        d.address(&mut new_next),
        d.address(&mut new_prev),
        d.address(&mut repaired),
    );
    let triangles = interior / 3;
    // Every launch below: the arrays hold a word per half-edge,
    // per interior half-edge or per vertex as each kernel's contract says,
    // `marks` one more for its scan, `repaired` one; they live until the
    // downloads at the end.
    clock.step("longest edges", || {
        // SAFETY: as said above the launches.
        unsafe {
            d.launch::<LongestEdges>(blocks(triangles), (0, 0), ([o, t, pos], triangles, l))?
        };
        Ok(())
    })?;
    clock.step("frontier edges", || {
        // SAFETY: as said above the launches.
        unsafe {
            d.launch::<FrontierEdges>(blocks(halfedges), (0, 0), (t, l, [interior, halfedges], f))?
        };
        Ok(())
    })?;
    clock.step("seed edges", || {
        // SAFETY: as said above the launches.
        unsafe { d.launch::<SeedEdges>(blocks(interior), (0, 0), (t, l, interior, s))? };
        Ok(())
    })?;
    clock.step("barrier tips", || {
        let params = ([t, n, ev], vertices, f, x, s, r);
        // SAFETY: as said above the launches.
        unsafe { d.launch::<BarrierTips>(blocks(vertices), (0, 0), params)? };
        // SAFETY: as said above the launches.
        unsafe { d.launch::<MergeFrontier>(blocks(halfedges), (0, 0), (f, x, halfedges))? };
        Ok(())
    })?;
    clock.step("re-link", || {
        let params = ([t, n, p, f], [interior, halfedges], nn, np);
        // SAFETY: as said above the launches.
        unsafe { d.launch::<Relink>(blocks(halfedges), (0, 0), params)? };
        Ok(())
    })?;
    clock.step("move seeds", || {
        // SAFETY: as said above the launches.
        unsafe { d.launch::<MoveSeeds>(blocks(interior), (0, 0), ([t, n, f], interior, s, m))? };
        Ok(())
    })?;
    clock.step("polygon seeds", || {
        // SAFETY: as said above the launches.
        unsafe { d.launch::<PolygonSeeds>(blocks(interior), (0, 0), (nn, m, interior, pm))? };
        Ok(())
    })?;
    let (list, count) = clock.step("scan and compact", || {
        Ok(d.compact(&mut marks, None, interior)?)
    })?;
    let (frontier, next, prev, polygons, repaired) = clock.step("copy to host", || {
        Ok((
            d.download(frontier, halfedges as usize)?,
            d.download(new_next, halfedges as usize)?,
            d.download(new_prev, halfedges as usize)?,
            d.download(list, count as usize)?,
            d.download(repaired, 1)?[0],
        ))
    })?;
    let poly = Polylla {
        frontier: frontier.iter().map(|&w| w != 0).collect(),
        next,
        prev,
        polygons,
        repaired: repaired as usize,
    };
    Ok((poly, clock.timings))
}
