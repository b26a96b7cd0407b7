#!/usr/bin/env python3
"""Benchmark CPU isotropic remeshers ("peers") against a target edge length.

Called by `cavity bench remesh --python PYTHON` to compare our GPU remesher with the
CPU remeshers a user would pick:

  gpytoolbox  gpytoolbox.remesh_botsch (Botsch and Kobbelt), reprojecting to
              the input, default feature and boundary handling;
  pymeshlab   MeshLab's "Isotropic Explicit Remeshing" filter, defaults other
              than the iteration count and the absolute target length.

Usage:

  python3 xtask/peers/remesh_peers.py --mesh PATH.obj --length L \\
      --iterations N [--peers gpytoolbox,pymeshlab] [--timeout SECONDS]

Each peer runs once, in its own process (so that --timeout, default 600 s,
can stop it); only the remeshing call is timed. For each peer one JSON object
is printed on its own line of stdout: its version, the seconds taken and the
statistics of the paper's table 4 against L (faces, shortest and longest edge
over L, smallest, largest and mean vertex valence, smallest interior angle in
degrees, share of edges with length in [0.8 L, 4/3 L]), or {"peer", "error"}
when it cannot run. Diagnostics go to stderr.

Requires numpy. Install the peers with

  pip install gpytoolbox pymeshlab

or, for an offline machine, download the wheels where PyPI is reachable
(matching the target's Python version and platform), carry the folder over
and install from it:

  pip download -d DIR gpytoolbox pymeshlab
  pip install --no-index --find-links DIR gpytoolbox pymeshlab
"""

import argparse
import importlib.metadata
import json
import multiprocessing
import os
import sys
import time

import numpy as np


def load_obj(path):
    """Vertices (n x 3 float64) and triangles (m x 3 int64, 0-based) of an
    OBJ file; face corners may be written `a`, `a/b`, `a//c` or `a/b/c`."""
    verts, faces = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("v "):
                verts.append(line.split()[1:4])
            elif line.startswith("f "):
                corners = line.split()[1:]
                if len(corners) != 3:
                    sys.exit(f"{path}: only triangles are supported: {line.strip()}")
                faces.append([c.split("/")[0] for c in corners])
    return np.array(verts, dtype=np.float64), np.array(faces, dtype=np.int64) - 1


def run_gpytoolbox(V, F, length, iterations):
    """Remeshed (V, F), seconds, version of gpytoolbox."""
    import gpytoolbox

    F = F.astype(np.int32)  # its index type, so that no conversion is timed
    start = time.perf_counter()
    U, G = gpytoolbox.remesh_botsch(V, F, i=iterations, h=length, project=True)
    return U, G, time.perf_counter() - start, importlib.metadata.version("gpytoolbox")


def run_pymeshlab(V, F, length, iterations):
    """Remeshed (V, F), seconds, version of pymeshlab."""
    import pymeshlab

    ms = pymeshlab.MeshSet()
    ms.add_mesh(pymeshlab.Mesh(vertex_matrix=V, face_matrix=F.astype(np.int32)))
    # pymeshlab 2022.2 renamed the filter and AbsoluteValue to PureValue.
    if hasattr(pymeshlab, "PureValue"):
        name, target = "meshing_isotropic_explicit_remeshing", pymeshlab.PureValue(length)
    else:
        name, target = "remeshing_isotropic_explicit_remeshing", pymeshlab.AbsoluteValue(length)
    start = time.perf_counter()
    ms.apply_filter(name, iterations=iterations, targetlen=target)
    seconds = time.perf_counter() - start
    mesh = ms.current_mesh()
    return mesh.vertex_matrix(), mesh.face_matrix(), seconds, importlib.metadata.version("pymeshlab")


PEERS = {"gpytoolbox": run_gpytoolbox, "pymeshlab": run_pymeshlab}


def worker(conn, peer, V, F, length, iterations):
    """Child process: run one peer and send back its output mesh or error."""
    os.dup2(2, 1)  # whatever the peer prints goes to stderr, not our stdout
    try:
        conn.send(PEERS[peer](V, F, length, iterations))
    except Exception as e:  # ImportError (not installed) or a failed run
        conn.send(f"{type(e).__name__}: {e}")


def run_peer(peer, V, F, length, iterations, timeout):
    """(V, F, seconds, version) of one peer, or a string saying why not."""
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter per peer
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=worker, args=(child, peer, V, F, length, iterations))
    proc.start()
    child.close()  # so that a crashed child reads as EOF here
    try:
        if not parent.poll(timeout):
            return f"exceeded the timeout of {timeout} s"
        return parent.recv()
    except EOFError:
        proc.join()
        return f"the process died without a result (exit code {proc.exitcode})"
    finally:
        proc.kill()
        proc.join()


def quality(V, F, length):
    """The table-4 statistics of triangle mesh (V, F) against length L."""
    V, F = np.asarray(V, np.float64), np.asarray(F, np.int64)
    # Unique undirected edges, each encoded as min * n + max.
    e = np.sort(F[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    e = np.unique(e[:, 0] * len(V) + e[:, 1])
    a, b = e // len(V), e % len(V)
    lengths = np.linalg.norm(V[a] - V[b], axis=1)
    # Valence: unique edges per vertex, over the vertices a face uses.
    valence = np.bincount(np.concatenate([a, b]), minlength=len(V))
    valence = valence[np.bincount(F.ravel(), minlength=len(V)) > 0]
    # Interior angle at each corner k of each face, in degrees.
    P = V[F]
    angles = []
    for k in range(3):
        u, v = P[:, (k + 1) % 3] - P[:, k], P[:, (k + 2) % 3] - P[:, k]
        angles.append(np.arctan2(np.linalg.norm(np.cross(u, v), axis=1), np.einsum("ij,ij->i", u, v)))
    return {
        "faces": len(F),
        "min_edge": float(lengths.min() / length),
        "max_edge": float(lengths.max() / length),
        "min_valence": int(valence.min()),
        "max_valence": int(valence.max()),
        "mean_valence": float(valence.mean()),
        "min_angle": float(np.degrees(np.min(angles))),
        "in_band": float(np.mean((lengths >= 0.8 * length) & (lengths <= 4 / 3 * length))),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mesh", required=True, help="triangle mesh, OBJ")
    parser.add_argument("--length", type=float, required=True, help="target edge length L (model units)")
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated, from: " + ", ".join(PEERS))
    parser.add_argument("--timeout", type=float, default=600, help="seconds per peer, its import and data transfer included (default 600)")
    args = parser.parse_args()

    V, F = load_obj(args.mesh)
    print(f"{args.mesh}: {len(V)} vertices, {len(F)} faces", file=sys.stderr)
    for peer in args.peers.split(","):
        if peer not in PEERS:
            result = f"unknown peer (known: {', '.join(PEERS)})"
        else:
            result = run_peer(peer, V, F, args.length, args.iterations, args.timeout)
        if isinstance(result, str):
            line = {"peer": peer, "error": result}
        else:
            U, G, seconds, version = result
            line = {"peer": peer, "version": version, "seconds": seconds, **quality(U, G, args.length)}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
