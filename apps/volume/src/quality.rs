//! Cell quality and validity, on the host in parallel (rayon): the scaled
//! Jacobian of every cell type, the dihedral angles of tetrahedra, and
//! [`keep_valid`], the relaxation that keeps Catmull-Clark subdivision
//! ([`crate::subdivide`], issue 52) and Laplacian smoothing
//! ([`crate::boundary`]) from inverting cells.
//!
//! **Scaled Jacobian** (Knupp et al., "The Verdict Geometric Quality
//! Library", SAND2007-1751, the hexahedral and tetrahedral scaled
//! Jacobians): at a corner of a cell where three edges meet, the
//! determinant of the three edge vectors from the corner, each scaled to
//! unit length, taken in the order that makes it positive for a cell
//! whose faces face out; the cell's scaled Jacobian is the minimum over
//! its corners (in `[-1, 1]`; 1 at every corner of a cube, 0 for a flat
//! corner or a zero-length edge). At a corner of `k > 3` edges (a
//! pyramid's apex, the cell of a subdivided pyramid at its apex) the
//! edges are taken in their cyclic order around the corner (each
//! consecutive pair spans one of the cell's faces) and every three
//! consecutive ones give a determinant. A cell is **inverted** when its
//! scaled Jacobian is not positive (or not a number): a flat corner counts.
//!
//! **Keeping cells valid** ([`keep_valid`]): given positions `from` at
//! which the cells are valid and the positions `to` a rule asks for, each
//! vertex of a cell that is bad at the current positions (inverted, or
//! with a scaled Jacobian below `min(floor, its value at from)` for a
//! positive `floor`) has its step halved, `from + t (to - from)` with
//! `t = 1, 1/2, ..., 1/16`, and then set to `0` (the vertex stays at
//! `from`); the cells are checked again and the rounds repeat while a bad
//! cell has a vertex not yet at `from`. Every round moves at least one
//! vertex one step closer to `from`, and each vertex takes at most
//! [`HALVINGS`] steps, so it ends after at most `HALVINGS × vertices`
//! rounds (a few in practice); at the end every bad cell lies at its
//! `from` positions, where it is not bad unless it was inverted there, so
//! no cell is inverted that is valid at `from`, and none lost quality
//! below `min(floor, its quality at from)`.

use rayon::prelude::*;

use crate::mesh::CellVertices;

/// Steps of halving before a vertex is put back at its `from` position
/// (`t = 1/2, ..., 1/16`, then 0).
pub const HALVINGS: u8 = 5;

/// Cells whose scaled Jacobian is at most this are called flat by
/// [`Quality::flat`] (a corner within about 1e-4 degrees of a plane).
pub const FLAT: f64 = 1e-6;

/// Each corner of a tetrahedron and its three neighbours, in the order of
/// a positive determinant for the type's vertex order
/// ([`crate::CellType`]).
const TET_CORNERS: [[usize; 4]; 4] = [[0, 1, 2, 3], [1, 2, 0, 3], [2, 0, 1, 3], [3, 0, 2, 1]];
/// A hexahedron's corners.
const HEX_CORNERS: [[usize; 4]; 8] = [
    [0, 1, 3, 4],
    [1, 2, 0, 5],
    [2, 3, 1, 6],
    [3, 0, 2, 7],
    [4, 7, 5, 0],
    [5, 4, 6, 1],
    [6, 5, 7, 2],
    [7, 6, 4, 3],
];
/// A prism's corners.
const PRISM_CORNERS: [[usize; 4]; 6] = [
    [0, 1, 2, 3],
    [1, 2, 0, 4],
    [2, 0, 1, 5],
    [3, 5, 4, 0],
    [4, 3, 5, 1],
    [5, 4, 3, 2],
];
/// A pyramid's base corners, then its apex's four consecutive triples.
const PYRAMID_CORNERS: [[usize; 4]; 8] = [
    [0, 1, 3, 4],
    [1, 2, 0, 4],
    [2, 3, 1, 4],
    [3, 0, 2, 4],
    [4, 1, 0, 3],
    [4, 0, 3, 2],
    [4, 3, 2, 1],
    [4, 2, 1, 0],
];

