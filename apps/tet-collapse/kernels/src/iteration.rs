//! One parallel collapse iteration (Algorithm 1, sections 3.2-3.4) as
//! checked kernels over arrays, each over chunks of elements
//! ([`crate::chunk`]) so that the GPU's blocks and the CPU backend's run
//! the same launch:
//!
//! 1. the stars (vertex → tetrahedra, compressed rows) by count, scan and
//!    fill: [`CountStars`], [`FillStars`], [`SortStars`];
//! 2. the boundary: [`MarkBoundary`] (the faces of one tetrahedron, and
//!    their vertices), [`Classify`] (face, ridge, corner);
//! 3. the edges (∂1, each once from its lower vertex) by count, scan and
//!    fill: [`CountEdges`], [`FillEdges`];
//! 4. [`CostsOf`]: every edge's cost, the candidates compacted into a
//!    list; [`CandidatesOf`]: their admissibility
//!    (`crate::collapse::check`), both generic over the criterion
//!    ([`CriterionKernels`], [`criterion_kernels!`](crate::criterion_kernels));
//! 5. conflicts in the paper's two passes: [`Winners`] (the cheapest
//!    candidate among the edges around both endpoints wins, ties to the
//!    lower index, from per-vertex minima by [`VertexCosts`] and
//!    [`VertexIndices`]; it records itself at its vertices,
//!    `vertAffectedByEdge`)
//!    and [`TetConflicts`] (a tetrahedron touched by two winners keeps
//!    the cheaper), in rounds ended by [`Decide`] until every winner is
//!    decided; [`Settle`] marks the removed vertices;
//! 6. apply: [`RemoveTets`] marks the tetrahedra that collapse, the host
//!    scans both removal marks (a survivor's new index is its index less
//!    the removed before it), [`Remap`] places the kept vertices and
//!    numbers the removed ones as their kept partner, [`CompactTets`]
//!    writes the new tetrahedra.
//!
//! Every decision reads only what an earlier launch wrote, so the result
//! does not depend on the order of the threads.

use core::marker::PhantomData;

use cavity_device::array::{In, InOut, Ins};
use cavity_device::block::Block;
use cavity_device::kernel::{CheckedKernel, Kernel, Launch, LaunchBounds};

use crate::boundary::{CORNER, INTERIOR, classify};
use crate::chunk;
use crate::collapse::{Trial, check};
use crate::criterion::{Criterion, Field, Harmonic, Length, Placement};
use crate::geometry::{cross, dot, sub};
use crate::star::{Star, has};

/// The mesh as the kernels read it: `[tets (4 words each), star offsets
/// (vertices + 1), star entries, boundary marks (one word per vertex)]`
/// and `[positions (3 words per vertex), field values (one per vertex, or
/// none)]`.
#[derive(Clone, Copy)]
pub struct Arrays {
    tets: In<u32>,
    offsets: In<u32>,
    entries: In<u32>,
    boundary: In<u32>,
    positions: In<f32>,
    values: In<f32>,
    faces: Option<In<u32>>,
    edge_rows: Option<(In<u32>, In<u32>)>,
}

impl Arrays {
    /// The arrays of a launch's parameters.
    #[inline(always)]
    pub fn new(mesh: Ins<u32, 4>, geometry: Ins<f32, 2>) -> Arrays {
        let [tets, offsets, entries, boundary] = *mesh;
        let [positions, values] = *geometry;
        Arrays {
            tets,
            offsets,
            entries,
            boundary,
            positions,
            values,
            faces: None,
            edge_rows: None,
        }
    }

    /// The arrays searching the edge rows (`edge_offsets`, `edges`:
    /// [`FillEdges`]) for [`Star::has_edge`] rather than reading a star.
    #[inline(always)]
    pub fn with_edges(self, edge_offsets: In<u32>, edges: In<u32>) -> Arrays {
        Arrays {
            edge_rows: Some((edge_offsets, edges)),
            ..self
        }
    }

    /// The arrays reading the boundary faces from `faces` ([`MarkBoundary`]'s
    /// bits) rather than counting them ([`Star::is_boundary_face`]).
    #[inline(always)]
    pub fn with_faces(self, faces: In<u32>) -> Arrays {
        Arrays {
            faces: Some(faces),
            ..self
        }
    }
}

impl Star for Arrays {
    #[inline(always)]
    fn star_len(&self, v: u32) -> u32 {
        self.offsets.get(v + 1).wrapping_sub(self.offsets.get(v))
    }

    #[inline(always)]
    fn star_tet(&self, v: u32, i: u32) -> u32 {
        self.entries.get(self.offsets.get(v).wrapping_add(i))
    }

    #[inline(always)]
    fn tet(&self, t: u32) -> [u32; 4] {
        let b = 4 * t;
        [
            self.tets.get(b),
            self.tets.get(b + 1),
            self.tets.get(b + 2),
            self.tets.get(b + 3),
        ]
    }

    #[inline(always)]
    fn position(&self, v: u32) -> [f64; 3] {
        let b = 3 * v;
        [
            f64::from(self.positions.get(b)),
            f64::from(self.positions.get(b + 1)),
            f64::from(self.positions.get(b + 2)),
        ]
    }

    #[inline(always)]
    fn on_boundary(&self, v: u32) -> bool {
        self.boundary.get(v) != 0
    }

    #[inline(always)]
    fn value(&self, v: u32) -> f64 {
        if self.values.is_empty() {
            0.0
        } else {
            f64::from(self.values.get(v))
        }
    }

