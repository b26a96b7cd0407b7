//! The sweeps of a launch (several Jacobi sweeps over the patch in shared
//! memory, [`Sweeps`]) and the vertex attributes gathered into shared
//! memory ([`Gather`]).

use crate::attribute::{Attr, Scalar};
use crate::block::Shared;
use crate::dynamic::patch::DynMesh;
use crate::layout::Kind;

/// Sweeps of a relaxation inside its patch: one launch calls
/// [`ElementComputation::compute`](super::ElementComputation::compute) up to `count` times on every active
/// element, with a barrier between, as long as an element asks for
/// another sweep ([`Element::sweep_again`](super::Element::sweep_again)), so that a change crosses the
/// patch in one launch instead of one launch per hop (a block-local
/// Jacobi iteration, as the block-based fast iterative method of Jeong
/// and Whitaker 2008 runs it). The carried attributes' values (one or two
/// pairs `read` → `write`) live in shared memory during the launch: sweep
/// `k` reads, through [`Element::get_at`](super::Element::get_at) on `read`, the values sweep
/// `k - 1` wrote with [`Element::set`](super::Element::set) on `write` (the launch's `read`
/// values in sweep 0; a not-owned element keeps its owner's launch
/// value, as its owner's block is computing it), and after the last sweep
/// every active owned element's carried values go to `write` (its `read`
/// value where it set none). The result is deterministic: no block reads
/// what another writes in the launch. In a sweeping launch the positions
/// are read once, into shared memory; [`Element::get`](super::Element::get) reads a carried
/// `read` attribute's launch value (set no `read` attribute: write its
/// `write`); [`Element::count`](super::Element::count) counts the last sweep's calls only; other
/// attributes written with [`Element::set`](super::Element::set) are written in every sweep.
/// A launch sweeps once unless the mesh holds every carried attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sweeps {
    pub(super) count: u32,
    pub(super) kind: Kind,
    /// Carried pairs: 1 or 2.
    pub(super) pairs: u32,
    pub(super) read: [u32; 2],
    pub(super) write: [u32; 2],
}

impl Sweeps {
    /// One sweep: a plain launch.
    pub const ONE: Sweeps = Sweeps {
        count: 1,
        kind: Kind::Vertex,
        pairs: 1,
        read: [0; 2],
        write: [0; 2],
    };

    /// Up to `count` sweeps (at least 1) carrying `read` into `write`: two
    /// different one-word attributes (`f32` or `u32`; refused at compile
    /// time for `f64`) of the computation's source kind (else the launch
    /// sweeps once).
    #[inline(always)]
    pub fn new<T: Scalar>(count: u32, read: &Attr<T, 1>, write: &Attr<T, 1>) -> Sweeps {
        const { assert!(T::WORDS == 1, "sweeps carry one-word attributes") };
        let distinct = read.kind() == write.kind() && read.offset() != write.offset();
        Sweeps {
            count: if distinct { count.max(1) } else { 1 },
            kind: read.kind(),
            pairs: 1,
            read: [read.offset(); 2],
            write: [write.offset(); 2],
        }
    }

    /// These sweeps carrying a second pair `read` → `write` as well (of
    /// the same kind, four different attributes, and not a third pair;
    /// else the launch sweeps once).
    #[inline(always)]
    pub fn and<T: Scalar>(self, read: &Attr<T, 1>, write: &Attr<T, 1>) -> Sweeps {
        const { assert!(T::WORDS == 1, "sweeps carry one-word attributes") };
        let words = [self.read[0], self.write[0], read.offset(), write.offset()];
        let distinct = (0..4).all(|i| (i + 1..4).all(|j| words[i] != words[j]));
        let same_kind = read.kind() == self.kind && write.kind() == self.kind;
        Sweeps {
            count: if distinct && same_kind && self.pairs == 1 {
                self.count
            } else {
                1
            },
            pairs: 2,
            read: [self.read[0], read.offset()],
            write: [self.write[0], write.offset()],
            ..self
        }
    }

    /// Calls per active element in one launch, at most.
    #[inline(always)]
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The carried pair whose `read` (`of_write` false) or `write`
    /// attribute starts at word `offset` of `kind`, for a one-component
    /// attribute (`n` 1).
    #[inline(always)]
    pub(super) fn pair(&self, kind: Kind, offset: u32, n: usize, of_write: bool) -> Option<usize> {
        let words = if of_write { self.write } else { self.read };
        if n != 1 || kind != self.kind {
            return None;
        }
        if words[0] == offset {
            Some(0)
        } else if self.pairs == 2 && words[1] == offset {
            Some(1)
        } else {
            None
        }
    }
}

/// The vertex attributes a computation reads at neighbours through shared
/// memory ([`ElementComputation::GATHERED_WORDS`](super::ElementComputation::GATHERED_WORDS)): up to two, each of at
/// most four words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gather {
    /// Per attribute, its first word and its words (0: none).
    pub(super) attrs: [(u32, u32); 2],
}

impl Gather {
    /// No attribute (the positions only, where any are gathered).
    pub const NONE: Gather = Gather { attrs: [(0, 0); 2] };

