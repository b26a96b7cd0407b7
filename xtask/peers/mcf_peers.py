#!/usr/bin/env python3
"""Benchmark the CPU peers of implicit mean curvature flow.

Called by `cavity bench smooth --python PYTHON` to compare one conjugate-gradient
iteration of our matrix-free flow with what a user would pick on the CPU:

  libigl-scipy  libigl's cotmatrix L and massmatrix M (mixed Voronoi), the
                system M - dt L assembled by SciPy, solved by SciPy's
                unpreconditioned conjugate gradient (scipy.sparse.linalg.cg),
                one coordinate after the other, single-threaded.

Usage:

  python3 xtask/peers/mcf_peers.py --mesh PATH.obj --dt DT --iterations N \\
      [--peers libigl-scipy]

--dt is the absolute time step (squared units of the mesh). --peers defaults to
the environment variable CAVITY_PEERS, else all peers.

For each peer one JSON object is printed on its own line of stdout: its
version, the seconds to assemble the matrix ("assembly") and the seconds of
one iteration over all three coordinates ("per_iteration": the three solves
of N iterations each, over N), or {"peer", "error"} when it cannot run.
Boundary vertices are not fixed here: the timing of an iteration does not
depend on it. Diagnostics go to stderr.

Requires numpy, scipy and libigl (pip install numpy scipy libigl; for an
offline machine see ../shared/PEERS.md).
"""

import os

# One thread: the peer is the single-threaded user's choice.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import argparse
import importlib.metadata
import json
import sys
import time

import numpy as np

from peer_mesh import load_obj


def run_libigl_scipy(V, F, dt, iterations):
    """Assembly seconds, seconds per iteration, version string."""
    import igl
    import scipy
    import scipy.sparse.linalg

    start = time.perf_counter()
    L = igl.cotmatrix(V, F)
    M = igl.massmatrix(V, F, igl.MASSMATRIX_TYPE_VORONOI)
    A = (M - dt * L).tocsr()
    B = M @ V
    assembly = time.perf_counter() - start
    done = [0]

    def count(_):
        done[0] += 1

    start = time.perf_counter()
    for k in range(3):
        scipy.sparse.linalg.cg(
            A, B[:, k], x0=V[:, k].copy(), rtol=1e-30, atol=0.0,
            maxiter=iterations, callback=count,
        )
    seconds = time.perf_counter() - start
    if done[0] != 3 * iterations:
        print(f"libigl-scipy: {done[0]} iterations for {3 * iterations}", file=sys.stderr)
    version = "libigl {} / scipy {}".format(
        importlib.metadata.version("libigl"), scipy.__version__)
    return assembly, seconds / max(done[0] / 3, 1), version


PEERS = {"libigl-scipy": run_libigl_scipy}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", required=True)
    parser.add_argument("--dt", type=float, required=True)
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--peers", default=os.environ.get("CAVITY_PEERS", ",".join(PEERS)))
    args = parser.parse_args()
    V, F = load_obj(args.mesh)
    for name in [p for p in args.peers.split(",") if p]:
        if name not in PEERS:
            print(json.dumps({"peer": name, "error": f"unknown peer; known: {', '.join(PEERS)}"}))
            continue
        try:
            assembly, per_iteration, version = PEERS[name](V, F, args.dt, args.iterations)
            print(json.dumps({"peer": name, "version": version, "assembly": assembly,
                              "per_iteration": per_iteration}), flush=True)
        except Exception as e:  # a peer that fails must not stop the others
            print(json.dumps({"peer": name, "error": f"{type(e).__name__}: {e}"}), flush=True)


if __name__ == "__main__":
    main()