    #[inline(always)]
    fn is_boundary_face(&self, t: u32, k: usize) -> bool {
        match self.faces {
            // Face `k` of `FACES` is the one opposite corner `k`.
            Some(faces) => faces.get(t) & (1 << k) != 0,
            None => {
                let c = self.tet(t);
                crate::star::face_tets(self, FACES[k].map(|i| c[i])) == 1
            }
        }
    }

    #[inline(always)]
    fn has_edge(&self, a: u32, x: u32) -> bool {
        match self.edge_rows {
            Some((edge_offsets, edges)) => find_edge(edge_offsets, edges, a, x) != u32::MAX,
            None => crate::star::star_has(self, a, x),
        }
    }
}

/// The criteria that ship, as one launch parameter: `kind` 0
/// ([`Length`]), 1 ([`Field`]) or 2 ([`Harmonic`]); `placement` 0
/// (midpoint) or 1 (endpoint).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct Builtin {
    /// Which criterion.
    pub kind: u32,
    /// Which placement.
    pub placement: u32,
    /// [`Length::length`], [`Field::max_error`] or
    /// [`Harmonic::threshold_cos`].
    pub bound: f64,
}

impl Builtin {
    /// [`Harmonic`] with `bound` as its threshold's cosine.
    #[inline(always)]
    fn harmonic(&self) -> Harmonic {
        Harmonic {
            threshold_cos: self.bound,
        }
    }

    #[inline(always)]
    fn placement(&self) -> Placement {
        if self.placement == 1 {
            Placement::Endpoint
        } else {
            Placement::Midpoint
        }
    }
}

impl Criterion for Builtin {
    #[inline(always)]
    fn cost<S: Star>(&self, s: &S, a: u32, b: u32) -> Option<f64> {
        match self.kind {
            0 => Length {
                length: self.bound,
                placement: self.placement(),
            }
            .cost(s, a, b),
            1 => Field {
                max_error: self.bound,
                placement: self.placement(),
            }
            .cost(s, a, b),
            _ => self.harmonic().cost(s, a, b),
        }
    }

    #[inline(always)]
    fn placement<S: Star>(&self, s: &S, a: u32, b: u32) -> [f64; 3] {
        match self.kind {
            0 | 1 => self.placement().place(s, a, b),
            _ => self.harmonic().placement(s, a, b),
        }
    }

    #[inline(always)]
    fn admissible<S: Star>(&self, s: &S, a: u32, b: u32, p: [f64; 3]) -> bool {
        match self.kind {
            0 => Length {
                length: self.bound,
                placement: self.placement(),
            }
            .admissible(s, a, b, p),
            1 => true,
            _ => self.harmonic().admissible(s, a, b, p),
        }
    }
}

cavity_device::kernel! {
    @core
    /// Adds one to `counts[v]` for each of the `tets` tetrahedra (four
    /// words each in `tet_vertices`) with vertex `v`.
    ///
    /// # Safety
    /// Checked: the tetrahedra are only read, the counts added atomically.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel CountStars(launch, tet_vertices: In<u32>, tets: u32, counts: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, 4 * tets);
        launch.block.for_each(end - start, |k| {
            counts.fetch_add(tet_vertices.get(start + k), 1);
        });
    }
}

cavity_device::kernel! {
    @core
    /// Writes each tetrahedron `t` into the star of each of its vertices
    /// `v`, at `offsets[v]` plus the place `cursor[v]` (zero at the start)
    /// hands out.
    ///
    /// # Safety
    /// Checked: the inputs are only read; the cursor and the entries are
    /// written atomically.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel FillStars(
        launch,
        tet_vertices: In<u32>,
        tets: u32,
        offsets: In<u32>,
        cursor: InOut<u32>,
        entries: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, 4 * tets);
        launch.block.for_each(end - start, |k| {
            let v = tet_vertices.get(start + k);
            let at = offsets.get(v).wrapping_add(cursor.fetch_add(v, 1));
            entries.set(at, (start + k) / 4);
        });
    }
}

cavity_device::kernel! {
    @core
    /// Sorts each of the `rows` rows of (`offsets`, `entries`) ascending
    /// (insertion sort: stars are short), so that the stars do not depend
    /// on the order the atomics took.
    ///
    /// # Safety
    /// Checked: `offsets` is only read; `entries` is read and written
    /// atomically, each row by one thread.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel SortStars(launch, offsets: In<u32>, entries: InOut<u32>, rows: u32) {
        let (start, end) = chunk(launch.block_idx, rows);
        launch.block.for_each(end - start, |k| {
            let r = start + k;
            let (a, b) = (offsets.get(r), offsets.get(r + 1));
            for i in a.saturating_add(1)..b {
                let x = entries.get(i);
                let mut j = i;
                while j > a && entries.get(j - 1) > x {
                    entries.set(j, entries.get(j - 1));
                    j -= 1;
                }
                entries.set(j, x);
            }
        });
    }
}

/// The corners of each face of a positively oriented tetrahedron, as its
/// outward loop; face `i` is opposite corner `i`.
pub const FACES: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];

