"""A grid of N³ unit cubes as a binary legacy VTK file: `hex` (a hexahedron
per cube), `tet` (six Kuhn tetrahedra per cube) or `mixed` (cube c, by
c % 4: a hexahedron, two prisms, six tetrahedra, or six pyramids round a
new vertex at its centre; the cubes do not match across their faces, which
the operators' build does not need).

Usage: python3 xtask/generators/volume_grid.py hex|tet|mixed N OUT.vtk

Used for the volumetric operators' table of docs/benchmarks.md (issue 55
item 6). numpy only.
"""
import sys
import numpy as np
kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = n + 1
i = np.arange(s ** 3)
pts = np.stack([i % s, i // s % s, i // (s * s)], 1).astype('>f4')
c = np.arange(n ** 3)
x, y, z = c % n, c // n % n, c // (n * n)
def v(dx, dy, dz):
    return (x + dx) + (y + dy) * s + (z + dz) * s * s
h = np.stack([v(0,0,0), v(1,0,0), v(1,1,0), v(0,1,0), v(0,0,1), v(1,0,1), v(1,1,1), v(0,1,1)], 1)
PATHS = [[0,1,2,6],[0,2,3,6],[0,3,7,6],[0,7,4,6],[0,4,5,6],[0,5,1,6]]
FACES = [[0,3,2,1],[4,5,6,7],[0,1,5,4],[1,2,6,5],[2,3,7,6],[3,0,4,7]]
groups = []  # (vtk type, vertex array)
if kind == 'hex':
    groups.append((12, h))
elif kind == 'tet':
    groups.append((10, np.concatenate([h[:, p] for p in PATHS])))
else:
    sel = [h[c % 4 == k] for k in range(4)]
    groups.append((12, sel[0]))
    groups.append((13, np.concatenate([sel[1][:, [0,1,2,4,5,6]], sel[1][:, [0,2,3,4,6,7]]])))
    groups.append((10, np.concatenate([sel[2][:, p] for p in PATHS])))
    m = len(sel[3])
    centres = (pts.astype('f4')[sel[3]].mean(1)).astype('>f4')
    apex = len(pts) + np.arange(m)
    pts = np.concatenate([pts, centres])
    pyr = [np.concatenate([sel[3][:, [f[0], f[3], f[2], f[1]]], apex[:, None]], 1) for f in FACES]
    groups.append((14, np.concatenate(pyr)))
with open(out, 'wb') as f:
    f.write(b'# vtk DataFile Version 3.0\ngrid\nBINARY\nDATASET UNSTRUCTURED_GRID\n')
    f.write(b'POINTS %d float\n' % len(pts))
    f.write(pts.astype('>f4').tobytes())
    cells = sum(len(g) for _, g in groups)
    size = sum(len(g) * (g.shape[1] + 1) for _, g in groups)
    f.write(b'\nCELLS %d %d\n' % (cells, size))
    for _, g in groups:
        f.write(np.concatenate([np.full((len(g), 1), g.shape[1]), g], 1).astype('>i4').tobytes())
    f.write(b'\nCELL_TYPES %d\n' % cells)
    for t, g in groups:
        f.write(np.full(len(g), t).astype('>i4').tobytes())
    f.write(b'\n')
print(out, len(pts), 'points', cells, 'cells')
