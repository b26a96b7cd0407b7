"""The Python API against the ``cavity`` command on the same inputs (the
real scan the repository keeps in ``tests/data``), and bad arrays refused
with the right exception.

The CLI's binary is ``$CAVITY_CLI``, else the repository's
``target/{debug,release}/cavity`` (``cargo build -p cavity-cli``); the
device is ``$CAVITY_TEST_DEVICE`` (``cpu`` by default, ``cuda`` on a GPU
machine), as for the Rust tests.
"""

import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import cavity

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCAN = ROOT / "tests" / "data" / "scans" / "StanfordBunny.ply"
DEVICE = os.environ.get("CAVITY_TEST_DEVICE", "cpu")


def cli():
    """The CLI's binary; a test that compares with it fails without one."""
    named = os.environ.get("CAVITY_CLI")
    candidates = [pathlib.Path(named)] if named else []
    candidates += [ROOT / "target" / p / "cavity" for p in ("debug", "release")]
    for c in candidates:
        if c.is_file():
            return str(c)
    raise AssertionError(
        "no cavity binary: run `cargo build -p cavity-cli` or set CAVITY_CLI"
    )


def run_cli(*args):
    done = subprocess.run([cli(), *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def scan():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cavity.read(SCAN)


def test_read_gives_the_scan_and_write_round_trips(scan, tmp_path):
    V, F = scan
    assert V.dtype == np.float32 and V.shape == (50000, 3)
    assert F.dtype == np.uint32 and F.shape == (99785, 3)
    for ext in ("ply", "off", "obj", "stl"):
        out = tmp_path / f"bunny.{ext}"
        cavity.write(out, V, F)
        V2, F2 = cavity.read(out)
        if ext == "stl":
            # STL keeps no shared vertices: compare the triangles' corners.
            assert np.array_equal(V2[F2], V[F])
        else:
            assert np.array_equal(V2, V) and np.array_equal(F2, F)


def test_info_is_the_clis(scan):
    V, F = scan
    got = cavity.info(V, F)
    printed = dict(
        line.split(": ", 1) for line in run_cli("info", SCAN, "--device", "cpu").stdout.splitlines()
        if ": " in line
    )
    for key in (
        "vertices",
        "edges",
        "faces",
        "euler_characteristic",
        "components",
        "isolated_vertices",
        "boundary_edges",
        "boundary_loops",
        "non_manifold_edges",
        "non_manifold_vertices",
        "duplicate_faces",
    ):
        name = key.replace("non_manifold", "non-manifold").replace("_", " ")
        assert printed[name] == str(got[key]), f"{name}: {printed[name]} against {got[key]}"


def test_remesh_is_the_clis(scan, tmp_path):
    V, F = scan
    V2, F2 = cavity.remesh(V, F, relative_length=2.0, iterations=1, device=DEVICE)
    # The check (on by default) passes, and checks only: unchecked, the same.
    if DEVICE == "cpu":
        V1, F1 = cavity.remesh(
            V, F, relative_length=2.0, iterations=1, check=False, device=DEVICE
        )
        assert np.array_equal(V1, V2) and np.array_equal(F1, F2)
    out = tmp_path / "remeshed.ply"
    run_cli("remesh", SCAN, "-o", out, "--length", "2x", "--iterations", 1, "--device", DEVICE)
    V3, F3 = cavity.read(out)
    assert F2.shape[0] < F.shape[0]
    if DEVICE == "cpu":
        assert np.array_equal(V2, V3) and np.array_equal(F2, F3)
    else:
        # The GPU's rounds race: the same sizes within a few percent.
        assert abs(F2.shape[0] - F3.shape[0]) <= 0.05 * F3.shape[0]


def test_smooth_is_the_clis(scan, tmp_path):
    V, F = scan
    S = cavity.smooth(V, F, dt=0.5, steps=2, device=DEVICE)
    out = tmp_path / "smoothed.ply"
    run_cli("smooth", SCAN, "-o", out, "--dt", 0.5, "--steps", 2, "--device", DEVICE)
    S2, F2 = cavity.read(out)
    assert np.array_equal(F2, F) and S.shape == V.shape
    if DEVICE == "cpu":
        assert np.array_equal(S, S2)
    else:
        assert np.allclose(S, S2, atol=1e-5 * np.ptp(V))
    assert not np.array_equal(S, V)


def test_denoise_and_delaunay_are_the_clis(scan, tmp_path):
    V, F = scan
    D = cavity.denoise(V, F, iterations=3, device=DEVICE)
    out = tmp_path / "denoised.ply"
    run_cli("denoise", SCAN, "-o", out, "--iterations", 3, "--device", DEVICE)
    D2, F2 = cavity.read(out)
    assert np.array_equal(F2, F) and np.allclose(D, D2, atol=1e-6 * np.ptp(V))
    assert not np.array_equal(D, V)
    V3, F3 = cavity.delaunay(V, F, device=DEVICE)
    out = tmp_path / "delaunay.ply"
    run_cli("delaunay", SCAN, "-o", out, "--device", DEVICE)
    V4, F4 = cavity.read(out)
    assert np.array_equal(V3, V) and np.array_equal(V4, V)
    assert F3.shape == F.shape and not np.array_equal(F3, F)
    if DEVICE == "cpu":
        assert np.array_equal(F3, F4)


def test_polylla_is_the_clis(tmp_path):
    points = np.random.default_rng(1).random((3000, 2))
    node = tmp_path / "points.node"
    lines = [f"{len(points)} 2 0 0"]
    lines += [f"{i} {x!r} {y!r}" for i, (x, y) in enumerate(points.tolist())]
    node.write_text("\n".join(lines) + "\n")
    out = tmp_path / "polygons.off"
    run_cli("polylla", node, "-o", out, "--device", DEVICE)
    words = out.read_text().split("\n")
    nv, npoly = map(int, words[1].split()[:2])
    V_cli = np.array([list(map(float, w.split()[:2])) for w in words[2 : 2 + nv]])
    polygons = [list(map(int, w.split()))[1:] for w in words[2 + nv : 2 + nv + npoly]]
    V, (offsets, indices) = cavity.polylla(points, device=DEVICE)
    assert V.shape == (3000, 2) and np.allclose(V, V_cli, rtol=0, atol=1e-12)
    assert len(offsets) == npoly + 1 and offsets[-1] == len(indices)
    got = [indices[offsets[k] : offsets[k + 1]].tolist() for k in range(npoly)]
    assert got == polygons
    # The same polygons from the triangles given: one triangulation's own.
    tri = np.array([[0, 1, 2], [0, 2, 3]])
    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    _, (offsets, indices) = cavity.polylla(square, tri, device=DEVICE)
    assert offsets.tolist() == [0, 4] and sorted(indices.tolist()) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="^F: "):
        cavity.polylla(square, np.array([[0, 1, 1]]), device=DEVICE)
    with pytest.raises(ValueError, match="points must have shape"):
        cavity.polylla(np.zeros((4, 3)), device=DEVICE)


def test_normals_are_unit_or_zero(scan):
    V, F = scan
    N = cavity.normals(V, F, device=DEVICE)
    lengths = np.linalg.norm(N, axis=1)
    assert N.shape == V.shape
    assert np.all((np.abs(lengths - 1) < 1e-5) | (lengths == 0))
    # Each normal points out of its faces: along their area normals.
    a, b, c = (V[F[:, k]] for k in range(3))
    area = np.cross(b - a, c - a)
    assert np.mean(np.einsum("ij,ij->i", N[F[:, 0]], area) > 0) > 0.99


def test_geodesic_is_zero_at_the_sources_and_at_most_the_edges(scan):
    V, F = scan
    d = cavity.geodesic(V, F, [0, 100], device=DEVICE)
    assert d.shape == (V.shape[0],) and d.dtype == np.float32
    assert d[0] == 0 and d[100] == 0 and np.all(d >= 0)
    # Along each edge the distance grows by at most its length.
    edges = np.concatenate([F[:, [0, 1]], F[:, [1, 2]], F[:, [2, 0]]])
    length = np.linalg.norm(V[edges[:, 0]] - V[edges[:, 1]], axis=1)
    reached = np.isfinite(d[edges]).all(axis=1)
    gap = np.abs(d[edges[:, 0]] - d[edges[:, 1]])[reached]
    assert np.all(gap <= length[reached] * 1.01 + 1e-6)


def test_any_layout_and_dtype_gives_the_same_result(scan):
    V, F = scan
    want = cavity.normals(V, F, device=DEVICE)
    variants = [
        (np.asfortranarray(V.astype(np.float64)), F.astype(np.int64)),
        (np.repeat(V, 2, axis=0)[::2], np.asfortranarray(F.astype(np.int32))),
        (V.tolist(), F.astype(np.uint16 if F.max() < 2**16 else np.uint64)),
    ]
    for V2, F2 in variants:
        assert np.array_equal(cavity.normals(V2, F2, device=DEVICE), want)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda V, F: cavity.normals(V[:, :2], F), "V must have shape"),
        (lambda V, F: cavity.normals(V.astype(np.int32), F), "V must hold floats"),
        (lambda V, F: cavity.normals(np.where(V > 0.5, np.nan, V), F), "not finite"),
        (lambda V, F: cavity.normals(V, F.astype(np.float64)), "F must hold integer"),
        (lambda V, F: cavity.normals(V, F.astype(np.int64) - 1), "is negative"),
        (lambda V, F: cavity.normals(V, F + len(V)), "but V has"),
        (lambda V, F: cavity.normals(V, F[:, :2]), "F must have shape"),
        (lambda V, F: cavity.geodesic(V, F, [len(V)]), "sources: vertex"),
        (lambda V, F: cavity.geodesic(V, F, []), "at least one vertex"),
        (lambda V, F: cavity.normals(V, F, device="tpu"), "device must be one of"),
        (lambda V, F: cavity.remesh(V, F, iterations=-1), "iterations"),
        (lambda V, F: cavity.remesh(V, F, relative_length=0.0), "^relative_length"),
        (lambda V, F: cavity.remesh(V, F, length=1e-9), "^length"),
        (lambda V, F: cavity.remesh(V, F, length=None, relative_length=None), "relative_length"),
        (lambda V, F: cavity.remesh(V, F, keep_boundary="yes"), "keep_boundary"),
        (lambda V, F: cavity.delaunay(V, F, check=1), "check"),
        (lambda V, F: cavity.remesh(V, F, iterations=True), "iterations"),
        (lambda V, F: cavity.smooth(V, F, dt="1"), "dt must be a number"),
        (lambda V, F: cavity.normals(V, F, patch_size=10**6), "patch_size"),
        (lambda V, F: cavity.normals(V.astype(np.float64) * 1e39, F), "not finite in float32"),
        (lambda V, F: cavity.normals(V, np.array([[0, 0, 1]])), "^F: face 0 repeats"),
        (lambda V, F: cavity.smooth(V, F, dt=-1.0), "dt"),
        (lambda V, F: cavity.normals(V, F, patch_size=0), "patch"),
        (lambda V, F: cavity.denoise(V, F, iterations=0), "iterations"),
        (lambda V, F: cavity.delaunay(V, F, patch_size=10**6), "patch_size"),
    ],
)
def test_bad_arrays_and_settings_are_value_errors(scan, call, message):
    V, F = scan
    with pytest.raises(ValueError, match=message):
        call(V, F)


