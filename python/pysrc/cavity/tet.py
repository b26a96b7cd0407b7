"""Volumetric meshes: Catmull-Clark subdivision, the boundary surface,
Laplacian smoothing of the inner vertices (after Mahmoud et al. 2024, "A
Ternary Sparse Matrix Representation for Volumetric Mesh Subdivision and
Processing on GPUs"), and parallel tetrahedral edge collapse (after
"Massively parallel adaptive edge collapse of tetrahedral meshes").

- ``V``: vertex positions, shape ``(n, 3)``, float32 or float64 (computed in
  float32);
- ``T``: the cells, an integer array ``(m, k)`` of one cell type: ``k`` = 4
  tetrahedra, 5 pyramids, 6 prisms, 8 hexahedra, their vertices in the VTK
  cell types' order; or a list of such blocks for a mesh of several types.
  Cells listed inside out are turned outward first.

Errors as in the package: ``ValueError`` for bad arrays or settings (naming
the argument), ``RuntimeError`` for a failed device or run, ``OSError`` for
a file that cannot be read or written.
"""

import numpy as np

from . import _cavity
from ._args import _bool, _device, _float, _int, _Progress, _vertices

__all__ = ["read", "write", "subdivide", "boundary", "smooth", "simplify"]

_WIDTHS = {4: "tetrahedra", 5: "pyramids", 6: "prisms", 8: "hexahedra"}


def _cells(T, n, name="T"):
    """``T`` (one block or a list of blocks) as a list of C-contiguous
    uint32 blocks of indices below ``n``."""
    blocks = list(T) if isinstance(T, (list, tuple)) else [T]
    if not blocks:
        raise ValueError(f"{name}: no cell blocks")
    out = []
    for b in blocks:
        a = np.asarray(b)
        if a.ndim != 2 or a.shape[1] not in _WIDTHS:
            raise ValueError(
                f"{name} must have shape (m, k) with k 4 (tetrahedra), 5 (pyramids), "
                f"6 (prisms) or 8 (hexahedra), not {a.shape}"
            )
        if a.size and not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"{name} must hold integer vertex indices, not {a.dtype}")
        if a.size:
            low, high = int(a.min()), int(a.max())
            if low < 0:
                raise ValueError(f"{name}: index {low} is negative")
            if high >= n:
                raise ValueError(f"{name}: index {high}, but V has {n} vertices")
        out.append(np.ascontiguousarray(a, dtype=np.uint32))
    return out


def _one(blocks):
    """A list of blocks as its one block, or the list."""
    return blocks[0] if len(blocks) == 1 else blocks


def read(path):
    """Reads a volumetric mesh file: MEDIT ``.mesh``, TetGen ``.node`` /
    ``.ele``, VTK ``.vtk`` (legacy unstructured grid), Gmsh ``.msh`` (2.2 and
    4.1, ASCII or binary).

    Returns ``(V, T)``: float32 ``(n, 3)`` and the cells, a uint32 ``(m, k)``
    array when they are of one type, else a list of such blocks (in the
    order each type first appears).

    Raises ``OSError`` naming the file and what is wrong, ``ValueError`` for
    general polyhedra (which have no block).
    """
    V, blocks = _cavity.tet_read(str(path))
    return V, _one(blocks)


def write(path, V, T, *, binary=False):
    """Writes a volumetric mesh file in the format of its extension
    (``.mesh``, ``.node``/``.ele`` for tetrahedra, ``.vtk``, ``.msh``; VTK and
    Gmsh 4.1 as ASCII unless ``binary``), through a temporary file renamed
    into place.
    """
    v = _vertices(V)
    _cavity.tet_write(str(path), v, _cells(T, v.shape[0]), _bool(binary, "binary"))


def subdivide(V, T, *, levels=1, plain=False, device="auto", progress=None):
    """``levels`` levels of volumetric Catmull-Clark subdivision: each cell
    becomes one hexahedron per corner. Cells the smooth rules would invert
    are kept valid (their vertices relaxed towards the linear split)
    unless ``plain``.

    ``progress``: a ``tqdm`` bar over the levels (None: when tqdm is
    installed and stderr is a terminal; True, False), or a callable
    ``progress(level, "level")``.

    Returns ``(V, H)``: float32 ``(n', 3)`` and uint32 hexahedra ``(m', 8)``.

    Raises ``ValueError`` when the result would not fit the host's or the
    device's memory (naming ``levels``).
    """
    v = _vertices(V)
    cells = _cells(T, v.shape[0])
    levels, plain = _int(levels, "levels", 1), _bool(plain, "plain")
    with _Progress(progress, levels, "subdivide") as report:
        V2, blocks, _ = _cavity.tet_subdivide(v, cells, levels, plain, _device(device), report)
    return V2, _one(blocks)


