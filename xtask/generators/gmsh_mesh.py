"""Hexahedral and mixed volumetric meshes with Gmsh (the `gmsh` wheel,
4.15.2; see ../shared/PEERS.md: it needs libGL, so run it on the
development machine), written as Gmsh .msh files that `cavity tet` reads.

    python3 gmsh_mesh.py hex OUT.msh [--n N]
    python3 gmsh_mesh.py mixed OUT.msh [--n N] [--version 2.2|4.1] [--binary]

`hex`: the unit cube as N x N x N hexahedra (a transfinite, recombined
grid). `mixed`: a unit box of N^3 hexahedra joined to a box of
tetrahedra, with the pyramids Gmsh puts on the hexahedra's faces between
them, and apart from them a box of prisms (a triangulated square
extruded in N layers). The test fixtures in tests/data/volume/ are `mixed --n 2` in
each version and encoding.
"""

import argparse
import time

import gmsh


def hex_box(n):
    box = gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
    gmsh.model.occ.synchronize()
    for dim, tag in gmsh.model.getEntities(1):
        gmsh.model.mesh.setTransfiniteCurve(tag, n + 1)
    for dim, tag in gmsh.model.getEntities(2):
        gmsh.model.mesh.setTransfiniteSurface(tag)
        gmsh.model.mesh.setRecombine(2, tag)
    gmsh.model.mesh.setTransfiniteVolume(box)
    gmsh.model.mesh.generate(3)


def mixed(n):
    geo = gmsh.model.geo
    # Hexahedra, x in [0, 1]: a recombined square extruded in n layers.
    p = [geo.addPoint(x, y, 0) for x, y in [(0, 0), (1, 0), (1, 1), (0, 1)]]
    lines = [geo.addLine(p[i], p[(i + 1) % 4]) for i in range(4)]
    square = geo.addPlaneSurface([geo.addCurveLoop(lines)])
    geo.mesh.setTransfiniteSurface(square)
    for line in lines:
        geo.mesh.setTransfiniteCurve(line, n + 1)
    geo.mesh.setRecombine(2, square)
    out = geo.extrude([(2, square)], 0, 0, 1, numElements=[n], recombine=True)
    # Its face at x = 1 (the side extruded from the second line), quads,
    # extruded without layers: tetrahedra, and pyramids on the quads.
    side = out[2 + 1]
    geo.extrude([side], 1, 0, 0)
    # Prisms, x in [2.5, 3.5]: a triangulated square extruded in n layers.
    q = [geo.addPoint(x, y, 0) for x, y in [(2.5, 0), (3.5, 0), (3.5, 1), (2.5, 1)]]
    lines = [geo.addLine(q[i], q[(i + 1) % 4]) for i in range(4)]
    tri = geo.addPlaneSurface([geo.addCurveLoop(lines)])
    for line in lines:
        geo.mesh.setTransfiniteCurve(line, n + 1)
    geo.extrude([(2, tri)], 0, 0, 1, numElements=[n], recombine=True)
    geo.synchronize()
    gmsh.option.setNumber("Mesh.MeshSizeMax", 1.0 / n)
    gmsh.model.mesh.generate(3)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("kind", choices=["hex", "mixed"])
    parser.add_argument("out")
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--version", choices=["2.2", "4.1"], default="4.1")
    parser.add_argument("--binary", action="store_true")
    args = parser.parse_args()
    gmsh.initialize()
    gmsh.option.setNumber("General.Terminal", 0)
    start = time.time()
    {"hex": hex_box, "mixed": mixed}[args.kind](args.n)
    gmsh.option.setNumber("Mesh.MshFileVersion", float(args.version))
    gmsh.option.setNumber("Mesh.Binary", 1 if args.binary else 0)
    gmsh.option.setNumber("Mesh.SaveAll", 0)
    gmsh.write(args.out)
    types, tags, _ = gmsh.model.mesh.getElements(3)
    counts = {gmsh.model.mesh.getElementProperties(t)[0]: len(x) for t, x in zip(types, tags)}
    print(f"{args.out}: {counts} in {time.time() - start:.1f} s")
    gmsh.finalize()


if __name__ == "__main__":
    main()
