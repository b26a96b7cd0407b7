//! Polygons as vertex lists, what the writers take ([`Polygons`]): from a
//! [`Polylla`] result by walking its links ([`PolygonLists::of`]), or
//! gathered on the device ([`crate::device::polygon_lists`]), which copies
//! back the lists alone.

use std::borrow::Cow;

use cavity::QueryResult;
use rayon::prelude::*;

use crate::halfedge::HalfEdges;
use crate::sequential::Polylla;

/// The polygons of a Polylla mesh as vertex lists: polygon `k`'s
/// vertices, in order, are `vertices[offsets[k]..offsets[k + 1]]`; the
/// polygons in [`Polylla::polygons`]' order, each from its smallest
/// half-edge along `next`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolygonLists {
    /// Where each polygon's vertices start, and their end (polygons + 1
    /// words).
    pub offsets: Vec<u32>,
    /// The polygons' vertices, one list after another.
    pub vertices: Vec<u32>,
    /// Barrier tips repaired ([`Polylla::repaired`]).
    pub repaired: usize,
    /// Barrier edges split ([`Polylla::bridges`]).
    pub bridges: usize,
}

impl PolygonLists {
    /// The lists of `poly`'s polygons over `mesh`, walked in parallel.
    ///
    /// # Panics
    /// When a polygon's `next` does not lead back to it
    /// ([`Polylla::polygon_edges`]).
    pub fn of(poly: &Polylla, mesh: &HalfEdges) -> PolygonLists {
        let lists: Vec<Vec<u32>> = poly
            .polygons
            .par_iter()
            .map(|&seed| poly.polygon(mesh, seed))
            .collect();
        let sizes: Vec<u32> = lists.iter().map(|l| l.len() as u32).collect();
        PolygonLists {
            offsets: QueryResult::offsets_of(&sizes),
            vertices: lists.concat(),
            repaired: poly.repaired,
            bridges: poly.bridges,
        }
    }

    /// The number of polygons.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no polygons.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The vertices of polygon `k`, in order.
    ///
    /// # Panics
    /// For `k` past the polygons, or offsets that do not rise within the
    /// vertices.
    pub fn polygon(&self, k: usize) -> &[u32] {
        &self.vertices[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }
}

/// Polygons as the writers take them: how many, and each one's vertices
/// in order.
pub trait Polygons: Sync {
    /// The number of polygons.
    fn count(&self) -> usize;
    /// The vertices of polygon `k` (`mesh`: the triangulation the
    /// polygons were made of).
    ///
    /// # Panics
    /// For `k` past the polygons, or polygons that do not close
    /// ([`Polylla::polygon_edges`]).
    fn vertices<'a>(&'a self, mesh: &HalfEdges, k: usize) -> Cow<'a, [u32]>;
}

/// Walked along `next` from each polygon's seed.
impl Polygons for Polylla {
    fn count(&self) -> usize {
        self.polygons.len()
    }

    fn vertices<'a>(&'a self, mesh: &HalfEdges, k: usize) -> Cow<'a, [u32]> {
        Cow::Owned(self.polygon(mesh, self.polygons[k]))
    }
}

/// Read off the lists.
impl Polygons for PolygonLists {
    fn count(&self) -> usize {
        self.len()
    }

    fn vertices<'a>(&'a self, _: &HalfEdges, k: usize) -> Cow<'a, [u32]> {
        Cow::Borrowed(self.polygon(k))
    }
}