/// `det(â, b̂, ĉ)` of the edges from `v` to `a`, `b` and `c`, each scaled
/// to unit length (0 when one has no length), in `f64`.
fn corner(p: &[[f32; 3]], [v, a, b, c]: [u32; 4]) -> f64 {
    let at = |i: u32| p[i as usize].map(f64::from);
    let o = at(v);
    let unit = |i: u32| {
        let q = at(i);
        let d = [q[0] - o[0], q[1] - o[1], q[2] - o[2]];
        let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        if n > 0.0 { d.map(|x| x / n) } else { [0.0; 3] }
    };
    let [x, y, z] = [unit(a), unit(b), unit(c)];
    x[0] * (y[1] * z[2] - y[2] * z[1]) - x[1] * (y[0] * z[2] - y[2] * z[0])
        + x[2] * (y[0] * z[1] - y[1] * z[0])
}

/// Calls `visit` with each corner triple of `cell` (the corner, then three
/// consecutive neighbours around it), global vertices.
fn for_each_corner(cell: &CellVertices, mut visit: impl FnMut([u32; 4])) {
    fn table(v: &[u32], corners: &[[usize; 4]], visit: &mut impl FnMut([u32; 4])) {
        for c in corners {
            visit(c.map(|i| v[i]));
        }
    }
    match cell {
        CellVertices::Tetrahedron(v) => table(v, &TET_CORNERS, &mut visit),
        CellVertices::Hexahedron(v) => table(v, &HEX_CORNERS, &mut visit),
        CellVertices::Prism(v) => table(v, &PRISM_CORNERS, &mut visit),
        CellVertices::Pyramid(v) => table(v, &PYRAMID_CORNERS, &mut visit),
        CellVertices::Polyhedron(faces) => polyhedron_corners(faces, visit),
    }
}

/// The corner triples of a polyhedron given by its outward face loops:
/// at each vertex, each face's loop runs from its predecessor to its
/// successor there, and chaining those pairs gives the cyclic order of
/// the vertex's edges (the order of a positive determinant).
fn polyhedron_corners(faces: &[Vec<u32>], mut visit: impl FnMut([u32; 4])) {
    // (vertex, predecessor, successor) of every corner of every face.
    let mut wedges: Vec<[u32; 3]> = Vec::new();
    for f in faces {
        let n = f.len();
        for i in 0..n {
            wedges.push([f[i], f[(i + n - 1) % n], f[(i + 1) % n]]);
        }
    }
    wedges.sort_unstable();
    let mut start = 0;
    while start < wedges.len() {
        let v = wedges[start][0];
        let end = start + wedges[start..].iter().take_while(|w| w[0] == v).count();
        let around = &wedges[start..end];
        // The cycle of neighbours: from a predecessor to its successor.
        let mut cycle = vec![around[0][1]];
        while cycle.len() < around.len() {
            let last = *cycle.last().unwrap_or(&v);
            match around.iter().find(|w| w[1] == last) {
                Some(w) if !cycle.contains(&w[2]) => cycle.push(w[2]),
                // Not one cycle (a non-manifold corner): no triple more.
                _ => break,
            }
        }
        let k = cycle.len();
        if k >= 3 {
            for i in 0..k {
                visit([v, cycle[i], cycle[(i + 1) % k], cycle[(i + 2) % k]]);
            }
        }
        start = end;
    }
}

/// The scaled Jacobian of `cell` at `positions` (see the
/// [module](self)): the minimum over its corners, in `[-1, 1]`; not
/// positive for an inverted or flat cell.
pub fn scaled_jacobian(cell: &CellVertices, positions: &[[f32; 3]]) -> f64 {
    let mut least = f64::INFINITY;
    for_each_corner(cell, |c| {
        let j = corner(positions, c);
        // NaN (a non-finite position) makes the cell inverted.
        least = if j.is_nan() { f64::NAN } else { least.min(j) };
    });
    least
}

/// Whether `cell` is inverted at `positions`: its scaled Jacobian is not
/// positive.
pub fn is_inverted(cell: &CellVertices, positions: &[[f32; 3]]) -> bool {
    at_most(scaled_jacobian(cell, positions), 0.0)
}

/// `j <= x`, or `j` is not a number (a non-finite position).
fn at_most(j: f64, x: f64) -> bool {
    j.is_nan() || j <= x
}

