#!/usr/bin/env python3
"""Benchmark CPU tetrahedral mesh coarseners ("peers") at a target cell count.

Called by `cavity bench tet-simplify --python PYTHON` (issue 54) to compare
our parallel edge collapse with the CPU tools a user would pick to coarsen a
tetrahedral mesh, at the cell count our GPU two-pass collapse reached:

  mmgpy   MMG 5.8's mmg3d (the mmgpy bindings, `MmgMesh3D(V, T).remesh`), a
          remesher driven by a size, not a count: the uniform size hsiz
          starts at --length L ($CAVITY_MMG_HSIZ where set, say from an
          earlier call's runs) and is corrected by (cells / target)^(1/3)
          after each run, for at most 3 runs ($CAVITY_MMG_RUNS; fewer once
          a run lands within 1 % of the target); the run closest to the
          target is reported, its time only, with the runs made and its
          hsiz. The Hausdorff bound hausd is L (MMG's default, 0.01 model units, suits a model
          about one unit across: on the 50-unit bunny it refines the surface
          to 170 k triangles and the mesh to a million tetrahedra); every
          other option at MMG's default. MMG is single-threaded by design
          (the parallel version is ParMmg, over MPI): --threads does not
          apply to it.
  vtk     VTK's vtkUnstructuredGridQuadricDecimation with
          SetTargetReduction(1 - target / cells), everything else at its
          default. It needs a point scalar array: one of zeros is attached
          (named "zero"), so that its quadrics measure the geometry alone.
          Only Update() is timed; the conversion to and from VTK (numpy
          support, vtkmodules.util.numpy_support) is not. The filter is serial;
          vtkSMPTools is initialized with --threads threads all the same.
  input   the input mesh itself, untimed (seconds 0): its quality, to
          check this script's measures against cavity's own (a test does).
          Not among the defaults.

Usage:

  python3 xtask/peers/tet_peers.py --positions PATH --tets PATH \\
      --target-cells N --length L [--peers mmgpy,vtk] [--timeout SECONDS] \\
      [--threads 1]

Input: two raw binary files, as `cavity bench tet-simplify` writes them
(`cavity_bench::peers::run_tet_peer_script`): --positions holds n x 3
little-endian float64 (x, y, z of each vertex in turn, model units), --tets
m x 4 little-endian uint32 (the vertex indices of each tetrahedron in turn,
0-based, positively oriented: det(p1 - p0, p2 - p0, p3 - p0) > 0). The counts
n and m are the files' sizes over 24 and 16 bytes; there is no header.

--peers defaults to the environment variable CAVITY_PEERS, else mmgpy and
vtk. --target-cells is the cell count to reach; --length L is the target
edge length of the collapse (model units), for MMG's first size and the
edge band below. --threads (default 1) sets OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS and MKL_NUM_THREADS of the peers' processes and VTK's
SMP threads.

Each peer runs in its own process (a fresh interpreter, so that --timeout,
default 600 s, can stop it; the limit covers its import, reading the input
and all of MMG's runs). For each peer one JSON object is printed on its own
line of stdout:

  {"peer", "version", "seconds", "threads", "note", "cells", "vertices",
   "inverted", "min_dihedral", "max_dihedral", "mean_harmonic",
   "max_harmonic", "mean_amips", "max_amips", "edge_band"}

(mmgpy adds "runs", "hsiz" and "hausd"), or {"peer", "error"} when it cannot
run. The measures are those of apps/tet-collapse/src/quality.rs over every
output tetrahedron: dihedral angles in degrees, the harmonic index
normalized by the regular tetrahedron's (1 = regular), the conformal AMIPS
energy (3 = regular), the count of inverted or flat tetrahedra (signed
volume not positive), the vertices named by a tetrahedron, and the share of
the unique edges whose length is in [4/5 L, 4/3 L]. An inverted tetrahedron
makes the harmonic and AMIPS means and maxima infinite; a value that is not
finite is written as a string ("inf", "nan"), as JSON has no such numbers.
Diagnostics go to stderr.

Requires numpy. Install the peers with

  pip install mmgpy vtk

(mmgpy 0.17.1 ships MMG 5.8; vtk 9.7). For an offline machine, download the
wheels where PyPI is reachable (matching the target's Python version and
platform), carry the folder over and install from it:

  pip download -d DIR mmgpy vtk
  pip install --no-index --find-links DIR mmgpy vtk
"""

import argparse
import importlib.metadata
import json
import math
import os
import sys
import time