cavity_device::kernel! {
    @core
    /// Marks the boundary faces (faces of one tetrahedron): bit `i` of
    /// `faces[t]` for face `i` of tetrahedron `t` ([`FACES`]), and 1 in
    /// `boundary[v]` for each of its vertices. `mesh` is [`Arrays`]'
    /// words with the boundary marks left out (any array in their place).
    ///
    /// # Safety
    /// Checked: the mesh is only read; the marks are written atomically
    /// (the same value by every writer).
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel MarkBoundary(
        launch,
        mesh: Ins<u32, 4>,
        geometry: Ins<f32, 2>,
        tets: u32,
        faces: InOut<u32>,
        boundary: InOut<u32>,
    ) {
        let s = Arrays::new(mesh, geometry);
        let (start, end) = chunk(launch.block_idx, tets);
        launch.block.for_each(end - start, |k| {
            let t = start + k;
            let c = s.tet(t);
            let mut bits = 0;
            for (i, f) in FACES.iter().enumerate() {
                let (x, y, z) = (c[f[0]], c[f[1]], c[f[2]]);
                if crate::star::face_tets(&s, [x, y, z]) == 1 {
                    bits |= 1 << i;
                    boundary.set(x, 1);
                    boundary.set(y, 1);
                    boundary.set(z, 1);
                }
            }
            faces.set(t, bits);
        });
    }
}

/// The most boundary triangles around one vertex that [`Classify`] reads;
/// a vertex with more is a corner (it never moves).
pub const MAX_FAN: usize = 32;

cavity_device::kernel! {
    @core
    /// Classifies each of the `vertices` vertices (`crate::boundary`):
    /// its boundary triangles (from `faces`, [`MarkBoundary`]) give the
    /// unit normals and, for each boundary edge at the vertex, whether it
    /// is sharp (its two triangles' normals differ by more than
    /// `epsilons[1]`, or it has other than two). The class is at least
    /// `previous[v]` (classes only rise; an empty `previous` for none).
    ///
    /// # Safety
    /// Checked: the inputs are only read; each vertex's class is written
    /// by its own thread.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel Classify(
        launch,
        mesh: Ins<u32, 4>,
        geometry: Ins<f32, 2>,
        faces: In<u32>,
        previous: In<u32>,
        epsilons: [f64; 2],
        vertices: u32,
        class: InOut<u32>,
    ) {
        let s = Arrays::new(mesh, geometry);
        let (start, end) = chunk(launch.block_idx, vertices);
        launch.block.for_each(end - start, |k| {
            let v = start + k;
            let floor = if previous.is_empty() { INTERIOR } else { previous.get(v) };
            if !s.on_boundary(v) {
                class.set(v, floor);
                return;
            }
            let mut normals = [[0.0f64; 3]; MAX_FAN];
            let mut others = [[0u32; 2]; MAX_FAN];
            let mut n = 0;
            let mut overflow = false;
            for i in 0..s.star_len(v) {
                let t = s.star_tet(v, i);
                let bits = faces.get(t);
                let c = s.tet(t);
                for (j, f) in FACES.iter().enumerate() {
                    if bits & (1 << j) == 0 {
                        continue;
                    }
                    let loop_ = [c[f[0]], c[f[1]], c[f[2]]];
                    let Some(at) = loop_.iter().position(|&u| u == v) else {
                        continue;
                    };
                    if n == MAX_FAN {
                        overflow = true;
                        continue;
                    }
                    let p = loop_.map(|u| s.position(u));
                    let m = cross(sub(p[1], p[0]), sub(p[2], p[0]));
                    let l = core::f64::math::sqrt(dot(m, m));
                    normals[n] = if l > 0.0 { [m[0] / l, m[1] / l, m[2] / l] } else { [0.0; 3] };
                    others[n] = [loop_[(at + 1) % 3], loop_[(at + 2) % 3]];
                    n += 1;
                }
            }
            let mut sharp = 0;
            for i in 0..n {
                for x in others[i] {
                    // Edge vx, counted once: at the first triangle with it.
                    let first = (0..i).all(|j| !others[j].contains(&x));
                    if !first {
                        continue;
                    }
                    let mut with = [0usize; 2];
                    let mut count = 0;
                    for (j, o) in others.iter().enumerate().take(n).skip(i) {
                        if o.contains(&x) {
                            if count < 2 {
                                with[count] = j;
                            }
                            count += 1;
                        }
                    }
                    if count != 2 || dot(normals[with[0]], normals[with[1]]) < 1.0 - epsilons[1] {
                        sharp += 1;
                    }
                }
            }
            let c = if overflow {
                CORNER
            } else {
                classify(&normals, n, sharp, epsilons[0])
            };
            class.set(v, c.max(floor));
        });
    }
}

/// The most edges to higher vertices one vertex holds in a local array
/// while the edges are built; past it the edges are found from the mesh
/// again (`for_each_upper_in_mesh`).
pub const MAX_UPPER: usize = 64;

/// The vertices `b > a` of the tetrahedra around `a`, once each and
/// ascending, in a local array; `None` past [`MAX_UPPER`].
#[inline(always)]
fn upper_neighbours<S: Star>(s: &S, a: u32) -> Option<([u32; MAX_UPPER], usize)> {
    let mut out = [0u32; MAX_UPPER];
    let mut n = 0;
    for i in 0..s.star_len(a) {
        for b in s.tet(s.star_tet(a, i)) {
            if b <= a {
                continue;
            }
            // Insertion into the sorted set.
            let mut j = 0;
            while j < n && out[j] < b {
                j += 1;
            }
            if j < n && out[j] == b {
                continue;
            }
            if n == MAX_UPPER {
                return None;
            }
            let mut k = n;
            while k > j {
                out[k] = out[k - 1];
                k -= 1;
            }
            out[j] = b;
            n += 1;
        }
    }
    Some((out, n))
}

