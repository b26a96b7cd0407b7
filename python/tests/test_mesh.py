"""``cavity.Mesh``, the mesh kept between calls: each call equals the
plain function's on the same arrays (the real scan the repository keeps
in ``tests/data``), through a pipeline that moves the vertices and
replaces the mesh; bad arguments refused as the plain functions refuse
them. The device is found as in ``test_api.py``."""

import warnings

import numpy as np
import pytest

import cavity

from test_api import DEVICE, SCAN


@pytest.fixture(scope="module")
def scan():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cavity.read(SCAN)


def test_a_pipeline_equals_the_plain_calls(scan):
    V, F = scan
    m = cavity.Mesh(V, F, device=DEVICE)
    assert m.duplicate_faces == 0 and m.patch_size == 512
    np.testing.assert_array_equal(m.vertices, V)
    np.testing.assert_array_equal(m.faces, F)
    np.testing.assert_array_equal(m.normals(), cavity.normals(V, F, device=DEVICE))
    # Moved twice on the patches made once: each step equals the plain one.
    V1 = cavity.smooth(V, F, dt=0.5, device=DEVICE)
    assert m.smooth(dt=0.5) is m
    np.testing.assert_array_equal(m.vertices, V1)
    V2 = cavity.denoise(V1, F, iterations=2, device=DEVICE)
    m.denoise(iterations=2)
    np.testing.assert_array_equal(m.vertices, V2)
    np.testing.assert_array_equal(m.geodesic([0, 7]), cavity.geodesic(V2, F, [0, 7], device=DEVICE))
    np.testing.assert_array_equal(m.normals(), cavity.normals(V2, F, device=DEVICE))
    # Five calls, one patching: the patches were kept.
    assert m._m.patchings == 1
    # A new mesh, patched anew at the next call.
    V3, F3 = cavity.remesh(V2, F, relative_length=2.0, iterations=2, device=DEVICE)
    # A progress callback may read the mesh while the remeshing runs.
    sizes = []
    m.remesh(relative_length=2.0, iterations=2, progress=lambda *_: sizes.append(m.vertices.shape))
    assert sizes == [V2.shape] * 8 and m.duplicate_faces == 0
    if DEVICE == "cpu":
        np.testing.assert_array_equal(m.vertices, V3)
        np.testing.assert_array_equal(m.faces, F3)
    else:
        # The GPU's rounds race (as in test_api.py): the same sizes within
        # a few percent; the calls after compare on the mesh's own result.
        assert abs(len(m.faces) - len(F3)) <= 0.05 * len(F3)
        V3, F3 = m.vertices, m.faces
    V4 = cavity.smooth(V3, F3, device=DEVICE)
    np.testing.assert_array_equal(m.smooth().vertices, V4)
    np.testing.assert_array_equal(m.geodesic(3), cavity.geodesic(V4, F3, 3, device=DEVICE))
    assert m._m.patchings == 1 and repr(m).startswith(f"cavity.Mesh({len(V4)} vertices")


def test_duplicates_are_removed_once(scan):
    V, F = scan
    doubled = np.concatenate([F, F[:10]])
    m = cavity.Mesh(V, doubled, device=DEVICE)
    assert m.duplicate_faces == 10 and m.faces.shape == F.shape
    assert "99785 faces" in repr(m)


def test_bad_arguments(scan):
    V, F = scan
    with pytest.raises(ValueError, match="patch_size"):
        cavity.Mesh(V, F, patch_size=0)
    with pytest.raises(ValueError, match="patch_size"):
        cavity.Mesh(V, F, patch_size=10**6, device=DEVICE)
    with pytest.raises(ValueError, match="but V has"):
        cavity.Mesh(V, F + len(V))
    m = cavity.Mesh(V, F, device=DEVICE)
    with pytest.raises(ValueError, match="sources: vertex"):
        m.geodesic([len(V)])
    with pytest.raises(ValueError, match="dt"):
        m.smooth(dt=-1.0)
    with pytest.raises(ValueError, match="iterations"):
        m.denoise(iterations=0)
    with pytest.raises(ValueError, match="^relative_length"):
        m.remesh(relative_length=0.0)
    # A refused call leaves the mesh as it was.
    np.testing.assert_array_equal(m.vertices, V)
