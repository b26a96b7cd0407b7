"""The volumetric functions (``cavity.tet``) against ``cavity tet`` on the
same inputs, file for file: a jittered grid of tetrahedra (six a cube,
some listed inside out), a grid of hexahedra, and a mixed mesh; every
volumetric format read back as written; bad arrays and settings refused
with the right exception. The CLI and the device are found as in
``test_api.py``.
"""

import numpy as np
import pytest

import cavity
from cavity import tet

from test_api import DEVICE, run_cli

# The six tetrahedra of the unit cube around its diagonal from corner 0 to
# corner 7 (corner k at (k & 1, k >> 1 & 1, k >> 2 & 1)).
KUHN = [(0, 1, 3, 7), (0, 3, 2, 7), (0, 2, 6, 7), (0, 6, 4, 7), (0, 4, 5, 7), (0, 5, 1, 7)]
# A hexahedron's corners in VTK's order.
HEX = (0, 1, 3, 2, 4, 5, 7, 6)


def grid_points(n, jitter, seed=1):
    """The (n + 1)^3 points of an n^3 grid of unit cubes, the inner ones
    moved by up to ``jitter`` in each coordinate."""
    r = np.arange(n + 1, dtype=np.float64)
    z, y, x = np.meshgrid(r, r, r, indexing="ij")
    V = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    inner = np.all((V > 0) & (V < n), axis=1)
    rng = np.random.default_rng(seed)
    V[inner] += rng.uniform(-jitter, jitter, size=(int(inner.sum()), 3))
    return V


def cube_corners(n):
    """The eight corners of every cube, in the bit order of KUHN."""
    idx = lambda i, j, k: (k * (n + 1) + j) * (n + 1) + i  # noqa: E731
    cubes = []
    for k in range(n):
        for j in range(n):
            for i in range(n):
                cubes.append([idx(i + (c & 1), j + (c >> 1 & 1), k + (c >> 2 & 1)) for c in range(8)])
    return np.array(cubes, dtype=np.int64)


@pytest.fixture(scope="module")
def tets():
    """A jittered 6^3 grid of tetrahedra, every fifth listed inside out."""
    n = 6
    V = grid_points(n, 0.2)
    corners = cube_corners(n)
    T = np.concatenate([corners[:, list(t)] for t in KUHN])
    T[::5, [0, 1]] = T[::5, [1, 0]]
    return V, T


@pytest.fixture(scope="module")
def hexes():
    n = 5
    return grid_points(n, 0.15, seed=2), cube_corners(n)[:, list(HEX)]


def cli_file(tmp_path, name, V, T, *args):
    """Writes the input, runs ``cavity tet ARGS input -o output``, returns the output's path."""
    src = tmp_path / f"in-{name}.vtk"
    tet.write(src, V, T)
    out = tmp_path / f"cli-{name}.vtk"
    run_cli("tet", args[0], src, "-o", out, *args[1:], "--device", DEVICE)
    return src, out


def test_formats_round_trip(tets, hexes, tmp_path):
    V, T = tets
    for ext in ("mesh", "vtk", "msh", "ele"):
        path = tmp_path / f"t.{ext}"
        tet.write(path, V, T)
        V2, T2 = tet.read(path)
        assert V2.dtype == np.float32 and T2.dtype == np.uint32
        np.testing.assert_allclose(V2, V, rtol=1e-6, atol=1e-6)
        assert T2.shape == T.shape
    # Binary VTK and Gmsh; a mixed mesh comes back as its blocks.
    Vh, H = hexes
    mixed_V = np.concatenate([V, Vh + 10.0])
    mixed = [T, H + len(V)]
    for ext in ("vtk", "msh"):
        path = tmp_path / f"m.{ext}"
        tet.write(path, mixed_V, mixed, binary=True)
        _, blocks = tet.read(path)
        assert [b.shape[1] for b in blocks] == [4, 8]
        assert sum(len(b) for b in blocks) == len(T) + len(H)


def test_subdivide_equals_the_cli(tets, tmp_path):
    V, T = tets
    src, out = cli_file(tmp_path, "sub", V, T, "subdivide", "--levels", "2")
    V2, H = tet.subdivide(V, T, levels=2, device=DEVICE)
    assert H.shape == (len(T) * 4 * 8, 8)
    mine = tmp_path / "py-sub.vtk"
    tet.write(mine, V2, H)
    assert mine.read_bytes() == out.read_bytes()