/// Calls `f(b)` for each vertex `b > a` of the tetrahedra around `a`,
/// once each (at its first tetrahedron in the sorted star), reading the
/// mesh again for each test: the path past [`MAX_UPPER`].
#[inline(always)]
fn for_each_upper_in_mesh<S: Star, F: FnMut(u32)>(s: &S, a: u32, mut f: F) {
    for i in 0..s.star_len(a) {
        let t = s.tet(s.star_tet(a, i));
        for &b in &t {
            if b <= a || (0..i).any(|j| has(s.tet(s.star_tet(a, j)), b)) {
                continue;
            }
            f(b);
        }
    }
}

cavity_device::kernel! {
    @core
    /// Counts each vertex's edges to higher vertices into `counts[v]`, and
    /// writes those vertices, ascending, into `upper` from `3 ×` the start
    /// of the vertex's star (a star of `k` tetrahedra has at most `3k`
    /// neighbours; `upper` holds three words per star entry, `12 ×` the
    /// tetrahedra, which the launch refuses past `u32` words), for
    /// [`FillEdges`] to copy once the counts are scanned.
    ///
    /// # Safety
    /// Checked: the mesh is only read; each vertex writes its own count
    /// and its own part of `upper`.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel CountEdges(
        launch,
        mesh: Ins<u32, 4>,
        geometry: Ins<f32, 2>,
        vertices: u32,
        counts: InOut<u32>,
        upper: InOut<u32>,
    ) {
        let [_, offsets, _, _] = *mesh;
        let s = Arrays::new(mesh, geometry);
        let (start, end) = chunk(launch.block_idx, vertices);
        launch.block.for_each(end - start, |k| {
            let a = start + k;
            let first = 3 * offsets.get(a);
            let n = match upper_neighbours(&s, a) {
                Some((found, n)) => {
                    for (j, &b) in (first..).zip(&found[..n]) {
                        upper.set(j, b);
                    }
                    n as u32
                }
                None => {
                    let mut n = 0u32;
                    for_each_upper_in_mesh(&s, a, |b| {
                        // Insertion into the sorted row.
                        let mut j = first + n;
                        while j > first && upper.get(j - 1) > b {
                            upper.set(j, upper.get(j - 1));
                            j -= 1;
                        }
                        upper.set(j, b);
                        n += 1;
                    });
                    n
                }
            };
            counts.set(a, n);
        });
    }
}

cavity_device::kernel! {
    @core
    /// Writes each vertex `a`'s edges `(a, b)`, `b > a`, from
    /// `edge_offsets[a]` into `edges` (two words each), sorted by `b`: its
    /// higher neighbours as [`CountEdges`] left them in `upper`, from `3 ×`
    /// the start of its star (`offsets`).
    ///
    /// # Safety
    /// Checked: the inputs are only read; each vertex writes its own rows.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel FillEdges(
        launch,
        rows: Ins<u32, 3>,
        vertices: u32,
        edges: InOut<u32>,
    ) {
        let [offsets, edge_offsets, upper] = *rows;
        let (start, end) = chunk(launch.block_idx, vertices);
        launch.block.for_each(end - start, |k| {
            let a = start + k;
            let (first, last) = (edge_offsets.get(a), edge_offsets.get(a + 1));
            let from = 3 * offsets.get(a);
            for j in first..last {
                edges.set(2 * j, a);
                edges.set(2 * j + 1, upper.get(from + j - first));
            }
        });
    }
}

/// The edge `(x, y)`'s index in the edge rows (`edge_offsets`, `edges`),
/// or `u32::MAX` when it is not an edge.
#[inline(always)]
pub fn find_edge(edge_offsets: In<u32>, edges: In<u32>, x: u32, y: u32) -> u32 {
    let (a, b) = if x < y { (x, y) } else { (y, x) };
    let (mut lo, mut hi) = (edge_offsets.get(a), edge_offsets.get(a + 1));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let m = edges.get(2 * mid + 1);
        if m == b {
            return mid;
        }
        if m < b {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    u32::MAX
}

/// Whether boundary edge `(a, b)` is sharp: its boundary triangles (from
/// `faces`) are not exactly two, or their normals differ by more than
/// `epsilon_r`.
#[inline(always)]
fn is_sharp(s: &Arrays, faces: In<u32>, a: u32, b: u32, epsilon_r: f64) -> bool {
    let mut normals = [[0.0f64; 3]; 2];
    let mut count = 0;
    for i in 0..s.star_len(a) {
        let t = s.star_tet(a, i);
        let c = s.tet(t);
        if !has(c, b) {
            continue;
        }
        let bits = faces.get(t);
        for (j, f) in FACES.iter().enumerate() {
            let loop_ = [c[f[0]], c[f[1]], c[f[2]]];
            if bits & (1 << j) == 0 || !loop_.contains(&a) || !loop_.contains(&b) {
                continue;
            }
            if count < 2 {
                let p = loop_.map(|u| s.position(u));
                let m = cross(sub(p[1], p[0]), sub(p[2], p[0]));
                let l = core::f64::math::sqrt(dot(m, m));
                normals[count] = if l > 0.0 {
                    [m[0] / l, m[1] / l, m[2] / l]
                } else {
                    [0.0; 3]
                };
            }
            count += 1;
        }
    }
    count != 2 || dot(normals[0], normals[1]) < 1.0 - epsilon_r
}

/// A criterion whose kernels are declared by [`criterion_kernels!`](crate::criterion_kernels):
/// the entry names of its [`CostsOf`] and [`CandidatesOf`]. The built-in
/// criteria ([`Builtin`]) are declared in this crate's PTX; a user's
/// criterion (plain `repr(C)` data, `bytemuck::Pod` on the host) is
/// declared in the user's kernel crate, whose PTX holds these two kernels
/// for it, and runs through `cavity_tet_collapse::parallel` with no change
/// here (the `CavityApp` model).
///
/// # Safety
/// `COSTS` and `CANDIDATES` name entry points of [`CostsOf<Self>`] and
/// [`CandidatesOf<Self>`] (as `criterion_kernels!` exports them).
pub unsafe trait CriterionKernels: Criterion + Copy + Send + Sync + 'static {
    /// The entry of [`CostsOf<Self>`].
    const COSTS: &'static str;
    /// The entry of [`CandidatesOf<Self>`].
    const CANDIDATES: &'static str;
}