def test_a_missing_gpu_is_a_runtime_error(scan):
    V, F = scan
    if cavity._cavity.device_name("auto")[1]:
        pytest.skip("a GPU is present: --device cuda opens")
    with pytest.raises(RuntimeError, match="opening the device"):
        cavity.normals(V, F, device="cuda")


def test_missing_and_bad_files_are_os_errors(tmp_path):
    with pytest.raises(OSError, match="missing.ply"):
        cavity.read(tmp_path / "missing.ply")
    bad = tmp_path / "bad.off"
    bad.write_text("OFF\n3 1 0\n0 0 0\n1 0 0\n")
    with pytest.raises(OSError, match="bad.off"):
        cavity.read(bad)


def test_the_cpu_backend_is_announced_once():
    code = (
        "import warnings, numpy as np, cavity\n"
        "warnings.simplefilter('always')\n"
        "V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float32)\n"
        "F = np.array([[0, 1, 2]])\n"
        "for _ in range(3):\n"
        "    cavity.normals(V, F)\n"
        "print(cavity._cavity.device_name('auto')[0])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    said = done.stderr.count("running on the CPU backend")
    assert said == (1 if "CPU" in done.stdout else 0), done.stderr


def test_progress_reports_each_phase_and_raises_what_it_raised(scan):
    V, F = scan
    seen = []
    cavity.remesh(V, F, relative_length=2.0, iterations=2, device=DEVICE,
                  progress=lambda step, what: seen.append((step, what)))
    phases = ["split", "collapse", "flip", "smooth"]
    assert seen == [(i, p) for i in (1, 2) for p in phases]

    # Raised in the callback (as at Ctrl-C): the run stops before its next
    # phase, and the error comes out.
    called = []

    def stop(step, what):
        called.append(what)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cavity.remesh(V, F, relative_length=2.0, iterations=3, device=DEVICE, progress=stop)
    assert called == ["split"]
    with pytest.raises(ValueError, match="progress must be"):
        cavity.remesh(V, F, progress="yes")
    try:
        import tqdm  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match="needs tqdm"):
            cavity.remesh(V, F, progress=True)
    else:
        V2, _ = cavity.remesh(V, F, relative_length=2.0, iterations=1, device=DEVICE, progress=True)
        assert len(V2) > 0
