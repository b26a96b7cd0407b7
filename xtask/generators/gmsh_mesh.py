"""Hexahedral and mixed volumetric meshes with Gmsh (the `gmsh` wheel,
4.15.2; see ../shared/PEERS.md: it needs libGL, so run it on the
development machine), written as Gmsh .msh files that `cavity tet` reads.

    python3 gmsh_mesh.py hex OUT.msh [--n N]
    python3 gmsh_mesh.py mixed OUT.msh [--n N] [--version 2.2|4.1] [--binary]
    python3 gmsh_mesh.py surface OUT.msh --surface S.obj [--n N] [--hexahedra]

`hex`: the unit cube as N x N x N hexahedra (a transfinite, recombined
grid). `mixed`: a unit box of N^3 hexahedra joined to a box of
tetrahedra, with the pyramids Gmsh puts on the hexahedra's faces between
them, and apart from them a box of prisms (a triangulated square
extruded in N layers). `surface`: the volume inside a closed triangle
surface (an OBJ, such as the Stanford bunny repaired by
`tetgen_mesh.py --repair --save-surface`), tetrahedra of size about
1/N of its bounding box (HXT, in parallel), each split into four
hexahedra with --hexahedra (Gmsh's subdivision algorithm 2): an
all-hexahedral mesh of a real shape. The test fixtures in tests/data/volume/ are `mixed --n 2` in
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


def surface(n, path):
    import os
    import tempfile

    vertices, triangles = [], []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] == "v":
                vertices.append(parts[1:4])
            elif parts and parts[0] == "f":
                triangles.append([int(p.split("/")[0]) for p in parts[1:4]])
    with tempfile.TemporaryDirectory() as d:
        stl = os.path.join(d, "surface.stl")
        with open(stl, "w") as out:
            out.write("solid s\n")
            for t in triangles:
                out.write("facet normal 0 0 0\nouter loop\n")
                for i in t:
                    out.write("vertex {} {} {}\n".format(*vertices[i - 1]))
                out.write("endloop\nendfacet\n")
            out.write("endsolid s\n")
        gmsh.merge(stl)
    lo = [min(float(v[k]) for v in vertices) for k in range(3)]
    hi = [max(float(v[k]) for v in vertices) for k in range(3)]
    size = max(h - l for h, l in zip(hi, lo)) / n
    # Patches split at 40-degree creases, each parametrizable (as Gmsh's
    # tutorial 13 remeshes an STL).
    gmsh.model.mesh.classifySurfaces(0.698, True, True, 3.14159)
    gmsh.model.mesh.createGeometry()
    loop = gmsh.model.geo.addSurfaceLoop([t for _, t in gmsh.model.getEntities(2)])
    gmsh.model.geo.addVolume([loop])
    gmsh.model.geo.synchronize()
    gmsh.option.setNumber("Mesh.MeshSizeMax", size)
    gmsh.option.setNumber("Mesh.MeshSizeFromCurvature", 0)
    gmsh.option.setNumber("Mesh.Algorithm3D", 10)
    gmsh.model.mesh.generate(3)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("kind", choices=["hex", "mixed", "surface"])
    parser.add_argument("--surface")
    parser.add_argument("--hexahedra", action="store_true")
    parser.add_argument("out")
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--version", choices=["2.2", "4.1"], default="4.1")
    parser.add_argument("--binary", action="store_true")
    args = parser.parse_args()
    gmsh.initialize()
    gmsh.option.setNumber("General.Terminal", 0)
    start = time.time()
    if args.kind == "surface":
        surface(args.n, args.surface)
        if args.hexahedra:
            gmsh.option.setNumber("Mesh.SubdivisionAlgorithm", 2)
            gmsh.model.mesh.refine()
    else:
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