/// The criterion's cost of each of the `edge_count` edges into `cost`
/// (`f32::INFINITY` for an edge that is no candidate) and 1 into `marks`
/// for a candidate (`edge_count + 1` words, zero at the start: the
/// candidates are compacted from them). Parameters: `(mesh, geometry,
/// edges, criterion, edge_count, cost, marks)`.
pub struct CostsOf<C>(PhantomData<fn() -> C>);

// SAFETY: `C::COSTS` is this kernel's entry (`CriterionKernels`).
unsafe impl<C: CriterionKernels> Kernel for CostsOf<C> {
    const NAME: &'static str = C::COSTS;
    const BOUNDS: LaunchBounds = crate::BOUNDS;
    const HOST_ZEROED_SHARED: bool = false;
    type Params = (
        Ins<u32, 4>,
        Ins<f32, 2>,
        In<u32>,
        C,
        u32,
        InOut<f32>,
        InOut<u32>,
    );

    #[inline(always)]
    unsafe fn run<B: Block>(
        launch: &mut Launch<'_, B>,
        (mesh, geometry, edges, criterion, edge_count, cost, marks): Self::Params,
    ) {
        let s = Arrays::new(mesh, geometry);
        let (start, end) = chunk(launch.block_idx, edge_count);
        launch.block.for_each(end - start, |k| {
            let e = start + k;
            let (a, b) = (edges.get(2 * e), edges.get(2 * e + 1));
            match criterion.cost(&s, a, b) {
                Some(c) => {
                    cost.set(e, c as f32);
                    marks.set(e, 1);
                }
                None => cost.set(e, f32::INFINITY),
            }
        });
    }
}

// SAFETY: the body reads and writes its arrays only through their checked
// views; each edge writes its own words.
unsafe impl<C: CriterionKernels> CheckedKernel for CostsOf<C> {}

/// The settings of [`CandidatesOf`].
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct CandidateSettings {
    /// The trial's bounds.
    pub trial: Trial,
    /// `ε_R` of the sharp edges.
    pub epsilon_r: f64,
    /// The candidates.
    pub edges: u32,
    /// Padding.
    pub pad: u32,
}

/// For each of the `settings.edges` candidates (their edge indices in
/// `list`): whether its collapse is admissible
/// (`crate::collapse::check`); if so the collapse goes into `collapse`
/// (five words per edge: kept vertex, removed vertex, the position's three
/// coordinates' bits) and `value` (the kept vertex's field value), else its
/// `cost` becomes `f32::INFINITY`. Parameters: `(mesh, geometry, [faces,
/// class, edges, list, edge offsets], settings, criterion, cost,
/// collapse, value)`.
pub struct CandidatesOf<C>(PhantomData<fn() -> C>);

/// The parameters of [`CandidatesOf`].
pub type CandidatesParams<C> = (
    Ins<u32, 4>,
    Ins<f32, 2>,
    Ins<u32, 5>,
    CandidateSettings,
    C,
    InOut<f32>,
    InOut<u32>,
    InOut<f32>,
);

// SAFETY: `C::CANDIDATES` is this kernel's entry (`CriterionKernels`).
unsafe impl<C: CriterionKernels> Kernel for CandidatesOf<C> {
    const NAME: &'static str = C::CANDIDATES;
    const BOUNDS: LaunchBounds = crate::BOUNDS;
    const HOST_ZEROED_SHARED: bool = false;
    type Params = CandidatesParams<C>;

    #[inline(always)]
    unsafe fn run<B: Block>(
        launch: &mut Launch<'_, B>,
        (mesh, geometry, aux, settings, criterion, cost, collapse, value): Self::Params,
    ) {
        let [faces, class, edges, list, edge_offsets] = *aux;
        let s = Arrays::new(mesh, geometry)
            .with_faces(faces)
            .with_edges(edge_offsets, edges);
        let (start, end) = chunk(launch.block_idx, settings.edges);
        launch.block.for_each(end - start, |k| {
            let e = list.get(start + k);
            let (a, b) = (edges.get(2 * e), edges.get(2 * e + 1));
            let sharp = s.on_boundary(a)
                && s.on_boundary(b)
                && is_sharp(&s, faces, a, b, settings.epsilon_r);
            let (ca, cb) = (class.get(a), class.get(b));
            match check(&s, &criterion, a, b, ca, cb, sharp, settings.trial) {
                Some(done) => {
                    collapse.set(5 * e, done.keep);
                    collapse.set(5 * e + 1, done.remove);
                    for (i, p) in (2..).zip(done.position) {
                        collapse.set(5 * e + i, p.to_bits());
                    }
                    value.set(e, done.value as f32);
                }
                None => cost.set(e, f32::INFINITY),
            }
        });
    }
}