/// The smallest dihedral angle of tetrahedron `t`, in degrees: at each of
/// its six edges, the angle between its two faces there, measured inside
/// (0 for a flat tetrahedron).
pub fn min_dihedral_angle(t: [u32; 4], positions: &[[f32; 3]]) -> f64 {
    let p = |i: u32| positions[i as usize].map(f64::from);
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let cross = |u: [f64; 3], v: [f64; 3]| {
        [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ]
    };
    let dot = |u: [f64; 3], v: [f64; 3]| u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    let mut least = f64::INFINITY;
    for (a, b, c, d) in [
        (0, 1, 2, 3),
        (0, 2, 1, 3),
        (0, 3, 1, 2),
        (1, 2, 0, 3),
        (1, 3, 0, 2),
        (2, 3, 0, 1),
    ] {
        let (a, b, c, d) = (p(t[a]), p(t[b]), p(t[c]), p(t[d]));
        let e = sub(b, a);
        // The normals of the faces (a, b, c) and (a, b, d): the angle
        // between them is the one between the faces' half-planes.
        let (n, m) = (cross(e, sub(c, a)), cross(e, sub(d, a)));
        let angle = dot(cross(n, m), cross(n, m)).sqrt().atan2(dot(n, m));
        least = least.min(angle.to_degrees());
    }
    least
}

/// The quality of a mesh's cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quality {
    /// Cells checked.
    pub cells: usize,
    /// Cells whose scaled Jacobian is not positive.
    pub inverted: usize,
    /// The first of them, in cell order.
    pub first_inverted: Option<usize>,
    /// Cells whose scaled Jacobian is at most [`FLAT`] (the inverted ones
    /// included).
    pub flat: usize,
    /// The first of them, in cell order.
    pub first_flat: Option<usize>,
    /// The smallest scaled Jacobian (`+inf` without cells, NaN where a
    /// position is not finite).
    pub min_scaled_jacobian: f64,
    /// The smallest dihedral angle of the tetrahedra, degrees (`None`
    /// without tetrahedra).
    pub min_dihedral_angle: Option<f64>,
}

/// The [`Quality`] of `cells` at `positions`, in parallel.
pub fn quality(cells: &[CellVertices], positions: &[[f32; 3]]) -> Quality {
    let per_cell: Vec<(f64, Option<f64>)> = cells
        .par_iter()
        .map(|c| {
            let dihedral = match c {
                CellVertices::Tetrahedron(t) => Some(min_dihedral_angle(*t, positions)),
                _ => None,
            };
            (scaled_jacobian(c, positions), dihedral)
        })
        .collect();
    let bad = |j: f64| at_most(j, 0.0);
    let flat = |j: f64| at_most(j, FLAT);
    Quality {
        cells: cells.len(),
        inverted: per_cell.par_iter().filter(|x| bad(x.0)).count(),
        first_inverted: per_cell.par_iter().position_first(|x| bad(x.0)),
        flat: per_cell.par_iter().filter(|x| flat(x.0)).count(),
        first_flat: per_cell.par_iter().position_first(|x| flat(x.0)),
        min_scaled_jacobian: per_cell.par_iter().map(|x| x.0).reduce(
            || f64::INFINITY,
            |a, b| {
                if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else {
                    a.min(b)
                }
            },
        ),
        min_dihedral_angle: per_cell
            .par_iter()
            .filter_map(|x| x.1)
            .reduce_with(f64::min),
    }
}

/// Whether a mesh operation may invert cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Validity {
    /// Where the operation's rule would invert a cell, its vertices move
    /// only part of the way, or not at all ([`keep_valid`]): no cell is
    /// inverted that is valid at the fallback positions.
    #[default]
    Keep,
    /// The plain rule everywhere: cells may invert (counted and reported).
    Plain,
}

/// What [`keep_valid`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Relaxation {
    /// Cells inverted at the positions the rule asked for.
    pub plain_inverted: usize,
    /// Vertices moved less than the rule asked.
    pub relaxed_vertices: usize,
    /// Of them, vertices left at their fallback positions.
    pub fallback_vertices: usize,
    /// Rounds of checking and halving.
    pub rounds: u32,
}

