#!/usr/bin/env python3
"""Exact geodesic distances as test data (tests/tests/geodesic.rs).

Writes, for one mesh and one source vertex, the exact polyhedral distance of
every vertex (pygeodesic, the MMP-style exact algorithm) and the mean
relative error of the heat method (potpourri3d) against it, the bar our
propagation must meet:

  python3 xtask/peers/geodesic_reference.py --mesh assets/dragon.obj \\
      --source 0 --out tests/data/geodesic/dragon-0.txt

The file: a header of `#` lines (mesh, source, the peers' versions, the heat
method's mean relative error as `# heat_mean_relative_error X`), then one
distance per vertex and line, in the mesh's vertex order (`inf` where the
source does not reach). The mean relative error is taken over the vertices
with a finite, non-zero exact distance.

Requires numpy, pygeodesic and potpourri3d (pip install pygeodesic
potpourri3d).
"""

import argparse
import importlib.metadata

import numpy as np
import potpourri3d as pp3d
import pygeodesic.geodesic as geodesic


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mesh", required=True)
    ap.add_argument("--source", type=int, required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    V, F = pp3d.read_mesh(args.mesh)
    V = np.ascontiguousarray(V, dtype=np.float64)
    F = np.ascontiguousarray(F, dtype=np.int32)
    exact, _ = geodesic.PyGeodesicAlgorithmExact(V, F).geodesicDistances(
        np.array([args.source], dtype=np.int32), None
    )
    exact = np.where(np.isfinite(exact) & (exact < 1e30), exact, np.inf)
    heat = pp3d.MeshHeatMethodDistanceSolver(V, F).compute_distance(args.source)
    ok = np.isfinite(exact) & (exact > 0)
    heat_error = float(np.mean(np.abs(heat[ok] - exact[ok]) / exact[ok]))
    version = importlib.metadata.version
    with open(args.out, "w") as f:
        f.write(f"# mesh {args.mesh}\n# source {args.source}\n")
        f.write(f"# exact: pygeodesic {version('pygeodesic')}\n")
        f.write(f"# heat method: potpourri3d {version('potpourri3d')}\n")
        f.write(f"# heat_mean_relative_error {heat_error:.6e}\n")
        for d in exact:
            f.write(f"{d:.9g}\n")
    print(f"{args.mesh}: {ok.sum()} vertices reached, heat method mean relative error {heat_error:.4%}")


if __name__ == "__main__":
    main()