// SAFETY: the body reads and writes its arrays only through their checked
// views; each candidate writes its own words (the list names each edge
// once).
unsafe impl<C: CriterionKernels> CheckedKernel for CandidatesOf<C> {}

/// Declares criteria's collapse kernels: for each type (a [`Criterion`],
/// plain `repr(C)` data, `bytemuck::Pod` on the host), the
/// [`CriterionKernels`](crate::iteration::CriterionKernels) implementation
/// and, on `nvptx64`, the entry points `CRATE_CostsName` and
/// `CRATE_CandidatesName` of [`CostsOf`](crate::iteration::CostsOf) and
/// [`CandidatesOf`](crate::iteration::CandidatesOf). A user's kernel crate
/// depends on this crate without its default `core-entries` feature, so
/// that its PTX holds its own kernels only.
#[macro_export]
macro_rules! criterion_kernels {
    (@core $($c:ident),+ $(,)?) => {
        $crate::criterion_kernels!(
            @declare [all(target_arch = "nvptx64", feature = "core-entries")] $($c),+
        );
    };
    ($($c:ident),+ $(,)?) => {
        $crate::criterion_kernels!(@declare [target_arch = "nvptx64"] $($c),+);
    };
    (@declare [$cfg:meta] $($c:ident),+) => {$(
        // SAFETY: the entry points below run these kernels for this type.
        unsafe impl $crate::iteration::CriterionKernels for $c {
            const COSTS: &'static str =
                ::cavity_device::kernel!(@name concat!("Costs", stringify!($c)));
            const CANDIDATES: &'static str =
                ::cavity_device::kernel!(@name concat!("Candidates", stringify!($c)));
        }

        ::cavity_device::kernel!(
            @entry [$cfg] ::cavity_device::kernel!(@name concat!("Costs", stringify!($c))),
            $crate::iteration::CostsOf<$c>,
            (
                mesh: ::cavity_device::array::Ins<u32, 4>,
                geometry: ::cavity_device::array::Ins<f32, 2>,
                edges: ::cavity_device::array::In<u32>,
                criterion: $c,
                edge_count: u32,
                cost: ::cavity_device::array::InOut<f32>,
                marks: ::cavity_device::array::InOut<u32>
            )
        );

        ::cavity_device::kernel!(
            @entry [$cfg] ::cavity_device::kernel!(@name concat!("Candidates", stringify!($c))),
            $crate::iteration::CandidatesOf<$c>,
            (
                mesh: ::cavity_device::array::Ins<u32, 4>,
                geometry: ::cavity_device::array::Ins<f32, 2>,
                aux: ::cavity_device::array::Ins<u32, 5>,
                settings: $crate::iteration::CandidateSettings,
                criterion: $c,
                cost: ::cavity_device::array::InOut<f32>,
                collapse: ::cavity_device::array::InOut<u32>,
                value: ::cavity_device::array::InOut<f32>
            )
        );
    )+};
}

crate::criterion_kernels!(@core Builtin);

/// Whether candidate `f` (cost `cf`) beats candidate `e` (cost `ce`):
/// cheaper, ties to the lower index.
#[inline(always)]
fn beats(cf: f32, f: u32, ce: f32, e: u32) -> bool {
    cf < ce || (cf == ce && f < e)
}

/// `x`'s bits as a key whose unsigned order is the order of the floats
/// (negative ones complemented, the others with the sign bit set; `-0.0`
/// taken as `0.0`, which it equals).
#[inline(always)]
pub fn ordered(x: f32) -> u32 {
    let b = if x == 0.0 { 0 } else { x.to_bits() };
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// An admissible candidate's key in the first pass's atomic minima: its
/// complemented ordered cost ([`ordered`]), or `None` for an inadmissible
/// one (infinite cost) and a cost that is not a number. Never 0, the
/// arrays' start.
#[inline(always)]
fn first_pass_key(cost: f32) -> Option<u32> {
    (cost < f32::INFINITY).then(|| !ordered(cost))
}

cavity_device::kernel! {
    @core
    /// The first conflict pass (section 3.3), step 1 of 3: each admissible
    /// candidate of `list` (finite `cost`) raises `vertex_cost` (zero at
    /// the start) at both endpoints to its key ([`first_pass_key`]), so
    /// that each vertex holds the key of the least cost of the candidates
    /// around it.
    /// `aux` is `[edges, list]`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; the maxima are atomic.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel VertexCosts(
        launch,
        aux: Ins<u32, 2>,
        cost: In<f32>,
        candidates: u32,
        vertex_cost: InOut<u32>,
    ) {
        let [edges, list] = *aux;
        let (start, end) = chunk(launch.block_idx, candidates);
        launch.block.for_each(end - start, |k| {
            let e = list.get(start + k);
            if let Some(key) = first_pass_key(cost.get(e)) {
                vertex_cost.fetch_max(edges.get(2 * e), key);
                vertex_cost.fetch_max(edges.get(2 * e + 1), key);
            }
        });
    }
}

