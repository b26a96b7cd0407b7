#!/usr/bin/env python3
"""Benchmark CPU isotropic remeshers ("peers") against a target edge length.

Called by `cavity bench remesh --python PYTHON` to compare our GPU remesher with the
CPU remeshers a user would pick:

  gpytoolbox  gpytoolbox.remesh_botsch (Botsch and Kobbelt), reprojecting to
              the input, default feature and boundary handling;
  pymeshlab   MeshLab's "Isotropic Explicit Remeshing" filter, defaults other
              than the iteration count and the absolute target length;
  cgal        CGAL's Polygon_mesh_processing::isotropic_remeshing through the
              CGAL SWIG bindings (PyPI package cgal), all faces of a
              Polyhedron_3, CGAL's defaults other than the iteration count.

Usage:

  python3 xtask/peers/remesh_peers.py --mesh PATH.obj --length L \\
      --iterations N [--peers gpytoolbox,pymeshlab,cgal] [--timeout SECONDS]

--peers defaults to the environment variable CAVITY_PEERS, else all peers
(`cavity bench remesh` passes no --peers: set CAVITY_PEERS to pick).

Each peer runs once, in its own process (so that --timeout, default 600 s,
can stop it); only the remeshing call is timed. For each peer one JSON object
is printed on its own line of stdout: its version, the seconds taken and the
statistics of the paper's table 4 against L (faces, shortest and longest edge
over L, smallest, largest and mean vertex valence, smallest interior angle in
degrees, share of edges with length in [0.8 L, 4/3 L]), or {"peer", "error"}
when it cannot run. Diagnostics go to stderr.

Requires numpy. Install the peers with

  pip install gpytoolbox pymeshlab cgal

or, for an offline machine, download the wheels where PyPI is reachable
(matching the target's Python version and platform), carry the folder over
and install from it:

  pip download -d DIR gpytoolbox pymeshlab cgal
  pip install --no-index --find-links DIR gpytoolbox pymeshlab cgal
"""

import argparse
import importlib.metadata
import json
import os
import sys
import time

import numpy as np

from peer_mesh import load_obj
from peer_process import run_isolated


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


def run_cgal(V, F, length, iterations):
    """Remeshed (V, F), seconds, version of the CGAL SWIG bindings (PyPI cgal).

    Timed: the bindings' 4-argument overload

      CGAL_Polygon_mesh_processing.isotropic_remeshing(faces, length, P, iterations)

    which calls CGAL::Polygon_mesh_processing::isotropic_remeshing(faces,
    length, P, parameters::number_of_iterations(iterations)), faces being all
    facet handles of P: no constrained edges, so protect_constraints off and
    every other parameter at CGAL's default (one relaxation step per
    iteration, reprojection onto the input; border edges, if any, stay on
    the border). Before that call it numbers P's items
    (set_halfedgeds_items_id) and copies the facet handles into a
    std::vector, both linear and cheap.

    Not timed: P is built from an OFF file written here with full precision
    (the Polyhedron_3(filename) constructor, which keeps the vertex order and
    the orientation of the triangles), and read back from P.write_to_file with
    17 significant digits.
    """
    import tempfile

    from CGAL import CGAL_Polygon_mesh_processing, CGAL_Polyhedron_3

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mesh.off")
        with open(path, "w") as f:
            f.write(f"OFF\n{len(V)} {len(F)} 0\n")
            np.savetxt(f, V, fmt="%.17g")
            np.savetxt(f, np.column_stack([np.full(len(F), 3), F]), fmt="%d")
        P = CGAL_Polyhedron_3.Polyhedron_3(path)
        if P.size_of_facets() != len(F):
            raise RuntimeError(f"CGAL read {P.size_of_facets()} of {len(F)} triangles (not an oriented 2-manifold?)")
        faces = list(P.facets())
        start = time.perf_counter()
        CGAL_Polygon_mesh_processing.isotropic_remeshing(faces, length, P, iterations)
        seconds = time.perf_counter() - start
        del faces
        if not P.is_pure_triangle():
            raise RuntimeError("CGAL's output has non-triangle faces")
        P.write_to_file(path, 17)
        with open(path) as f:
            # OFF header, nv nf ne, nv lines x y z, nf lines 3 a b c.
            tokens = " ".join(line.split("#")[0] for line in f).split()
    if tokens[0] != "OFF":
        raise RuntimeError(f"unexpected OFF header from CGAL: {tokens[0]!r}")
    nv, nf = int(tokens[1]), int(tokens[2])
    U = np.array(tokens[4 : 4 + 3 * nv], dtype=np.float64).reshape(nv, 3)
    G = np.array(tokens[4 + 3 * nv :], dtype=np.int64).reshape(nf, 4)
    return U, G[:, 1:], seconds, importlib.metadata.version("cgal")


