#!/usr/bin/env python3
"""Benchmark the CPU peers of geodesic distance from one source vertex.

Called by `cavity bench geodesic --python PYTHON` to compare our propagation
with what a user would pick on the CPU:

  pygeodesic-exact   the exact polyhedral distance (pygeodesic's MMP-style
                     algorithm), single-threaded; the ground truth
  potpourri3d-heat   the heat method (potpourri3d, geometry-central):
                     "precompute" factors the matrices once per mesh,
                     "seconds" is one distance solve

Usage:

  python3 xtask/peers/geodesic_peers.py --mesh PATH.obj --source V \\
      [--exact-out PATH] [--max-exact-faces N] [--peers pygeodesic-exact,...]

--peers defaults to the environment variable CAVITY_PEERS, else all peers.
The exact solver runs only on meshes of at most --max-exact-faces faces
(its time grows about as the faces to the power 1.5: 11 s at 320 k faces,
minutes beyond a million); its distances go, as little-endian float64 per
vertex, to --exact-out when given, and the heat method's mean relative
error against them (over vertices at a finite, non-zero exact distance) is
reported.

For each peer one JSON object is printed on its own line of stdout: its
version and seconds (and the heat method's "precompute" seconds and
"mean_relative_error", null without exact distances), or {"peer", "error"}
when it cannot run. Diagnostics go to stderr.

Requires numpy, pygeodesic and potpourri3d (pip install pygeodesic
potpourri3d; for an offline machine see ../shared/PEERS.md).
"""

import os

# One thread: the peers are the single-threaded user's choice.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import argparse
import importlib.metadata
import json
import sys
import time

import numpy as np

from peer_mesh import load_obj

PEERS = ("pygeodesic-exact", "potpourri3d-heat")


def emit(obj):
    print(json.dumps(obj), flush=True)


def mean_relative_error(d, exact):
    ok = np.isfinite(exact) & (exact > 0)
    return float(np.mean(np.abs(d[ok] - exact[ok]) / exact[ok]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mesh", required=True)
    ap.add_argument("--source", type=int, required=True)
    ap.add_argument("--exact-out")
    ap.add_argument("--max-exact-faces", type=int, default=400_000)
    ap.add_argument("--peers", default=os.environ.get("CAVITY_PEERS", ",".join(PEERS)))
    args = ap.parse_args()
    V, F = load_obj(args.mesh)
    exact = None
    for peer in args.peers.split(","):
        try:
            if peer == "pygeodesic-exact":
                if len(F) > args.max_exact_faces:
                    emit({"peer": peer, "error": f"not run: {len(F)} faces > --max-exact-faces {args.max_exact_faces}"})
                    continue
                import pygeodesic.geodesic as geodesic

                start = time.perf_counter()
                solver = geodesic.PyGeodesicAlgorithmExact(V, F.astype(np.int32))
                d, _ = solver.geodesicDistances(np.array([args.source], dtype=np.int32), None)
                seconds = time.perf_counter() - start
                exact = np.where(np.isfinite(d) & (d < 1e30), d, np.inf)
                if args.exact_out:
                    exact.astype("<f8").tofile(args.exact_out)
                emit({"peer": peer, "version": importlib.metadata.version("pygeodesic"), "seconds": seconds})
            elif peer == "potpourri3d-heat":
                import potpourri3d as pp3d

                start = time.perf_counter()
                solver = pp3d.MeshHeatMethodDistanceSolver(V, F)
                precompute = time.perf_counter() - start
                start = time.perf_counter()
                d = solver.compute_distance(args.source)
                seconds = time.perf_counter() - start
                emit({
                    "peer": peer,
                    "version": importlib.metadata.version("potpourri3d"),
                    "precompute": precompute,
                    "seconds": seconds,
                    "mean_relative_error": None if exact is None else mean_relative_error(d, exact),
                })
            else:
                emit({"peer": peer, "error": f"unknown peer (known: {', '.join(PEERS)})"})
        except Exception as e:  # a peer that fails is reported, not fatal
            print(f"{peer}: {e!r}", file=sys.stderr)
            emit({"peer": peer, "error": repr(e)})


if __name__ == "__main__":
    main()
