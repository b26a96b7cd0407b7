"""cavity: mesh processing on the GPU (RXMesh's patches and cavity operator).

Plain functions on numpy arrays, in the style of gpytoolbox and libigl's
bindings:

- ``V``: vertex positions, shape ``(n, 3)``, float32 or float64 (computed in
  float32);
- ``F``: triangles, shape ``(m, 3)``, any integer dtype, each index in
  ``[0, n)``;
- options are keyword-only; every function returns new arrays.

Each function runs on ``device="auto"`` (the GPU when there is one, else the
CPU backend, which ``warnings`` says once), ``"cuda"`` or ``"cpu"``.
Duplicate faces are removed before an operation, as the ``cavity`` command
does when it reads a file. Errors (every function): ``ValueError`` for bad
arrays or settings (naming the argument), ``RuntimeError`` for a failed
device or run (the driver's message), ``OSError`` for a file that cannot
be read or written. ``patch_size`` is the most faces of a patch (1 to
8192).

``cavity.Mesh`` keeps a mesh between calls (its topology and patches on
the device); ``cavity.tet`` holds the volumetric functions.
"""

import warnings

import numpy as np

from . import _cavity, tet
from ._args import _bool, _device, _faces, _float, _int, _mesh, _Progress

__all__ = [
    "read",
    "write",
    "info",
    "normals",
    "smooth",
    "denoise",
    "delaunay",
    "remesh",
    "geodesic",
    "polylla",
    "tet",
    "Mesh",
]

def read(path):
    """Reads a surface mesh file (OBJ, OFF, PLY, STL).

    Returns ``(V, F)``: float32 ``(n, 3)`` and uint32 ``(m, 3)`` (polygons are
    triangulated; the reader's warnings go through ``warnings``).

    Raises ``OSError`` naming the file and the line or element that is wrong.
    """
    V, F, said = _cavity.read(str(path))
    for w in said:
        warnings.warn(w, stacklevel=2)
    return V, F


def write(path, V, F):
    """Writes a surface mesh file in the format of its extension (OBJ, OFF,
    PLY, STL), through a temporary file renamed into place.

    Raises ``ValueError`` for bad arrays or an unknown extension, ``OSError``
    when the file cannot be written.
    """
    v, f = _mesh(V, F)
    _cavity.write(str(path), v, f)


def info(V, F):
    """Topology statistics of a mesh, as ``cavity info`` prints them.

    Returns a dict: ``vertices``, ``edges``, ``faces``,
    ``euler_characteristic``, ``components``, ``isolated_vertices``,
    ``boundary_edges``, ``boundary_loops``, ``non_manifold_edges``,
    ``non_manifold_vertices`` (counted after duplicate faces are removed) and
    ``duplicate_faces``.
    """
    v, f = _mesh(V, F)
    return _cavity.info(v, f)


def normals(V, F, *, patch_size=512, device="auto"):
    """Area-weighted vertex normals (unit length; zero for a vertex of no
    face with area).

    Returns float32 ``(n, 3)``.
    """
    v, f = _mesh(V, F)
    N, _ = _cavity.normals(v, f, _int(patch_size, "patch_size", 1), _device(device))
    return N


def smooth(V, F, *, dt=1.0, steps=1, tolerance=1e-5, max_iterations=1000, device="auto"):
    """Implicit mean curvature flow: ``steps`` steps of time step ``dt`` (in
    units of the squared mean edge length), each solved by conjugate
    gradients to the relative residual ``tolerance`` within
    ``max_iterations``. Boundary and non-manifold vertices stay in place.

    Returns the moved vertices, float32 ``(n, 3)`` (the faces are ``F``).
    """
    v, f = _mesh(V, F)
    steps, most = _int(steps, "steps", 1), _int(max_iterations, "max_iterations", 1)
    dt, tolerance = _float(dt, "dt"), _float(tolerance, "tolerance")
    out, _, _ = _cavity.smooth(v, f, dt, steps, tolerance, most, _device(device))
    return out


def denoise(V, F, *, iterations=5, max_hops=None, patch_size=512, device="auto"):
    """Bilateral mesh denoising (Fleishman et al. 2003, as RXMesh):
    ``iterations`` filter passes over neighbourhoods of at most ``max_hops``
    hops (None: as far as the filter's ball reaches). Boundary vertices
    stay in place.

    Returns the moved vertices, float32 ``(n, 3)`` (the faces are ``F``).
    """
    v, f = _mesh(V, F)
    hops = 2**32 - 1 if max_hops is None else _int(max_hops, "max_hops", 1)
    out, _ = _cavity.denoise(
        v,
        f,
        _int(iterations, "iterations", 1),
        hops,
        _int(patch_size, "patch_size", 1),
        _device(device),
    )
    return out


