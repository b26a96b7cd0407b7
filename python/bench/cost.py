"""The cost of calling cavity from Python (issue 56 item 7): each
operation's whole Python call (the arrays' checks and copies in and out,
the work) against its Rust work alone (``_cavity.last_work_seconds``: the
library's calls from the copied-in mesh to the result, what a Rust program
calling the same functions would spend), medians after a warm-up.

    python python/bench/cost.py MESH [MESH ...] [--subdivisions N] [--reps R] [--device D]

Each mesh is midpoint-subdivided N times (each face into four) before the
runs. Prints a Markdown table.
"""

import argparse
import statistics
import time

import numpy as np

import cavity
from cavity import _cavity


def subdivide(V, F):
    """Each face into four at its edges' midpoints."""
    edges = np.sort(np.concatenate([F[:, [0, 1]], F[:, [1, 2]], F[:, [2, 0]]]), axis=1)
    unique, inverse = np.unique(edges, axis=0, return_inverse=True)
    mid = (V[unique[:, 0]] + V[unique[:, 1]]) / 2
    m = len(F)
    e = len(V) + inverse.reshape(3, m).T
    a, b, c = F[:, 0], F[:, 1], F[:, 2]
    ab, bc, ca = e[:, 0], e[:, 1], e[:, 2]
    faces = np.concatenate(
        [np.stack(t, axis=1) for t in ((a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca))]
    )
    return np.concatenate([V, mid]).astype(np.float32), faces.astype(np.uint32)


OPERATIONS = {
    "normals": lambda V, F, d: cavity.normals(V, F, device=d),
    "smooth": lambda V, F, d: cavity.smooth(V, F, device=d),
    "denoise": lambda V, F, d: cavity.denoise(V, F, iterations=3, device=d),
    "geodesic": lambda V, F, d: cavity.geodesic(V, F, [0], device=d),
    "delaunay": lambda V, F, d: cavity.delaunay(V, F, device=d),
    "remesh": lambda V, F, d: cavity.remesh(V, F, device=d),
}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("meshes", nargs="+")
    p.add_argument("--subdivisions", type=int, default=0)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--device", default="auto")
    args = p.parse_args()
    name, on_gpu, _ = _cavity.device_name(args.device)
    print(f"device: {name}\n")
    print("| mesh | faces | operation | Python call s | Rust work s | Python / Rust |")
    print("|---|---|---|---|---|---|")
    for path in args.meshes:
        V, F = cavity.read(path)
        for _ in range(args.subdivisions):
            V, F = subdivide(V, F)
        for op, run in OPERATIONS.items():
            run(V, F, args.device)
            calls, works = [], []
            for _ in range(args.reps):
                start = time.perf_counter()
                run(V, F, args.device)
                calls.append(time.perf_counter() - start)
                works.append(_cavity.last_work_seconds())
            call, work = statistics.median(calls), statistics.median(works)
            label = f"{path} /{args.subdivisions}" if args.subdivisions else path
            print(
                f"| {label} | {len(F)} | {op} | {call:.4f} | {work:.4f} | {call / work:.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
