//! The components of a mesh on the device (sets of vertices joined
//! through its faces): the host's `cavity::components::vertex_sets` as
//! kernels, a concurrent union-find (Anderson and Woll, "Wait-free
//! parallel algorithms for the union-find problem", STOC 1991) over each
//! face's corners whose root
//! is the smallest member of its set (parents only point to smaller
//! members, a root is linked under the smaller of two roots by
//! compare-and-swap, paths are halved with atomic minima), then each
//! vertex's root written and the roots counted, and the faces of each
//! component counted at its root, so that the small ones (debris beside a
//! scan) are marked by vertex:
//!
//! 1. [`StartSets`]: every vertex its own set;
//! 2. [`UniteCorners`]: each face joins its corners' sets;
//! 3. [`FlattenSets`]: each vertex's parent becomes its root, and the
//!    roots are counted (the components);
//! 4. [`CountComponentFaces`]: each component's faces, at its root;
//! 5. [`MarkSmallComponents`]: the vertices of components with fewer
//!    faces than asked (and at least one).

use crate::array::{BOUNDS, In, InOut, chunk};

/// The root of `x`'s set in `parent`: the member reached by following
/// parents to smaller members until a member's parent is not smaller
/// (itself, in a forest [`StartSets`] started), halving the path on the
/// way. Ends for any contents: every step goes to a smaller member.
#[inline(always)]
fn find(parent: &InOut<u32>, mut x: u32) -> u32 {
    loop {
        let p = parent.get(x);
        if p >= x {
            return x;
        }
        let g = parent.get(p);
        if g >= p {
            // `x` points at the root already: nothing written, so that
            // the words near a large set's root are only read.
            return p;
        }
        // Parents only ever point to smaller members of the same set: the
        // smaller of two ancestors is the one further up.
        parent.fetch_min(x, g);
        x = g;
    }
}

/// Joins the sets of `a` and `b` in `parent`: the larger root is linked
/// under the smaller one where it is still a root (else the roots are
/// found again).
#[inline(always)]
fn unite(parent: &InOut<u32>, a: u32, b: u32) {
    let (mut a, mut b) = (a, b);
    loop {
        a = find(parent, a);
        b = find(parent, b);
        if a == b {
            return;
        }
        let (low, high) = (a.min(b), a.max(b));
        // A value above `high` is no forest's: nothing to link.
        if parent.compare_exchange(high, high, low) >= high {
            return;
        }
    }
}

crate::kernel! {
    @core
    /// `parent[v] = v` for each of the `n` vertices; one block per chunk.
    ///
    /// # Safety
    /// Checked: each word is written by the one thread its index names.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel StartSets(launch, n: u32, parent: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| parent.set(start + k, start + k));
    }
}

crate::kernel! {
    @core
    /// Each of the `faces` faces (`fv`: three vertices each) joins the
    /// sets of its corners in `parent` ([`StartSets`]'s forest); one block
    /// per chunk of faces.
    ///
    /// # Safety
    /// Checked: the faces are only read; `parent` is read and written
    /// atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel UniteCorners(launch, fv: In<u32>, faces: u32, parent: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, faces);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let (a, b, c) = (fv.get(3 * f), fv.get(3 * f + 1), fv.get(3 * f + 2));
            unite(&parent, a, b);
            unite(&parent, b, c);
        });
    }
}

crate::kernel! {
    @core
    /// Each of the `n` vertices' parent in `parent` (after
    /// [`UniteCorners`]) becomes its root, the smallest vertex of its
    /// component, and `roots[0]` counts the roots; one block per chunk.
    ///
    /// # Safety
    /// Checked: `parent` is read and written atomically (a parent becomes
    /// another ancestor of the same set); the count is added atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FlattenSets(launch, n: u32, parent: InOut<u32>, roots: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        let mut counted = 0;
        launch.block.for_each(end - start, |k| {
            let v = start + k;
            let root = find(&parent, v);
            parent.set(v, root);
            counted += u32::from(root == v);
        });
        if counted > 0 {
            roots.fetch_add(0, counted);
        }
    }
}

crate::kernel! {
    @core
    /// `size[r]`: the faces of the component of root `r`, over the `faces`
    /// faces (`fv`) and the vertices' roots (`root`, [`FlattenSets`]'s);
    /// each thread counts a run of consecutive faces and adds once per
    /// run of the same root (the faces of a large component would
    /// otherwise all add to one word at once); one block per chunk of
    /// faces.
    ///
    /// # Safety
    /// Checked: the inputs are only read, the sizes added atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountComponentFaces(
        launch,
        fv: In<u32>,
        root: In<u32>,
        faces: u32,
        size: InOut<u32>,
    ) {
        let block = launch.block;
        let (start, end) = chunk(launch.block_idx, faces);
        let per = (end - start).div_ceil(block.block_dim());
        let first = start + (block.thread_idx() * per).min(end - start);
        let last = (first + per).min(end);
        let mut run = (u32::MAX, 0);
        for f in first..last {
            let r = root.get(fv.get(3 * f));
            if r != run.0 {
                if run.1 > 0 {
                    size.fetch_add(run.0, run.1);
                }
                run = (r, 0);
            }
            run.1 += 1;
        }
        if run.1 > 0 {
            size.fetch_add(run.0, run.1);
        }
    }
}

crate::kernel! {
    @core
    /// `marks[v]` is 1 where the component of vertex `v` (of `n`; `root`
    /// and `size` as [`CountComponentFaces`] leaves them) has at least
    /// one face and fewer than `below`, else 0; `marks[n]` counts the
    /// marked vertices. One block per chunk of vertices.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each mark is written by the one
    /// thread its index names, the count added atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MarkSmallComponents(
        launch,
        root: In<u32>,
        size: In<u32>,
        n: u32,
        below: u32,
        marks: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        let mut marked = 0;
        launch.block.for_each(end - start, |k| {
            let v = start + k;
            let s = size.get(root.get(v));
            let small = u32::from(s > 0 && s < below);
            marks.set(v, small);
            marked += small;
        });
        if marked > 0 {
            marks.fetch_add(n, marked);
        }
    }
}
