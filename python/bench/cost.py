"""The cost of calling cavity from Python (issue 56 item 7): each
operation's whole Python call (the arrays' checks and copies in and out,
the work) against its Rust work alone (``_cavity.last_work_seconds``: the
library's calls from the copied-in mesh to the result, what a Rust program
calling the same functions would spend), medians after a warm-up. Neither
counts freeing the result (the caller's, whenever it drops it).

    python python/bench/cost.py MESH [MESH ...] [--subdivisions N] [--reps R] [--device D]

Each mesh is midpoint-subdivided N times (each face into four) before the
runs. Prints a Markdown table, then a pipeline (normals, smooth, geodesic,
denoise, normals) through the plain functions and on a ``cavity.Mesh``
(made inside the timing), medians of the whole pipelines.
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
    meshes = []
    for path in args.meshes:
        V, F = cavity.read(path)
        for _ in range(args.subdivisions):
            V, F = subdivide(V, F)
        label = f"{path} /{args.subdivisions}" if args.subdivisions else path
        meshes.append((label, V, F))
        for op, run in OPERATIONS.items():
            run(V, F, args.device)
            calls, works = [], []
            for _ in range(args.reps):
                start = time.perf_counter()
                out = run(V, F, args.device)
                calls.append(time.perf_counter() - start)
                works.append(_cavity.last_work_seconds())
                # The result is freed outside the timing, as the Rust work's
                # result is: its drop is the caller's, whenever it comes.
                del out
            call, work = statistics.median(calls), statistics.median(works)
            print(
                f"| {label} | {len(F)} | {op} | {call:.4f} | {work:.4f} | {call / work:.3f} |",
                flush=True,
            )
    pipelines(meshes, args.reps, args.device)


def plain_pipeline(V, F, d):
    cavity.normals(V, F, device=d)
    V = cavity.smooth(V, F, dt=0.5, device=d)
    cavity.geodesic(V, F, [0], device=d)
    V = cavity.denoise(V, F, iterations=2, device=d)
    return cavity.normals(V, F, device=d)


def mesh_pipeline(V, F, d):
    m = cavity.Mesh(V, F, device=d)
    m.normals()
    m.smooth(dt=0.5).geodesic([0])
    return m.denoise(iterations=2).normals()


def pipelines(meshes, reps, device):
    print("\n| mesh | faces | plain functions s | cavity.Mesh s | plain / Mesh |")
    print("|---|---|---|---|---|")
    for label, V, F in meshes:
        times = {}
        for name, run in (("plain", plain_pipeline), ("mesh", mesh_pipeline)):
            run(V, F, device)
            samples = []
            for _ in range(reps):
                start = time.perf_counter()
                run(V, F, device)
                samples.append(time.perf_counter() - start)
            times[name] = statistics.median(samples)
        plain, mesh = times["plain"], times["mesh"]
        print(f"| {label} | {len(F)} | {plain:.4f} | {mesh:.4f} | {plain / mesh:.2f} |", flush=True)


if __name__ == "__main__":
    main()
