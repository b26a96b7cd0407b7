//! GPolylla on a backend (the paper's section 6, Algorithm 7): the
//! half-edge arrays copied to the GPU (or kept on the host for the CPU
//! backend), the kernels of `cavity-polylla-kernels` one after another,
//! the polygons' seeds compacted by a scan, the result copied back. Each
//! step is timed: with CUDA events on the GPU, by the wall clock on the
//! CPU backend.

use cavity::backend::buffer::Buffer;
use cavity::backend::{Backend, Landing};
use cavity_polylla_kernels::{
    BarrierTips, Bridges, Labels, LongestEdges, MergeExtra, MoveSeeds, PolygonSeeds, PolygonSizes,
    PolygonVertices, Relink, RelinkChords, SharedIds, SplitPolygons, blocks, repair,
};
use rayon::prelude::*;

use crate::PolyllaError;
use crate::halfedge::HalfEdges;
use crate::lists::PolygonLists;
use crate::sequential::Polylla;

/// The milliseconds of each step of a run, in order: the upload, the
/// kernels (with the names of the paper's table 1 where they match), the
/// compaction, for [`polygon_lists`] the vertex lists' gathering ("vertex
/// lists": two kernels, a scan and the read of the total), the download.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    /// Each step's name and milliseconds.
    pub steps: Vec<(&'static str, f64)>,
}

impl Timings {
    /// The milliseconds of the steps that are not copies (the kernels, the
    /// compaction and the vertex lists' gathering).
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
    /// Runs `f` as step `name`, timed ([`Backend::timed`]).
    fn step<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce() -> Result<T, PolyllaError>,
    ) -> Result<T, PolyllaError> {
        let (out, ms) = self.backend.timed(f)?;
        self.timings.steps.push((name, ms));
        Ok(out)
    }
}

/// GPolylla of `mesh` on `backend`: the same [`Polylla`] as
/// [`crate::polylla_sequential`], with the time of each step. After the
/// polygons are linked and each half-edge has its polygon's id (its
/// seed's, [`PolygonSeeds`], or, for a polygon several seeds walked, its
/// least half-edge's, [`SharedIds`]), a half-edge with its twin's id is a
/// barrier edge the tips' repair left ([`Bridges`], which also takes the
/// bits of the polygons holding one out of the polygons' list); when there
/// are any (rare: a region wrapped around others), their chords join the
/// frontier, the links around the chords' ends change ([`RelinkChords`],
/// "split barrier edges") and the pieces are named from the chords'
/// half-edges ([`SplitPolygons`], "split polygon seeds"), a thread per
/// half-edge of a chord; the list of polygons is compacted once, after. The
/// interior half-edges' `next` and `prev` are taken as the structure
/// defines them (around each triangle, [`HalfEdges`]); only the border
/// half-edges' are copied to the device.
///
/// # Errors
/// [`PolyllaError::Backend`] when the GPU's kernels are missing, a launch
/// or a copy fails (out of memory included); [`PolyllaError::Input`] past
/// `2³² - 1` half-edges.
pub fn polylla(backend: &Backend, mesh: &HalfEdges) -> Result<(Polylla, Timings), PolyllaError> {
    let linked = run(backend, mesh, false)?;
    let (mut clock, d) = (linked.clock, backend);
    let (halfedges, interior) = (linked.halfedges, linked.interior);
    let (labels, next, prev, polygons, repaired) = clock.step("copy to host", || {
        Ok((
            d.download(linked.labels, linked.bytes as usize)?,
            d.download(linked.new_next, halfedges as usize)?,
            d.download(linked.new_prev, halfedges as usize)?,
            d.download(linked.list, linked.count as usize)?,
            d.download(linked.repaired, 2)?,
        ))
    })?;
    let labels: &[u8] = bytemuck::cast_slice(&labels);
    let frontier = (0..halfedges)
        .into_par_iter()
        .map(|h| h >= interior || labels[(h / 3) as usize] >> (h % 3) & 1 != 0)
        .collect();
    let poly = Polylla {
        frontier,
        next,
        prev,
        polygons,
        repaired: repaired[0] as usize,
        bridges: repaired[1] as usize,
    };
    Ok((poly, clock.timings))
}