/// `from + t (to - from)` for halving step `level` (`t = 2^-level`; `to`
/// itself at 0, `from` from [`HALVINGS`] on).
fn blend(from: [f32; 3], to: [f32; 3], level: u8) -> [f32; 3] {
    match level {
        0 => to,
        l if l >= HALVINGS => from,
        l => {
            let t = 0.5f32.powi(i32::from(l));
            std::array::from_fn(|k| from[k] + t * (to[k] - from[k]))
        }
    }
}

/// Calls `visit` with each vertex `cell` names (a polyhedron's more than
/// once).
fn for_each_vertex(cell: &CellVertices, mut visit: impl FnMut(u32)) {
    match cell {
        CellVertices::Tetrahedron(v) => v.iter().copied().for_each(visit),
        CellVertices::Hexahedron(v) => v.iter().copied().for_each(visit),
        CellVertices::Prism(v) => v.iter().copied().for_each(visit),
        CellVertices::Pyramid(v) => v.iter().copied().for_each(visit),
        CellVertices::Polyhedron(faces) => faces.iter().flatten().for_each(|&v| visit(v)),
    }
}

/// The positions `to` asks for, each vertex of a bad cell moved only part
/// of the way from `from` (see the [module](self)): the result has no
/// inverted cell that is valid at `from`, and with a positive `floor` no
/// cell whose scaled Jacobian fell below `min(floor, its value at from)`.
/// `from` and `to` hold a position per vertex; vertices no cell names
/// keep `to`.
///
/// # Panics
/// When `from` and `to` differ in length or a cell names a vertex past
/// them (the cells of a mesh of these vertices never do).
pub fn keep_valid(
    cells: &[CellVertices],
    from: &[[f32; 3]],
    to: &[[f32; 3]],
    floor: f64,
) -> (Vec<[f32; 3]>, Relaxation) {
    assert_eq!(from.len(), to.len(), "a fallback position per vertex");
    // The least scaled Jacobian each cell may have: 0 (exclusive) without
    // a floor, else the floor or its value at `from`, the smaller.
    let least: Vec<f64> = if floor > 0.0 {
        cells
            .par_iter()
            .map(|c| floor.min(scaled_jacobian(c, from)))
            .collect()
    } else {
        Vec::new()
    };
    let bad = |i: usize, c: &CellVertices, p: &[[f32; 3]]| {
        let j = scaled_jacobian(c, p);
        at_most(j, 0.0) || least.get(i).is_some_and(|&l| j < l)
    };
    let mut positions = to.to_vec();
    let mut level = vec![0u8; to.len()];
    // Vertices moved in the last round: only their cells can have changed.
    let mut moved = vec![true; to.len()];
    let mut report = Relaxation::default();
    loop {
        let inverted: Vec<usize> = cells
            .par_iter()
            .enumerate()
            .filter(|(i, c)| {
                let mut touched = false;
                for_each_vertex(c, |v| touched |= moved[v as usize]);
                touched && bad(*i, c, &positions)
            })
            .map(|(i, _)| i)
            .collect();
        if report.rounds == 0 {
            report.plain_inverted = if floor > 0.0 {
                inverted
                    .par_iter()
                    .filter(|&&c| is_inverted(&cells[c], &positions))
                    .count()
            } else {
                inverted.len()
            };
        }
        let mut raise: Vec<u32> = inverted
            .par_iter()
            .flat_map_iter(|&c| {
                let mut vs = Vec::with_capacity(8);
                for_each_vertex(&cells[c], |v| vs.push(v));
                vs
            })
            .filter(|&v| level[v as usize] < HALVINGS && from[v as usize] != to[v as usize])
            .collect();
        raise.par_sort_unstable();
        raise.dedup();
        moved.par_iter_mut().for_each(|m| *m = false);
        if raise.is_empty() {
            break;
        }
        for &v in &raise {
            let v = v as usize;
            level[v] += 1;
            positions[v] = blend(from[v], to[v], level[v]);
            moved[v] = true;
        }
        report.rounds += 1;
    }
    report.relaxed_vertices = level.par_iter().filter(|&&l| l > 0).count();
    report.fallback_vertices = level.par_iter().filter(|&&l| l >= HALVINGS).count();
    (positions, report)
}
