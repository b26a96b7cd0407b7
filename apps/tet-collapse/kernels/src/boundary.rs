//! Boundary preservation (section 3.1): the boundary vertices' classes
//! and the boundary predicate `Q`.
//!
//! **Classes.** A boundary vertex is a *face* vertex when the unit normals
//! of its boundary triangles differ pairwise by at most `ε_F`
//! (`n_i · n_j ≥ 1 - ε_F`); a *ridge* vertex when exactly two of its
//! boundary edges are *sharp* (their two boundary triangles' normals
//! differ by more than `ε_R`); a *corner* otherwise. The paper uses
//! `ε_F = 0.01` and `ε_R = 0.1` ([`EPSILON_F`], [`EPSILON_R`]).
//!
//! **The predicate** ([`boundary_rule`]): an edge between two interior
//! vertices collapses anywhere the criterion places it; an edge from an
//! interior vertex to a boundary vertex collapses onto the boundary
//! vertex, which stays; an interior edge joining two boundary vertices
//! never collapses (it would pinch the domain: section 3.1's advice);
//! along a boundary edge the more constrained vertex stays (corner over
//! ridge over face), two ridge vertices collapse only along a sharp edge
//! (along the ridge), and two corners never collapse. Corners therefore
//! never move, and a ridge vertex moves only along its ridge.

/// The class of a vertex off the boundary.
pub const INTERIOR: u32 = 0;
/// The class of a boundary vertex on a flat part of the boundary.
pub const FACE: u32 = 1;
/// The class of a boundary vertex on a ridge (two sharp edges).
pub const RIDGE: u32 = 2;
/// The class of any other boundary vertex: it never moves.
pub const CORNER: u32 = 3;

/// The paper's `ε_F`: how far the normals around a face vertex may differ
/// (`1 - n_i · n_j`).
pub const EPSILON_F: f64 = 0.01;
/// The paper's `ε_R`: how far the normals across a sharp edge differ at
/// least.
pub const EPSILON_R: f64 = 0.1;

/// Which endpoint of a collapsing edge `(a, b)` must stay where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Neither: the criterion places the kept vertex.
    Either,
    /// `a` stays (at its position); `b` is removed.
    A,
    /// `b` stays; `a` is removed.
    B,
}

/// The boundary predicate for edge `(a, b)` with classes `class_a` and
/// `class_b`: `None` when the edge must not collapse, else which endpoint
/// stays (module documentation). `boundary_edge`: whether `ab` is an edge
/// of a boundary triangle; `sharp`: whether it is a sharp edge.
#[inline(always)]
pub fn boundary_rule(class_a: u32, class_b: u32, boundary_edge: bool, sharp: bool) -> Option<Keep> {
    match (class_a, class_b) {
        (INTERIOR, INTERIOR) => Some(Keep::Either),
        (INTERIOR, _) => Some(Keep::B),
        (_, INTERIOR) => Some(Keep::A),
        _ if !boundary_edge => None,
        (CORNER, CORNER) => None,
        (RIDGE, RIDGE) if sharp => Some(Keep::Either),
        (RIDGE, RIDGE) => None,
        (CORNER, RIDGE) | (RIDGE, CORNER) if !sharp => None,
        (FACE, FACE) => Some(Keep::Either),
        _ if class_a > class_b => Some(Keep::A),
        _ => Some(Keep::B),
    }
}

/// The class of a boundary vertex from the unit normals of its boundary
/// triangles (`normals`, `count` of them) and the number of its sharp
/// boundary edges (module documentation); [`INTERIOR`] without triangles.
#[inline(always)]
pub fn classify(normals: &[[f64; 3]], count: usize, sharp_edges: u32, epsilon_f: f64) -> u32 {
    if count == 0 {
        return INTERIOR;
    }
    let mut flat = true;
    let mut i = 0;
    while i < count {
        let mut j = i + 1;
        while j < count {
            let (n, m) = (normals[i], normals[j]);
            if n[0] * m[0] + n[1] * m[1] + n[2] * m[2] < 1.0 - epsilon_f {
                flat = false;
            }
            j += 1;
        }
        i += 1;
    }
    if flat {
        FACE
    } else if sharp_edges == 2 {
        RIDGE
    } else {
        CORNER
    }
}