def test_smooth_equals_the_cli(hexes, tmp_path):
    V, H = hexes
    src, out = cli_file(tmp_path, "smooth", V, H, "smooth", "--iterations", "4")
    V2 = tet.smooth(V, H, iterations=4, device=DEVICE)
    assert V2.shape == V.shape
    mine = tmp_path / "py-smooth.vtk"
    tet.write(mine, V2, H)
    assert mine.read_bytes() == out.read_bytes()
    # The boundary stays; the inner vertices move.
    outer = np.any((V == 0) | (V == 5), axis=1)
    np.testing.assert_array_equal(V2[outer], V[outer].astype(np.float32))
    assert np.abs(V2[~outer] - V[~outer]).max() > 1e-3


def test_boundary_equals_the_cli(tets, tmp_path):
    V, T = tets
    src = tmp_path / "in-b.vtk"
    tet.write(src, V, T)
    out = tmp_path / "cli-b.ply"
    run_cli("tet", "boundary", src, "-o", out, "--device", DEVICE)
    F = tet.boundary(V, T, device=DEVICE)
    # Six faces of 6 x 6 cubes, two triangles each.
    assert F.shape == (6 * 36 * 2, 3)
    # The CLI's surface lists the boundary vertices in increasing order.
    used = np.unique(F)
    compact = np.searchsorted(used, F)
    Vc, Fc = cavity.read(out)
    np.testing.assert_array_equal(Fc, compact)
    np.testing.assert_array_equal(Vc, V[used].astype(np.float32))
    # Facing out: the surface's signed volume is the grid's.
    a, b, c = (V[F[:, k]] for k in range(3))
    assert np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6 == pytest.approx(216.0)


def test_simplify_equals_the_cli(tets, tmp_path):
    V, T = tets
    src, out = cli_file(tmp_path, "simp", V, T, "simplify", "--ratio", "0.5")
    V2, T2 = tet.simplify(V, T, ratio=0.5, device=DEVICE)
    assert len(T2) <= int(np.ceil(0.5 * len(T)))
    mine = tmp_path / "py-simp.vtk"
    tet.write(mine, V2, T2)
    assert mine.read_bytes() == out.read_bytes()
    # A field comes back at the kept vertices.
    field = V[:, 0] + 2 * V[:, 1]
    V3, T3, f3 = tet.simplify(V, T, ratio=0.5, field=field, device=DEVICE)
    assert f3.shape == (len(V3),)


def test_bad_arguments(tets):
    V, T = tets
    with pytest.raises(ValueError, match="T must have shape"):
        tet.smooth(V, T[:, :3])
    with pytest.raises(ValueError, match="T: index -1 is negative"):
        tet.boundary(V, np.where(T == 0, -1, T))
    with pytest.raises(ValueError, match="T: index"):
        tet.subdivide(V, T + len(V))
    with pytest.raises(ValueError, match="T: "):
        tet.smooth(V, np.array([[0, 1, 1, 2]]), device="cpu")
    with pytest.raises(ValueError, match="V: vertex 3"):
        W = V.copy()
        W[3, 1] = np.nan
        tet.smooth(W, T, device="cpu")
    with pytest.raises(ValueError, match="levels must be"):
        tet.subdivide(V, T, levels=0)
    with pytest.raises(ValueError, match="iterations must be"):
        tet.smooth(V, T, iterations=0)
    with pytest.raises(ValueError, match="ratio and cells"):
        tet.simplify(V, T, ratio=0.5, cells=10)
    with pytest.raises(ValueError, match="criterion"):
        tet.simplify(V, T, criterion="volume")
    with pytest.raises(ValueError, match="field:"):
        tet.simplify(V, T, criterion="field")
    with pytest.raises(ValueError, match="field must be"):
        tet.simplify(V, T, field=np.zeros(3))
    with pytest.raises(ValueError, match="ratio"):
        tet.simplify(V, T, ratio=1.5, device="cpu")
    with pytest.raises(ValueError, match="T must be tetrahedra"):
        tet.simplify(V, cube_corners(6)[:, list(HEX)])
    # A flat tetrahedron: the collapse names it.
    flat = V.copy()
    flat[T[7, 3]] = (flat[T[7, 0]] + flat[T[7, 1]] + flat[T[7, 2]]) / 3
    with pytest.raises(ValueError, match="valid tetrahedral mesh"):
        tet.simplify(flat, T, ratio=0.5, device="cpu")


def test_files_errors(tmp_path):
    with pytest.raises(OSError, match="nothing.vtk"):
        tet.read(tmp_path / "nothing.vtk")
    with pytest.raises(OSError, match="unknown volumetric"):
        tet.read(tmp_path / "x.obj")


def test_subdivide_reports_each_level(hexes):
    V, H = hexes
    seen = []
    tet.subdivide(V, H, levels=2, device=DEVICE, progress=lambda *a: seen.append(a))
    assert seen == [(1, "level"), (2, "level")]