cavity_device::kernel! {
    @core
    /// Step 2: each admissible candidate whose key is the least at an
    /// endpoint (`vertex_cost`) raises `vertex_index` there (zero at the
    /// start) to its complemented index: ties go to the lower index.
    /// `aux` is `[edges, list, vertex_cost]`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; the maxima are atomic.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel VertexIndices(
        launch,
        aux: Ins<u32, 3>,
        cost: In<f32>,
        candidates: u32,
        vertex_index: InOut<u32>,
    ) {
        let [edges, list, vertex_cost] = *aux;
        let (start, end) = chunk(launch.block_idx, candidates);
        launch.block.for_each(end - start, |k| {
            let e = list.get(start + k);
            let Some(key) = first_pass_key(cost.get(e)) else {
                return;
            };
            for v in [edges.get(2 * e), edges.get(2 * e + 1)] {
                if vertex_cost.get(v) == key {
                    vertex_index.fetch_max(v, !e);
                }
            }
        });
    }
}

cavity_device::kernel! {
    @core
    /// Step 3: an admissible candidate wins when it is the least at both
    /// endpoints (key and index): no candidate among the edges at either
    /// endpoint beats it (cheaper, ties to the lower index). A winner
    /// writes [`UNDECIDED`] to `won[e]` (its state in the second pass) and
    /// `e + 1` into `affected` at both endpoints (`vertAffectedByEdge`, 0
    /// for none; two winners never share a vertex). The minima over the
    /// edges at a vertex take two atomic passes ([`VertexCosts`],
    /// [`VertexIndices`]) rather than a search of every edge around both
    /// endpoints. `aux` is `[edges, list, vertex_cost, vertex_index]`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; a winner's words are written by
    /// its thread alone (no other winner touches its vertices).
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel Winners(
        launch,
        aux: Ins<u32, 4>,
        cost: In<f32>,
        candidates: u32,
        won: InOut<u32>,
        affected: InOut<u32>,
    ) {
        let [edges, list, vertex_cost, vertex_index] = *aux;
        let (start, end) = chunk(launch.block_idx, candidates);
        launch.block.for_each(end - start, |k| {
            let e = list.get(start + k);
            let Some(key) = first_pass_key(cost.get(e)) else {
                return;
            };
            let (a, b) = (edges.get(2 * e), edges.get(2 * e + 1));
            let least = |v: u32| vertex_cost.get(v) == key && vertex_index.get(v) == !e;
            if least(a) && least(b) {
                won.set(e, UNDECIDED);
                affected.set(a, e + 1);
                affected.set(b, e + 1);
            }
        });
    }
}

/// A first-pass winner not yet decided by the second pass ([`Decide`]).
pub const UNDECIDED: u32 = 1;
/// A winner that collapses.
pub const COLLAPSES: u32 = 2;

cavity_device::kernel! {
    @core
    /// One round of the second conflict pass (section 3.3): each
    /// tetrahedron whose vertices record two or more winning edges
    /// (`affected`: the edge plus one, 0 for none) that are not out
    /// (`state`: [`UNDECIDED`] or [`COLLAPSES`]) keeps one. Beside an edge
    /// that collapses, every undecided one is out (`beaten[e] = 2`); else
    /// the cheapest undecided stays (ties to the lower index) and the
    /// others are beaten this round (`beaten[e] = 1`).
    ///
    /// The paper resolves each tetrahedron once, so an edge beaten by one
    /// that another tetrahedron then rejects is lost too; the rounds
    /// ([`Decide`]) keep such an edge for the next round, which makes the
    /// collapsing edges a maximal set of winners no two of which share a
    /// tetrahedron.
    ///
    /// # Safety
    /// Checked: the inputs are only read; `beaten` is written atomically
    /// (by `fetch_or`, so that an out mark is never lost).
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel TetConflicts(
        launch,
        tet_vertices: In<u32>,
        tets: u32,
        affected: In<u32>,
        cost: In<f32>,
        state: In<u32>,
        beaten: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, tets);
        launch.block.for_each(end - start, |k| {
            let t = start + k;
            let mut edges = [u32::MAX; 4];
            let mut n = 0;
            let mut collapsing = false;
            for i in 0..4 {
                let Some(e) = affected.get(tet_vertices.get(4 * t + i)).checked_sub(1) else {
                    continue;
                };
                let st = state.get(e);
                if st == COLLAPSES {
                    collapsing = true;
                }
                if st == UNDECIDED && !edges.contains(&e) {
                    edges[n] = e;
                    n += 1;
                }
            }
            if n == 0 || (n == 1 && !collapsing) {
                return;
            }
            let mut best = edges[0];
            for &e in &edges[1..n] {
                if beats(cost.get(e), e, cost.get(best), best) {
                    best = e;
                }
            }
            for &e in &edges[..n] {
                if collapsing {
                    beaten.fetch_or(e, 2);
                } else if e != best {
                    beaten.fetch_or(e, 1);
                }
            }
        });
    }
}