/// The polygons of [`polylla`] as vertex lists gathered on the device
/// (`cavity_polylla_kernels::lists`: each polygon's size, their scan, its
/// vertices), so that only the lists are copied back, not the polygons'
/// links and labels: what the writers take. The same polygons in the same
/// order as [`PolygonLists::of`] of [`polylla`]'s result.
///
/// # Errors
/// As [`polylla`].
pub fn polygon_lists(
    backend: &Backend,
    mesh: &HalfEdges,
) -> Result<(PolygonLists, Timings), PolyllaError> {
    let linked = run(backend, mesh, true)?;
    let (mut clock, d) = (linked.clock, backend);
    let (origin, new_next, list, count) =
        (linked.origin, linked.new_next, linked.list, linked.count);
    let [offsets_landing, vertices_landing] = linked.landings;
    let offsets = clock.step("vertex lists", || {
        let mut offsets = d.zeros::<u32>(count as usize + 1)?;
        d.launch::<PolygonSizes>(
            blocks(count),
            (0, 0),
            (&new_next, &list, count, &mut offsets),
        )?;
        d.exclusive_scan(&mut offsets, count + 1)?;
        let total = d.element(&offsets, count as usize)?;
        let mut vertices = d.zeros::<u32>(total as usize)?;
        let params = (&new_next, &origin, &list, &offsets, count, &mut vertices);
        d.launch::<PolygonVertices>(blocks(count), (0, 0), params)?;
        Ok((offsets, vertices, total))
    })?;
    let (offsets, vertices, repaired) = clock.step("copy to host", || {
        Ok((
            d.download_into(offsets.0, count as usize + 1, offsets_landing)?,
            d.download_into(offsets.1, offsets.2 as usize, vertices_landing)?,
            d.download(linked.repaired, 2)?,
        ))
    })?;
    let lists = PolygonLists {
        offsets,
        vertices,
        repaired: repaired[0] as usize,
        bridges: repaired[1] as usize,
    };
    Ok((lists, clock.timings))
}

/// A run's arrays once its polygons are linked and listed ([`run`]).
struct Linked<'a> {
    clock: Clock<'a>,
    labels: Buffer<u32>,
    origin: Buffer<u32>,
    new_next: Buffer<u32>,
    new_prev: Buffer<u32>,
    /// The polygons' seeds, `count` of them.
    list: Buffer<u32>,
    count: u32,
    /// Tips repaired and barrier edges split.
    repaired: Buffer<u32>,
    /// Host memory for the vertex lists' offsets and vertices, faulted in
    /// while the device finishes (none prepared for the links).
    landings: [Landing<u32>; 2],
    /// Words of the label bytes.
    bytes: u32,
    halfedges: u32,
    interior: u32,
}

/// Host memory for the vertex lists of the polygons of `mesh` that
/// `seeds` moved seeds walk (one polygon each, or fewer where several walk
/// one): their offsets and their vertices, of which Euler's formula for a
/// triangulated disc (`V - E + F = 1`) gives `2 (V + F - 1) - b` for `F`
/// polygons and `b` boundary edges (each interior frontier edge on two
/// polygons, each boundary edge on one), with a sixty-fourth more for
/// what it does not see (holes, split barrier edges); unused vertices and
/// seeds sharing a polygon make it larger, and a short estimate only
/// costs the preparation. Faulted in on the host's threads while the
/// device finishes (issue 55: at 44 M points, 0.5 GB copied back into
/// fresh memory took 20-54 ms, into this memory 24-30 ms).
fn list_landings(d: &Backend, mesh: &HalfEdges, seeds: u32) -> [Landing<u32>; 2] {
    let (vertices, polygons) = (mesh.positions.len(), seeds as usize);
    let boundary = mesh.len() - mesh.interior as usize;
    let lists = (2 * (vertices + polygons)).saturating_sub(2 + boundary);
    let slack = |n: usize| n + n / 64 + 1024;
    [d.landing(slack(polygons + 1)), d.landing(slack(lists))]
}

