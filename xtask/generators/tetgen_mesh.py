"""Tetrahedral meshes of closed surfaces with TetGen (the `tetgen` wheel,
0.8.4; see ../shared/PEERS.md), written as TetGen .node/.ele files that
`cavity tet` reads.

    python3 tetgen_mesh.py SURFACE.obj OUT.node [--max-volume V] [--repair]
        [--faces N] [--save-surface S.obj]

--max-volume is relative to the surface's bounding-box volume (smaller
gives more tetrahedra: about 1e-6 gives a million on Spot). --repair runs
MeshFix (the `pymeshfix` wheel, 0.18.1) first: it joins the components,
fills every hole and removes degenerate and self-intersecting triangles,
as a scan needs before TetGen takes it (the Stanford bunny scan of
../shared/data/scans/ has 70 holes and non-manifold edges); the surface
may then be any format MeshFix reads (.ply, .off, .stl, .obj). The large
outputs are not kept in the repository; this script makes them again.
--faces N simplifies the (repaired) surface to about N triangles first
(quadric edge collapses, the `fast-simplification` wheel, 0.2.0), for a
small mesh whose thin parts (the bunny's ears) are one or two tetrahedra
thick.

The meshes of the tests and benchmarks (issue 52), from the bunny scan
`tests/data/scans/StanfordBunny.ply`:

    # apps/volume/tests/data/bunny-tetgen.node/.ele (committed)
    python3 tetgen_mesh.py tests/data/scans/StanfordBunny.ply bunny-tetgen.node \
        --repair --faces 2000 --max-volume 1e-3
    # apps/tet-collapse/tests/data/dragon-tetgen.node/.ele (committed, issue 54),
    # from assets/dragon.obj
    python3 tetgen_mesh.py assets/dragon.obj dragon-tetgen.node \
        --repair --faces 3000 --max-volume 1e-3
    # the benchmark's 674 k tetrahedra (not committed)
    python3 tetgen_mesh.py tests/data/scans/StanfordBunny.ply bunny-big.node \
        --repair --max-volume 1e-6
"""

import argparse
import sys
import time

import numpy as np
import tetgen


def read_obj(path):
    vertices, faces = [], []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "v":
                vertices.append([float(x) for x in parts[1:4]])
            elif parts[0] == "f":
                loop = [int(p.split("/")[0]) - 1 for p in parts[1:]]
                for k in range(1, len(loop) - 1):
                    faces.append([loop[0], loop[k], loop[k + 1]])
    return np.array(vertices, dtype=np.float64), np.array(faces, dtype=np.int32)


def repair(path):
    from pymeshfix import MeshFix, PyTMesh

    loaded = PyTMesh()
    loaded.set_quiet(True)
    loaded.load_file(path)
    holes = loaded.n_boundaries
    v, f = loaded.return_arrays()
    fix = MeshFix(np.asarray(v, dtype=np.float64), np.asarray(f, dtype=np.int32))
    fix.repair(joincomp=True, remove_smallest_components=True)
    v, f = fix.points, fix.faces
    print(f"{path}: {holes} holes filled; {len(v)} vertices, {len(f)} triangles", file=sys.stderr)
    return np.asarray(v, dtype=np.float64), np.asarray(f, dtype=np.int32)


def simplify(v, f, faces):
    import fast_simplification

    reduction = max(0.0, 1.0 - faces / len(f))
    v, f = fast_simplification.simplify(v.astype(np.float32), f, target_reduction=reduction)
    print(f"simplified to {len(v)} vertices, {len(f)} triangles", file=sys.stderr)
    return np.asarray(v, dtype=np.float64), np.asarray(f, dtype=np.int32)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("surface")
    parser.add_argument("out")
    parser.add_argument("--max-volume", type=float, default=1e-5)
    parser.add_argument("--repair", action="store_true")
    parser.add_argument("--faces", type=int, help="simplify the surface to about this many triangles")
    parser.add_argument("--save-surface", help="write the (repaired) surface here as OBJ")
    args = parser.parse_args()
    if args.repair:
        v, f = repair(args.surface)
    else:
        v, f = read_obj(args.surface)
    if args.faces:
        v, f = simplify(v, f, args.faces)
    if args.save_surface:
        with open(args.save_surface, "w") as out:
            for p in v:
                out.write(f"v {p[0]:.9g} {p[1]:.9g} {p[2]:.9g}\n")
            for t in f:
                out.write(f"f {t[0] + 1} {t[1] + 1} {t[2] + 1}\n")
    box = np.prod(v.max(axis=0) - v.min(axis=0))
    start = time.time()
    gen = tetgen.TetGen(v, f)
    nodes, elems = gen.tetrahedralize(
        steinerleft=-1,
        fixedvolume=True,
        maxvolume=args.max_volume * box,
        minratio=1.5,
        quality=True,
    )[:2]
    seconds = time.time() - start
    stem = args.out.rsplit(".", 1)[0]
    with open(stem + ".node", "w") as out:
        out.write(f"{len(nodes)} 3 0 0\n")
        for i, p in enumerate(nodes):
            out.write(f"{i} {p[0]:.9g} {p[1]:.9g} {p[2]:.9g}\n")
    with open(stem + ".ele", "w") as out:
        out.write(f"{len(elems)} 4 0\n")
        for i, t in enumerate(elems):
            out.write(f"{i} {t[0]} {t[1]} {t[2]} {t[3]}\n")
    print(f"{args.surface}: {len(nodes)} vertices, {len(elems)} tetrahedra in {seconds:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