def delaunay(V, F, *, patch_size=256, check=True, device="auto"):
    """Delaunay edge flips (the dynamic RXMesh paper's section 6): every
    interior edge flipped until its opposite angles sum to at most pi; the
    vertices do not move, boundary and non-manifold edges stay.

    Returns ``(V, F)``: float32 ``(n, 3)`` and uint32 ``(m', 3)`` (``m'`` is
    ``m`` less duplicate faces).

    With ``check`` (the default) the result is checked as ``cavity
    delaunay`` checks it before writing (the topology kept; no face of zero
    area where the input had none): ``RuntimeError`` when it fails;
    ``check=False`` returns it unchecked.
    """
    v, f = _mesh(V, F)
    patch_size = _int(patch_size, "patch_size", 1)
    check = _bool(check, "check")
    V2, F2, _ = _cavity.delaunay(v, f, patch_size, check, _device(device))
    return V2, F2


def remesh(
    V,
    F,
    *,
    length=None,
    relative_length=1.0,
    iterations=3,
    feature_angle=None,
    keep_boundary=False,
    check=True,
    device="auto",
    progress=None,
):
    """Isotropic remeshing (split, collapse, flip, smooth; the dynamic
    RXMesh paper's section 6): edges toward ``length`` in model units, or,
    when ``length`` is None, ``relative_length`` times the input's mean
    edge length. ``feature_angle`` (degrees) keeps sharper edges;
    ``keep_boundary`` keeps the boundary as it is.

    ``length`` overrides ``relative_length`` when given. With ``check`` (the
    default) the result is checked as ``cavity remesh`` checks it before
    writing (the topology kept, no face of zero area): ``RuntimeError`` when
    it fails; ``check=False`` returns it unchecked.

    ``progress``: a ``tqdm`` bar over the phases (None: when tqdm is
    installed and stderr is a terminal; True, False), or a callable
    ``progress(iteration, phase)``; what it raises stops the remeshing
    before its next phase and is raised. Ctrl-C stops it there too
    (``KeyboardInterrupt``; Python handles signals on its main thread only,
    so a call from another thread runs to its end).

    Returns ``(V, F)``: float32 ``(n', 3)`` and uint32 ``(m', 3)``.

    Raises ``ValueError`` for bad arrays or settings (a length that would
    make more faces than the device holds names ``length``),
    ``RuntimeError`` when the run fails.
    """
    v, f = _mesh(V, F)
    if length is not None:
        target, relative = _float(length, "length"), False
    else:
        target, relative = _float(relative_length, "relative_length"), True
    angle = None if feature_angle is None else _float(feature_angle, "feature_angle")
    iterations = _int(iterations, "iterations", 0)
    keep, check = _bool(keep_boundary, "keep_boundary"), _bool(check, "check")
    try:
        with _Progress(progress, 4 * iterations, "remesh") as report:
            V2, F2, _ = _cavity.remesh(
                v, f, target, relative, iterations, angle, keep, check, _device(device), report
            )
    except ValueError as e:
        # The library names its setting `length` either way.
        if relative and str(e).startswith("length"):
            raise ValueError("relative_" + str(e)) from None
        raise
    return V2, F2


def geodesic(V, F, sources, *, device="auto"):
    """Geodesic distance from the vertices ``sources`` (an index or a list),
    in model units.

    Returns float32 ``(n,)``; ``inf`` at vertices no path from a source
    reaches (another component).

    Raises ``ValueError`` for bad arrays or a source out of range,
    ``RuntimeError`` when the run fails.
    """
    v, f = _mesh(V, F)
    d, _ = _cavity.geodesic(v, f, _sources(sources, v.shape[0]), _device(device))
    return d


def _sources(sources, n):
    """``sources`` as a C-contiguous uint32 array of vertices below ``n``."""
    s = np.atleast_1d(np.asarray(sources))
    if s.size == 0:
        raise ValueError("sources: at least one vertex is needed")
    if not np.issubdtype(s.dtype, np.integer) or s.ndim != 1:
        raise ValueError(f"sources must be vertex indices, not {s.dtype} of shape {s.shape}")
    if int(s.min()) < 0 or int(s.max()) >= n:
        bad = int(s.min()) if int(s.min()) < 0 else int(s.max())
        raise ValueError(f"sources: vertex {bad}, but V has {n} vertices")
    return np.ascontiguousarray(s, dtype=np.uint32)