PEERS = {"gpytoolbox": run_gpytoolbox, "pymeshlab": run_pymeshlab, "cgal": run_cgal}


def _roots(label, a, b):
    """Component labels of the graph with edges (a, b), by propagation."""
    label = label.copy()
    while True:
        m = np.minimum(label[a], label[b])
        new = label.copy()
        np.minimum.at(new, a, m)
        np.minimum.at(new, b, m)
        new = new[new]
        if np.array_equal(new, label):
            return label
        label = new


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
    angles = np.degrees(np.stack(angles, axis=1))  # faces x 3, at corners 0, 1, 2
    # Boundary edges: undirected edges with one face.
    e_all = np.sort(F[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    keys, counts = np.unique(e_all[:, 0] * len(V) + e_all[:, 1], return_counts=True)
    boundary = keys[counts == 1]
    ba, bb = boundary // len(V), boundary % len(V)
    on_boundary = np.bincount(np.concatenate([ba, bb]), minlength=len(V))
    # Sharp boundary corners: not on exactly two boundary edges, or face
    # angles summing below 10 degrees (as cavity's Quality::min_angle_away).
    angle_sum = np.bincount(F.ravel(), weights=angles.ravel(), minlength=len(V))
    sharp = (on_boundary > 0) & ((on_boundary != 2) | (angle_sum < 10.0))
    # Components (faces joined through shared vertices), by label propagation
    # over the faces' vertices.
    label = np.arange(len(V))
    while True:
        m = label[F].min(axis=1)
        new = label.copy()
        np.minimum.at(new, F.ravel(), np.repeat(m, 3))
        new = new[new]
        if np.array_equal(new, label):
            break
        label = new
    comp = label[F[:, 0]]
    sizes = np.bincount(comp, minlength=len(V))[comp]
    counted = (sizes >= 8) & ~sharp[F].any(axis=1)
    diagonal = np.linalg.norm(V.max(axis=0) - V.min(axis=0))
    cross = np.linalg.norm(np.cross(P[:, 1] - P[:, 0], P[:, 2] - P[:, 0]), axis=1)
    longest = np.max([np.sum((P[:, (k + 1) % 3] - P[:, k]) ** 2, axis=1) for k in range(3)], axis=0)
    loops = len(np.unique(_roots(np.arange(len(V)), ba, bb)[np.unique(np.concatenate([ba, bb]))])) if len(ba) else 0
    used = np.bincount(F.ravel(), minlength=len(V)) > 0
    return {
        "min_angle_away": float(angles[counted].min()) if counted.any() else 180.0,
        "zero_area": int(np.sum(cross <= 1e-6 * longest)),
        "zero_length": int(np.sum(lengths <= 1e-6 * diagonal)),
        "boundary_loops": int(loops),
        "euler": int(used.sum() - len(lengths) + len(F)),
        "faces": len(F),
        "min_edge": float(lengths.min() / length),
        "max_edge": float(lengths.max() / length),
        "min_valence": int(valence.min()),
        "max_valence": int(valence.max()),
        "mean_valence": float(valence.mean()),
        "min_angle": float(angles.min()),
        "in_band": float(np.mean((lengths >= 0.8 * length) & (lengths <= 4 / 3 * length))),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mesh", required=True, help="triangle mesh, OBJ")
    parser.add_argument("--length", type=float, required=True, help="target edge length L (model units)")
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument(
        "--peers",
        default=os.environ.get("CAVITY_PEERS", ",".join(PEERS)),
        help="comma-separated, from: " + ", ".join(PEERS) + " (default: $CAVITY_PEERS, else all)",
    )
    parser.add_argument("--timeout", type=float, default=600, help="seconds per peer, its import and data transfer included (default 600)")
    args = parser.parse_args()

    V, F = load_obj(args.mesh)
    print(f"{args.mesh}: {len(V)} vertices, {len(F)} faces", file=sys.stderr)
    for peer in args.peers.split(","):
        if peer not in PEERS:
            result = f"unknown peer (known: {', '.join(PEERS)})"
        else:
            result = run_isolated(PEERS[peer], (V, F, args.length, args.iterations), args.timeout)
        if isinstance(result, str):
            line = {"peer": peer, "error": result}
        else:
            U, G, seconds, version = result
            line = {"peer": peer, "version": version, "seconds": seconds, **quality(U, G, args.length)}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