/// GPolylla's steps up to the list of polygons (see [`polylla`]); for
/// `lists`, the host memory of the vertex lists is prepared as soon as the
/// polygons are counted ([`list_landings`]).
fn run<'a>(
    backend: &'a Backend,
    mesh: &HalfEdges,
    lists: bool,
) -> Result<Linked<'a>, PolyllaError> {
    if mesh.len() >= u32::MAX as usize / 4 {
        return Err(PolyllaError::Input(format!(
            "{} half-edges, more than 32-bit indices reach",
            mesh.len()
        )));
    }
    crate::add_kernels(backend)?;
    let d = backend;
    let mut clock = Clock {
        backend,
        timings: Timings::default(),
    };
    let (halfedges, interior) = (mesh.len() as u32, mesh.interior);
    let (triangles, vertices) = (interior / 3, mesh.positions.len() as u32);
    let inside = interior as usize;
    let (origin, twin, border_next, border_prev, edge_of_vertex, positions) =
        clock.step("copy to device", || {
            Ok((
                d.upload(&mesh.origin)?,
                d.upload(&mesh.twin)?,
                d.upload(&mesh.next[inside..])?,
                d.upload(&mesh.prev[inside..])?,
                d.upload(&mesh.edge_of_vertex)?,
                // Each coordinate's `f64` as its low and high word (the
                // layout `coordinate` reads; hosts and GPUs are little endian).
                d.upload::<u32>(bytemuck::cast_slice(&mesh.positions))?,
            ))
        })?;
    let zeros = |n: u32| -> Result<Buffer<u32>, PolyllaError> { Ok(d.zeros(n as usize)?) };
    // A byte per triangle, a bit per interior half-edge, two bits per
    // vertex.
    let (bytes, bits) = (triangles.div_ceil(4), interior.div_ceil(32));
    let (mut longest, mut labels, mut ends) =
        (zeros(bytes)?, zeros(bytes)?, zeros(vertices.div_ceil(16))?);
    // Tips repaired, barrier edges split.
    let mut repaired = zeros(2)?;
    let links = [&twin, &border_next, &border_prev];
    clock.step("longest edges", || {
        let params = ([&origin, &twin, &positions], triangles, &mut longest);
        Ok(d.launch::<LongestEdges>(blocks(triangles), (0, 0), params)?)
    })?;
    clock.step("frontier and seed edges", || {
        let params = ([&origin, &twin, &longest], interior, &mut labels, &mut ends);
        Ok(d.launch::<Labels>(blocks(triangles), (0, 0), params)?)
    })?;
    clock.step("barrier tips", || {
        let star = [&edge_of_vertex, &labels, &ends];
        let params = (
            links,
            [interior, vertices],
            star,
            &mut longest,
            &mut repaired,
        );
        let smem = repair::shared_bytes();
        d.launch::<BarrierTips>(blocks(vertices), (smem, smem), params)?;
        Ok(d.launch::<MergeExtra>(blocks(bytes), (0, 0), (&longest, &mut labels, bytes))?)
    })?;
    let (mut new_next, mut new_prev) = (zeros(halfedges)?, zeros(halfedges)?);
    let (mut moved, mut polygons, mut shared) = (zeros(bits)?, zeros(bits)?, zeros(bits)?);
    let (mut ids, mut chords) = (zeros(halfedges)?, zeros(bits)?);
    clock.step("re-link", || {
        let params = (
            links,
            &labels,
            [interior, halfedges],
            &mut new_next,
            &mut new_prev,
        );
        Ok(d.launch::<Relink>(blocks(halfedges), (0, 0), params)?)
    })?;
    clock.step("move seeds", || {
        let params = (links, &labels, interior, &mut moved);
        Ok(d.launch::<MoveSeeds>(blocks(triangles), (0, 0), params)?)
    })?;
    let landings = clock.step("polygon seeds", || {
        // One thread per moved seed: the walks around the polygons are
        // chains of dependent loads, as many as possible in flight.
        let (seeds, n) = d.compact_bits(&moved, bits)?;
        let params = (&new_next, &seeds, n, &mut polygons, &mut ids, &mut shared);
        d.launch::<PolygonSeeds>(blocks(n), (0, 0), params)?;
        // Prepared while the walks run.
        Ok(if lists {
            list_landings(d, mesh, n)
        } else {
            [Landing::none(), Landing::none()]
        })
    })?;
    let bridges = clock.step("barrier edges", || {
        let (walked, n) = d.compact_bits(&shared, bits)?;
        d.launch::<SharedIds>(blocks(n), (0, 0), (&new_next, &walked, n, &mut ids))?;
        let walk = [&labels, &new_next, &ids];
        let params = (
            links,
            interior,
            walk,
            &mut longest,
            &mut repaired,
            &mut polygons,
            &mut chords,
        );
        d.launch::<Bridges>(blocks(interior), (0, 0), params)?;
        Ok(d.element(&repaired, 1)?)
    })?;
    if bridges > 0 {
        // Rare (a region wrapped around others): the chords join the
        // frontier, as in the sequential version, and only the polygons
        // split are linked again, a thread per half-edge of a chord.
        let (seeds, n) = clock.step("split barrier edges", || {
            d.launch::<MergeExtra>(blocks(bytes), (0, 0), (&longest, &mut labels, bytes))?;
            let (seeds, n) = d.compact_bits(&chords, bits)?;
            let params = (
                links,
                &labels,
                [interior, n],
                &seeds,
                &mut new_next,
                &mut new_prev,
            );
            d.launch::<RelinkChords>(blocks(n), (0, 0), params)?;
            Ok((seeds, n))
        })?;
        clock.step("split polygon seeds", || {
            let params = (&new_next, &seeds, n, &mut polygons);
            Ok(d.launch::<SplitPolygons>(blocks(n), (0, 0), params)?)
        })?;
    }
    let (list, count) = clock.step("scan and compact", || Ok(d.compact_bits(&polygons, bits)?))?;
    Ok(Linked {
        clock,
        labels,
        origin,
        new_next,
        new_prev,
        list,
        count,
        repaired,
        landings,
        bytes,
        halfedges,
        interior,
    })
}