def boundary(V, T, *, device="auto"):
    """The boundary surface: the faces of one cell (whose cells' signs do
    not cancel), each facing out of the mesh, as triangles over the
    vertices of ``V`` (a quadrilateral as two triangles).

    Returns uint32 ``(k, 3)``; ``np.unique(F)`` are the boundary vertices.
    """
    v = _vertices(V)
    F, _ = _cavity.tet_boundary(v, _cells(T, v.shape[0]), _device(device))
    return F


def smooth(V, T, *, iterations=10, plain=False, device="auto"):
    """``iterations`` steps of Laplacian smoothing of the inner vertices
    (each moved to the mean of its neighbours over the edges; the boundary
    stays). A step may not invert a cell, nor lower its scaled Jacobian
    below 0.1 or its value before the step, unless ``plain``.

    Returns the moved vertices, float32 ``(n, 3)``.
    """
    v = _vertices(V)
    cells = _cells(T, v.shape[0])
    iterations, plain = _int(iterations, "iterations", 1), _bool(plain, "plain")
    out, _ = _cavity.tet_smooth(v, cells, iterations, plain, _device(device))
    return out


def simplify(
    V,
    T,
    *,
    ratio=None,
    cells=None,
    length=None,
    criterion="length",
    field=None,
    max_error=None,
    placement="midpoint",
    device="auto",
):
    """Parallel adaptive edge collapse of a valid tetrahedral mesh ``T``
    ``(m, 4)`` towards at most ``ratio`` of its cells, at most ``cells``
    cells, or edges of the target ``length`` (model units; at most one of
    the three; none runs the criterion to convergence).

    ``criterion``: ``"length"`` (shortest edges first), ``"field"`` (the
    per-vertex scalar ``field`` ``(n,)`` interpolated with at most
    ``max_error`` of error) or ``"quality"``; the kept vertex goes to the
    edge's ``"midpoint"`` or to its lower-numbered ``"endpoint"``.

    Returns ``(V, T)``: float32 ``(n', 3)`` and uint32 ``(m', 4)``; with a
    ``field``, ``(V, T, field')``, the field at the kept vertices.

    Raises ``ValueError`` for an input that is not a valid tetrahedral mesh
    (a flat tetrahedron, a face of three tetrahedra, two overlapping ones,
    two vertices at one position: the message names the element) or bad
    settings.
    """
    v = _vertices(V)
    t = _cells(T, v.shape[0])
    if len(t) != 1 or t[0].shape[1] != 4:
        raise ValueError("T must be tetrahedra, shape (m, 4)")
    given = [name for name, x in (("ratio", ratio), ("cells", cells), ("length", length)) if x is not None]
    if len(given) > 1:
        raise ValueError(f"{' and '.join(given)}: give at most one target")
    target = (
        None if ratio is None else _float(ratio, "ratio"),
        None if cells is None else _int(cells, "cells", 1),
        None if length is None else _float(length, "length"),
    )
    if criterion not in ("length", "field", "quality"):
        raise ValueError(f'criterion must be "length", "field" or "quality", not {criterion!r}')
    if placement not in ("midpoint", "endpoint"):
        raise ValueError(f'placement must be "midpoint" or "endpoint", not {placement!r}')
    values = None
    if field is not None:
        values = np.asarray(field)
        if values.shape != (v.shape[0],) or not np.issubdtype(values.dtype, np.number):
            raise ValueError(f"field must be numbers of shape ({v.shape[0]},), not {values.shape}")
        values = np.ascontiguousarray(values, dtype=np.float32)
    elif criterion == "field":
        raise ValueError('field: the "field" criterion needs a per-vertex field')
    if max_error is not None:
        if criterion != "field":
            raise ValueError('max_error is the "field" criterion\'s bound: add criterion="field"')
        max_error = _float(max_error, "max_error")
    V2, T2, f2, _ = _cavity.tet_simplify(
        v, t[0], target, criterion, values, max_error, placement, _device(device)
    )
    if field is not None:
        return V2, T2, f2
    return V2, T2