import numpy as np

from peer_process import run_isolated

# (p1 - p0) x (p2 - p0) . (p3 - p0) / 6 > 0 for a positively oriented tetrahedron.
TET_EDGES = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
# Sum of the squared face areas over the volume^(4/3) of the regular tetrahedron.
REGULAR_HARMONIC = 0.75 * (6.0 * math.sqrt(2.0)) ** (4.0 / 3.0)
# Tetrahedra measured at once (bounds the quality's memory on large meshes).
CHUNK = 1 << 20


def read_input(positions, tets):
    """Vertices (n x 3 float64) and tetrahedra (m x 4 int32) from the raw files."""
    for path, width in ((positions, 24), (tets, 16)):
        size = os.path.getsize(path)
        if size % width:
            raise ValueError(f"{path}: {size} bytes, not a multiple of {width}")
    V = np.fromfile(positions, dtype="<f8").reshape(-1, 3)
    T = np.fromfile(tets, dtype="<u4").reshape(-1, 4)
    if len(V) >= 2**31:
        raise ValueError(f"{len(V)} vertices: more than int32 indices reach")
    if T.size and T.max() >= len(V):
        raise ValueError(f"a tetrahedron names vertex {T.max()} of {len(V)}")
    return np.ascontiguousarray(V, dtype=np.float64), np.ascontiguousarray(T, dtype=np.int32)


def run_mmgpy(V, T, target, length, threads):
    """Coarsened (V, T), seconds, version and fields of MMG (mmgpy)."""
    import mmgpy

    mmgpy.disable_logging()
    hausd = length
    hsiz = MMG_FIRST_HSIZ or length
    best = None
    runs = 0
    for _ in range(MMG_RUNS):
        mesh = mmgpy.MmgMesh3D(V, T)
        start = time.perf_counter()
        mesh.remesh(hsiz=hsiz, hausd=hausd, verbose=-1)
        seconds = time.perf_counter() - start
        runs += 1
        U, G = mesh.get_vertices(), mesh.get_tetrahedra()
        print(f"mmgpy run {runs}: hsiz {hsiz:.6g} -> {len(G)} tetrahedra in {seconds:.3f} s", file=sys.stderr)
        if best is None or abs(len(G) - target) < abs(len(best[1]) - target):
            best = (U, G, seconds, hsiz)
        if abs(len(G) - target) <= 0.01 * target or len(G) == 0:
            break
        hsiz *= (len(G) / target) ** (1.0 / 3.0)
    U, G, seconds, hsiz = best
    version = f"{importlib.metadata.version('mmgpy')} (MMG {mmgpy.MMG_VERSION})"
    fields = {
        "runs": runs,
        "hsiz": hsiz,
        "hausd": hausd,
        "threads": 1,
        "note": f"{runs} runs, the closest at hsiz {hsiz:.4g} (L {length:.4g}), hausd L; single-threaded",
    }
    return U, G, seconds, version, fields


# MMG's runs at most (its size corrected towards the cell target after
# each): $CAVITY_MMG_RUNS, else 3. One run of MMG on 5 M tetrahedra takes
# minutes: set 1 there.
MMG_RUNS = max(1, int(os.environ.get("CAVITY_MMG_RUNS", "3")))
# MMG's first uniform size: $CAVITY_MMG_HSIZ (model units), else L. A size
# known from an earlier call's runs lands one run on the count (hausd and
# the edge band stay at L).
MMG_FIRST_HSIZ = float(os.environ.get("CAVITY_MMG_HSIZ", "0")) or None