def polylla(points, F=None, *, device="auto"):
    """Polylla polygonal mesh (Salinas-Fernandez et al., GPolylla) of the
    Delaunay triangulation of ``points`` (float ``(n, 2)``; triangulated by
    spade, as ``cavity polylla`` triangulates a ``.node`` file), or of the
    triangles ``F`` (integer ``(m, 3)``) over them.

    Returns ``(V, (offsets, indices))``: the positions float64 ``(n, 2)`` and
    the polygons, polygon ``k``'s vertices (counter-clockwise) being
    ``indices[offsets[k]:offsets[k + 1]]`` (both uint32).

    Raises ``ValueError`` for bad points or triangles (degenerate, or an
    edge of more than two), ``RuntimeError`` when the run fails.
    """
    p = np.asarray(points)
    if p.ndim != 2 or p.shape[1] != 2:
        raise ValueError(f"points must have shape (n, 2), not {p.shape}")
    if not np.issubdtype(p.dtype, np.floating) and not np.issubdtype(p.dtype, np.integer):
        raise ValueError(f"points must hold numbers, not {p.dtype}")
    p = np.ascontiguousarray(p, dtype=np.float64)
    if not np.isfinite(p).all():
        row = int(np.argwhere(~np.isfinite(p))[0][0])
        raise ValueError(f"points: point {row} has a coordinate that is not finite")
    f = None if F is None else _faces(F, p.shape[0])
    V, offsets, indices = _cavity.polylla(p, f, _device(device))
    return V, (offsets, indices)


class Mesh:
    """A mesh kept between calls: made once from ``V`` and ``F`` (checked,
    duplicate faces removed, its topology built and, on the GPU, kept on
    the device with its patches), so that a pipeline of calls patches and
    uploads the connectivity once; each call copies only the current
    positions. ``smooth``, ``denoise`` and ``remesh`` change the mesh in
    place and return it (calls chain); ``remesh`` makes a new topology,
    patched at the next call. Every call runs in patches of at most
    ``patch_size`` faces on the mesh's ``device``.

    >>> m = cavity.Mesh(V, F)
    >>> d = m.remesh(relative_length=1.5).smooth(dt=0.5).geodesic([0])
    >>> V2, F2 = m.vertices, m.faces
    """

    def __init__(self, V, F, *, patch_size=512, device="auto"):
        v, f = _mesh(V, F)
        self._m = _cavity.Mesh(v, f, _int(patch_size, "patch_size", 1), _device(device))

    @property
    def vertices(self):
        """The vertices, float32 ``(n, 3)`` (a copy)."""
        return self._m.vertices

    @property
    def faces(self):
        """The faces, uint32 ``(m, 3)`` (a copy; duplicates removed)."""
        return self._m.faces

    @property
    def duplicate_faces(self):
        """The duplicate faces removed when the mesh was made."""
        return self._m.duplicate_faces

    @property
    def device(self):
        """The name of the device the mesh is kept on."""
        return self._m.device

    @property
    def patch_size(self):
        """The most faces of a patch."""
        return self._m.patch_size

    def __repr__(self):
        n, m = self._m.num_vertices, self._m.num_faces
        return f"cavity.Mesh({n} vertices, {m} faces, on {self.device})"

    def normals(self):
        """Area-weighted unit vertex normals (as ``cavity.normals``), float32 ``(n, 3)``."""
        return self._m.normals()

    def smooth(self, *, dt=1.0, steps=1, tolerance=1e-5, max_iterations=1000):
        """Implicit mean curvature flow (as ``cavity.smooth``): the vertices
        move. Returns the mesh."""
        steps, most = _int(steps, "steps", 1), _int(max_iterations, "max_iterations", 1)
        self._m.smooth(_float(dt, "dt"), steps, _float(tolerance, "tolerance"), most)
        return self

    def denoise(self, *, iterations=5, max_hops=None):
        """Bilateral denoising (as ``cavity.denoise``): the vertices move.
        Returns the mesh."""
        hops = 2**32 - 1 if max_hops is None else _int(max_hops, "max_hops", 1)
        self._m.denoise(_int(iterations, "iterations", 1), hops)
        return self

    def geodesic(self, sources):
        """Geodesic distance from the vertices ``sources`` (as
        ``cavity.geodesic``), float32 ``(n,)``, model units."""
        return self._m.geodesic(_sources(sources, self._m.num_vertices))

    def remesh(
        self,
        *,
        length=None,
        relative_length=1.0,
        iterations=3,
        feature_angle=None,
        keep_boundary=False,
        check=True,
        progress=None,
    ):
        """Isotropic remeshing (as ``cavity.remesh``, ``progress`` too): the
        mesh is replaced by the result. Returns the mesh."""
        if length is not None:
            target, relative = _float(length, "length"), False
        else:
            target, relative = _float(relative_length, "relative_length"), True
        angle = None if feature_angle is None else _float(feature_angle, "feature_angle")
        iterations = _int(iterations, "iterations", 0)
        keep, check = _bool(keep_boundary, "keep_boundary"), _bool(check, "check")
        try:
            with _Progress(progress, 4 * iterations, "remesh") as report:
                self._m.remesh(target, relative, iterations, angle, keep, check, report)
        except ValueError as e:
            # The library names its setting `length` either way.
            if relative and str(e).startswith("length"):
                raise ValueError("relative_" + str(e)) from None
            raise
        return self