    /// Gathers vertex attribute `attr` (an attribute of another kind, or
    /// of more than four words, is not gathered).
    #[inline(always)]
    pub fn new<T: Scalar, const N: usize>(attr: &Attr<T, N>) -> Gather {
        Gather::NONE.and(attr)
    }

    /// These attributes and vertex attribute `attr` (a third one, or one
    /// of another kind or of more than four words, is not gathered).
    #[inline(always)]
    pub fn and<T: Scalar, const N: usize>(self, attr: &Attr<T, N>) -> Gather {
        let words = attr.words();
        if attr.kind() != Kind::Vertex || words == 0 || words > 4 {
            return self;
        }
        let mut attrs = self.attrs;
        if attrs[0].1 == 0 {
            attrs[0] = (attr.offset(), words);
        } else if attrs[1].1 == 0 {
            attrs[1] = (attr.offset(), words);
        }
        Gather { attrs }
    }

    /// Words gathered per vertex besides the positions.
    #[inline(always)]
    pub fn words(&self) -> u32 {
        self.attrs[0].1 + self.attrs[1].1
    }

    /// These attributes less those `mesh` does not hold.
    #[inline(always)]
    pub(super) fn held_by(self, mesh: &DynMesh) -> Gather {
        let held = |(offset, words): (u32, u32)| {
            words > 0 && mesh.holds(&Attr::<u32, 1>::new(Kind::Vertex, offset + words - 1))
        };
        let [first, second] = self.attrs.map(|a| if held(a) { a } else { (0, 0) });
        Gather {
            attrs: if first.1 == 0 {
                [second, (0, 0)]
            } else {
                [first, second]
            },
        }
    }

    /// Where the words of the attribute at word `offset` with `words`
    /// words start in a vertex's gathered words (after the positions).
    #[inline(always)]
    pub(super) fn find(&self, offset: u32, words: u32) -> Option<u32> {
        let [(a, n), (b, m)] = self.attrs;
        if n == words && a == offset {
            Some(3)
        } else if m == words && b == offset {
            Some(3 + n)
        } else {
            None
        }
    }
}

/// The gathered words of a launch as an element reads them.
#[derive(Clone, Copy)]
pub(super) struct Gathered {
    /// `stride` words per local vertex: its position, then the attributes.
    pub(super) words: Shared<u32>,
    pub(super) stride: u32,
    pub(super) gather: Gather,
}

/// Entry `j` (0 or 1) of a pair, chosen without indexing (an indexed
/// array would live in local memory on the GPU).
#[inline(always)]
pub(super) fn pick<T: Copy>(pair: [T; 2], j: usize) -> T {
    if j == 0 { pair[0] } else { pair[1] }
}

/// The shared memory of a sweeping launch as one element sees it.
#[derive(Clone, Copy)]
pub(super) struct Sweep {
    pub(super) sweeps: Sweeps,
    /// Per carried pair, the values the previous sweep left (read).
    pub(super) values: [Shared<u32>; 2],
    /// Per carried pair, the values this sweep writes.
    pub(super) next: [Shared<u32>; 2],
    /// Per carried pair, the launch's values.
    pub(super) launch: [Shared<u32>; 2],
    /// The sweeps' counts and requests ([`Carried::flags`]).
    pub(super) flags: Shared<u32>,
    /// The sweep.
    pub(super) k: u32,
}

impl Sweep {
    /// Where sweep `k`'s count is.
    #[inline(always)]
    pub(super) fn count_at(&self, k: u32) -> u32 {
        k % 2
    }

    /// Where sweep `k`'s request for another sweep is.
    #[inline(always)]
    pub(super) fn asked_at(&self, k: u32) -> u32 {
        2 + k % 3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch sweeps more than once only with distinct one-word
    /// attributes of one kind, at most two pairs.
    #[test]
    fn sweeps_need_distinct_attributes_of_one_kind() {
        let v = |offset| Attr::<f32, 1>::new(Kind::Vertex, offset);
        let e = Attr::<f32, 1>::new(Kind::Edge, 5);
        assert_eq!(Sweeps::new(8, &v(4), &v(5)).count(), 8);
        assert_eq!(Sweeps::new(0, &v(4), &v(5)).count(), 1);
        assert_eq!(Sweeps::new(8, &v(4), &v(4)).count(), 1);
        assert_eq!(Sweeps::new(8, &v(4), &e).count(), 1);
        let two = Sweeps::new(8, &v(4), &v(5)).and(&v(6), &v(7));
        assert_eq!(two.count(), 8);
        assert_eq!(Sweeps::new(8, &v(4), &v(5)).and(&v(5), &v(7)).count(), 1);
        assert_eq!(Sweeps::new(8, &v(4), &v(5)).and(&v(6), &e).count(), 1);
        assert_eq!(two.and(&v(8), &v(9)).count(), 1);
        assert_eq!(two.pair(Kind::Vertex, 6, 1, false), Some(1));
        assert_eq!(two.pair(Kind::Vertex, 7, 1, true), Some(1));
        assert_eq!(two.pair(Kind::Vertex, 4, 1, true), None);
        assert_eq!(two.pair(Kind::Vertex, 4, 3, false), None);
    }
}