def run_vtk(V, T, target, length, threads):
    """Decimated (V, T), seconds, version and fields of VTK's quadric decimation."""
    # The modules the filter needs, not `import vtk` (every module): a
    # machine with a trimmed VTK (these modules and their libraries) runs it.
    from vtkmodules.util import numpy_support
    from vtkmodules.vtkCommonCore import vtkPoints, vtkSMPTools, vtkVersion
    from vtkmodules.vtkCommonDataModel import VTK_TETRA, vtkCellArray, vtkUnstructuredGrid
    from vtkmodules.vtkFiltersCore import vtkUnstructuredGridQuadricDecimation

    vtkSMPTools.Initialize(threads)
    grid = vtkUnstructuredGrid()
    points = vtkPoints()
    points.SetData(numpy_support.numpy_to_vtk(V, deep=True))
    grid.SetPoints(points)
    offsets = np.arange(0, 4 * len(T) + 1, 4, dtype=np.int64)
    cells = vtkCellArray()
    cells.SetData(
        numpy_support.numpy_to_vtkIdTypeArray(offsets, deep=True),
        numpy_support.numpy_to_vtkIdTypeArray(T.astype(np.int64).ravel(), deep=True),
    )
    grid.SetCells(VTK_TETRA, cells)
    scalars = numpy_support.numpy_to_vtk(np.zeros(len(V)), deep=True)
    scalars.SetName("zero")
    grid.GetPointData().SetScalars(scalars)
    decimation = vtkUnstructuredGridQuadricDecimation()
    decimation.SetInputData(grid)
    reduction = 1.0 - target / len(T)
    decimation.SetTargetReduction(reduction)
    start = time.perf_counter()
    decimation.Update()
    seconds = time.perf_counter() - start
    out = decimation.GetOutput()
    if out.GetNumberOfCells() and set(numpy_support.vtk_to_numpy(out.GetDistinctCellTypesArray())) != {VTK_TETRA}:
        raise RuntimeError("the decimation's output has cells other than tetrahedra")
    U = numpy_support.vtk_to_numpy(out.GetPoints().GetData()).astype(np.float64)
    G = numpy_support.vtk_to_numpy(out.GetCells().GetConnectivityArray()).reshape(-1, 4)
    fields = {"threads": threads, "note": f"target reduction {reduction:.4f}, zero point scalars; serial filter"}
    return U, G, seconds, vtkVersion.GetVTKVersion(), fields


def run_input(V, T, target, length, threads):
    """The input itself, untimed: for checking the measures."""
    return V, T, 0.0, np.__version__, {"threads": 1, "note": "the input, untimed"}


PEERS = {"mmgpy": run_mmgpy, "vtk": run_vtk, "input": run_input}
DEFAULT_PEERS = ("mmgpy", "vtk")


def run_on_files(peer, paths, target, length, threads):
    """In the peer's process: read the input, run the peer."""
    V, T = read_input(*paths)
    return PEERS[peer](V, T, target, length, threads)


def _cross(a, b):
    """Row-wise cross products of k x 3 arrays."""
    return np.cross(a, b)


def _dot(a, b):
    """Row-wise dot products of k x 3 arrays."""
    return np.einsum("ij,ij->i", a, b)


