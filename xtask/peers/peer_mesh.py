"""The mesh reader the peer scripts share (xtask/peers/*_peers.py)."""

import sys

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