cavity_device::kernel! {
    @core
    /// Ends a round of [`TetConflicts`]: an undecided edge beside a
    /// collapsing one is out (state 0), one beaten by none collapses
    /// ([`COLLAPSES`]), one beaten by an undecided edge stays undecided
    /// and is counted in `undecided[0]`; `beaten` is cleared for the next
    /// round; over the `candidates` edges of `list`.
    ///
    /// # Safety
    /// Checked: each edge writes its own words (the list names each edge
    /// once); the count is an atomic add.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel Decide(
        launch,
        list: In<u32>,
        candidates: u32,
        state: InOut<u32>,
        beaten: InOut<u32>,
        undecided: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, candidates);
        launch.block.for_each(end - start, |k| {
            let e = list.get(start + k);
            if state.get(e) != UNDECIDED {
                return;
            }
            let b = beaten.get(e);
            if b & 2 != 0 {
                state.set(e, 0);
            } else if b == 0 {
                state.set(e, COLLAPSES);
            } else {
                undecided.fetch_add(0, 1);
            }
            beaten.set(e, 0);
        });
    }
}

cavity_device::kernel! {
    @core
    /// Marks the removed vertex of each collapsing edge among the
    /// `candidates` of `list` (`state` [`COLLAPSES`]) with 1 in `removed` (zero at the start; `vertices +
    /// 1` words, the last for the scan's total).
    ///
    /// # Safety
    /// Checked: the inputs are only read; no two collapsing edges share a
    /// vertex, so each mark has one writer.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel Settle(
        launch,
        state: In<u32>,
        collapse: In<u32>,
        list: In<u32>,
        candidates: u32,
        removed: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, candidates);
        launch.block.for_each(end - start, |k| {
            let e = list.get(start + k);
            if state.get(e) == COLLAPSES {
                removed.set(collapse.get(5 * e + 1), 1);
            }
        });
    }
}

cavity_device::kernel! {
    @core
    /// Marks with 1 in `tet_removed` (`tets + 1` words, zero at the start)
    /// the tetrahedra that collapse: those with both endpoints of a
    /// collapsing edge (`affected` at a vertex, `won`).
    ///
    /// # Safety
    /// Checked: the inputs are only read; each tetrahedron writes its own
    /// mark.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel RemoveTets(
        launch,
        tet_vertices: In<u32>,
        tets: u32,
        affected: In<u32>,
        won: In<u32>,
        collapse: In<u32>,
        tet_removed: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, tets);
        launch.block.for_each(end - start, |k| {
            let t = start + k;
            let c = [0, 1, 2, 3].map(|i| tet_vertices.get(4 * t + i));
            for v in c {
                if let Some(e) = affected.get(v).checked_sub(1)
                    && won.get(e) == COLLAPSES
                    && has(c, collapse.get(5 * e))
                    && has(c, collapse.get(5 * e + 1))
                {
                    tet_removed.set(t, 1);
                }
            }
        });
    }
}

cavity_device::kernel! {
    @core
    /// Numbers the vertices after the collapses: with `scan` the exclusive
    /// scan of the removal marks (`vertices + 1` words), a kept vertex `v`
    /// takes `v - scan[v]` in `map`, and its position (and field value)
    /// moves to that place in `new_positions` (`new_values`), the
    /// collapse's position where it is a collapse's kept vertex; a removed
    /// vertex takes its kept partner's number. Its class moves with it
    /// into `new_class`. `state` is `[scan, affected, won, collapse,
    /// class]`, `geometry` `[positions, values, the collapses' values]`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each vertex writes its own
    /// number and its own new place (the kept vertices' places are
    /// distinct).
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel Remap(
        launch,
        state: Ins<u32, 5>,
        geometry: Ins<f32, 3>,
        vertices: u32,
        map: InOut<u32>,
        new_positions: InOut<f32>,
        new_values: InOut<f32>,
        new_class: InOut<u32>,
    ) {
        let [scan, affected, won, collapse, class] = *state;
        let [positions, values, value] = *geometry;
        let (start, end) = chunk(launch.block_idx, vertices);
        launch.block.for_each(end - start, |k| {
            let v = start + k;
            let edge = affected.get(v).checked_sub(1).filter(|&e| won.get(e) == COLLAPSES);
            if scan.get(v + 1) != scan.get(v) {
                let keep = edge.map_or(v, |e| collapse.get(5 * e));
                map.set(v, keep - scan.get(keep));
                return;
            }
            let at = v - scan.get(v);
            map.set(v, at);
            new_class.set(at, class.get(v));
            for i in 0..3 {
                let p = match edge {
                    Some(e) => f32::from_bits(collapse.get(5 * e + 2 + i)),
                    None => positions.get(3 * v + i),
                };
                new_positions.set(3 * at + i, p);
            }
            if !values.is_empty() {
                new_values.set(at, edge.map_or_else(|| values.get(v), |e| value.get(e)));
            }
        });
    }
}

cavity_device::kernel! {
    @core
    /// Writes each surviving tetrahedron (`scan`, the exclusive scan of
    /// the removal marks, `tets + 1` words: `t` survives when
    /// `scan[t + 1] = scan[t]`, at place `t - scan[t]`) with its vertices
    /// renumbered by `map` into `new_tets`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each surviving tetrahedron
    /// writes its own place.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel CompactTets(
        launch,
        tet_vertices: In<u32>,
        tets: u32,
        marks: Ins<u32, 2>,
        new_tets: InOut<u32>,
    ) {
        let [scan, map] = *marks;
        let (start, end) = chunk(launch.block_idx, tets);
        launch.block.for_each(end - start, |k| {
            let t = start + k;
            if scan.get(t + 1) != scan.get(t) {
                return;
            }
            let at = t - scan.get(t);
            for i in 0..4 {
                new_tets.set(4 * at + i, map.get(tet_vertices.get(4 * t + i)));
            }
        });
    }
}