def tet_measures(P):
    """Per tetrahedron of corners P (k x 4 x 3 float64), as
    cavity_tet_collapse::quality::tet_quality: smallest and largest dihedral
    angle (degrees, NaN when two corners coincide), normalized harmonic
    index, AMIPS energy (both infinite when inverted) and whether inverted."""
    d = P - P[:, :1]
    inverted = ~(_dot(d[:, 1], _cross(d[:, 2], d[:, 3])) / 6.0 > 0.0)  # NaN counts as inverted
    longest = np.sqrt(np.max([np.sum((P[:, i] - P[:, j]) ** 2, axis=1) for i, j in TET_EDGES], axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        q = d * (1.0 / longest)[:, None, None]
        e1, e2, e3 = q[:, 1], q[:, 2], q[:, 3]
        # Outward face area vectors, each opposite the corner of its index.
        faces = [
            0.5 * _cross(e2 - e1, e3 - e1),
            0.5 * _cross(e3, e2),
            0.5 * _cross(e1, e3),
            0.5 * _cross(e2, e1),
        ]
        angles = np.stack(
            [
                180.0 - np.degrees(np.arctan2(np.linalg.norm(_cross(faces[k], faces[l]), axis=1), _dot(faces[k], faces[l])))
                for k in range(4)
                for l in range(k + 1, 4)
            ],
            axis=1,
        )
        volume = _dot(e1, _cross(e2, e3)) / 6.0
        areas = sum(_dot(f, f) for f in faces)
        harmonic = areas / np.abs(volume) ** (4.0 / 3.0) / REGULAR_HARMONIC
        j2 = 2.0 * e2 - e1
        j3 = 3.0 * e3 - e1 - e2
        trace = _dot(e1, e1) + _dot(j2, j2) / 3.0 + _dot(j3, j3) / 6.0
        amips = trace / (6.0 * math.sqrt(2.0) * np.abs(volume)) ** (2.0 / 3.0)
    # f64::min and f64::max skip a NaN, as fmin and fmax do.
    min_dihedral = np.fmin.reduce(angles, axis=1)
    max_dihedral = np.fmax.reduce(angles, axis=1)
    harmonic[inverted] = np.inf
    amips[inverted] = np.inf
    return min_dihedral, max_dihedral, harmonic, amips, inverted


def edge_band(V, T, length):
    """Share of T's unique edges with length in [4/5 L, 4/3 L] (NaN without edges)."""
    n = np.int64(len(V))
    e = np.concatenate([T[:, [i, j]] for i, j in TET_EDGES]).astype(np.int64)
    e.sort(axis=1)
    keys = np.unique(e[:, 0] * n + e[:, 1])
    if not len(keys):
        return math.nan
    a, b = keys // n, keys % n
    squared = np.sum((V[a] - V[b]) ** 2, axis=1)
    inside = (squared >= (0.8 * length) ** 2) & (squared <= (4.0 / 3.0 * length) ** 2)
    return float(np.mean(inside))


def quality(V, T, length):
    """The measures of cavity_tet_collapse::quality::quality (every
    tetrahedron; NaN without tetrahedra), vectorized over chunks."""
    V, T = np.asarray(V, np.float64), np.asarray(T, np.int64)
    cells = len(T)
    lo, hi = math.nan, math.nan
    harmonic_sum = amips_sum = 0.0
    harmonic_max = amips_max = math.nan
    inverted = 0
    for s in range(0, cells, CHUNK):
        mn, mx, h, a, inv = tet_measures(V[T[s : s + CHUNK]])
        lo = float(np.fmin(lo, np.fmin.reduce(mn)))
        hi = float(np.fmax(hi, np.fmax.reduce(mx)))
        harmonic_sum += float(np.sum(h))
        amips_sum += float(np.sum(a))
        harmonic_max = float(np.fmax(harmonic_max, np.fmax.reduce(h)))
        amips_max = float(np.fmax(amips_max, np.fmax.reduce(a)))
        inverted += int(np.count_nonzero(inv))
    used = np.zeros(len(V), dtype=bool)
    used[T.ravel()] = True
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_harmonic = harmonic_sum / cells if cells else math.nan
        mean_amips = amips_sum / cells if cells else math.nan
    return {
        "cells": cells,
        "vertices": int(np.count_nonzero(used)),
        "inverted": inverted,
        "min_dihedral": lo,
        "max_dihedral": hi,
        "mean_harmonic": mean_harmonic,
        "max_harmonic": harmonic_max,
        "mean_amips": mean_amips,
        "max_amips": amips_max,
        "edge_band": edge_band(V, T, length),
    }


def finite_or_text(fields):
    """fields with every float that is not finite written as a string ("inf", "nan")."""
    return {k: (str(v) if isinstance(v, float) and not math.isfinite(v) else v) for k, v in fields.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--positions", required=True, help="vertices: n x 3 little-endian float64, raw")
    parser.add_argument("--tets", required=True, help="tetrahedra: m x 4 little-endian uint32, raw, 0-based")
    parser.add_argument("--target-cells", type=int, required=True, help="the tetrahedra to reach")
    parser.add_argument("--length", type=float, required=True, help="target edge length L (model units)")
    parser.add_argument(
        "--peers",
        default=os.environ.get("CAVITY_PEERS", ",".join(DEFAULT_PEERS)),
        help="comma-separated, from: " + ", ".join(PEERS) + " (default: $CAVITY_PEERS, else " + ",".join(DEFAULT_PEERS) + ")",
    )
    parser.add_argument("--timeout", type=float, default=600, help="seconds per peer, its import, input and all its runs included (default 600)")
    parser.add_argument("--threads", type=int, default=1, help="threads a peer may use where it can (default 1)")
    args = parser.parse_args()

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)  # the peers' processes inherit it
    paths = (args.positions, args.tets)
    cells = os.path.getsize(args.tets) // 16
    print(f"{os.path.getsize(args.positions) // 24} vertices, {cells} tetrahedra; target {args.target_cells}", file=sys.stderr)
    for peer in args.peers.split(","):
        if peer not in PEERS:
            result = f"unknown peer (known: {', '.join(PEERS)})"
        else:
            result = run_isolated(run_on_files, (peer, paths, args.target_cells, args.length, args.threads), args.timeout)
        if isinstance(result, str):
            line = {"peer": peer, "error": result}
        else:
            U, G, seconds, version, fields = result
            line = {"peer": peer, "version": version, "seconds": seconds, **fields, **quality(U, G, args.length)}
        print(json.dumps(finite_or_text(line)), flush=True)


if __name__ == "__main__":
    main()
