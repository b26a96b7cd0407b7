"""The arguments' checks shared by the package's functions: arrays cast to
the dtypes and layouts the native module takes, settings to Python numbers,
each error a ``ValueError`` naming the argument."""

import operator
import sys
import warnings

import numpy as np

from . import _cavity

_DEVICES = ("auto", "cuda", "cpu")
_checked_auto = False


def _vertices(V, name="V"):
    """``V`` as a C-contiguous float32 ``(n, 3)`` array, or ValueError. Its
    values are checked by the native module (a coordinate not finite in
    float32 names the vertex), which passes over the array once."""
    a = np.asarray(V)
    if a.ndim != 2 or a.shape[1] != 3:
        raise ValueError(f"{name} must have shape (n, 3), not {a.shape}")
    if not np.issubdtype(a.dtype, np.floating):
        raise ValueError(f"{name} must hold floats (float32 or float64), not {a.dtype}")
    with np.errstate(over="ignore"):
        return np.ascontiguousarray(a, dtype=np.float32)


def _faces(F, n, name="F"):
    """``F`` as a C-contiguous uint32 ``(m, 3)`` array. Indices the cast
    would change (negative, or past 32 bits) are refused here; the native
    module checks the rest (an index of ``n`` or more names the face)."""
    a = np.asarray(F)
    if a.ndim != 2 or a.shape[1] != 3:
        raise ValueError(f"{name} must have shape (m, 3), not {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{name} must hold integer vertex indices, not {a.dtype}")
    if a.size and np.issubdtype(a.dtype, np.signedinteger):
        low = int(a.min())
        if low < 0:
            raise ValueError(f"{name}: index {low} is negative")
    if a.size and a.dtype.itemsize > 4:
        high = int(a.max())
        if high >= n:
            raise ValueError(f"{name}: index {high}, but V has {n} vertices")
    return np.ascontiguousarray(a, dtype=np.uint32)


def _int(x, name, low):
    """``x`` as an int of at least ``low``, or ValueError naming ``name``."""
    try:
        if isinstance(x, (bool, np.bool_)):
            raise TypeError
        i = operator.index(x)
    except TypeError:
        raise ValueError(f"{name} must be an integer, not {x!r}") from None
    if i < low or i >= 2**32:
        raise ValueError(f"{name} must be an integer from {low} below 2**32, not {i}")
    return i


def _float(x, name):
    """``x`` as a float, or ValueError naming ``name``."""
    if isinstance(x, (bool, np.bool_, str, bytes)) or x is None:
        raise ValueError(f"{name} must be a number, not {x!r}")
    try:
        return float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, not {x!r}") from None


def _bool(x, name):
    """``x`` as a bool, or ValueError naming ``name``."""
    if not isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, not {x!r}")
    return bool(x)


def _mesh(V, F):
    v = _vertices(V)
    return v, _faces(F, v.shape[0])


def _device(device):
    """Checks ``device`` and warns once when ``auto`` finds no GPU."""
    global _checked_auto
    if device not in _DEVICES:
        raise ValueError(f"device must be one of {', '.join(_DEVICES)}, not {device!r}")
    if device == "auto" and not _checked_auto:
        _checked_auto = True
        _, on_gpu, note = _cavity.device_name(device)
        if not on_gpu:
            warnings.warn(f"cavity: no GPU, running on the CPU backend ({note})", stacklevel=3)
    return device


class _Progress:
    """A long call's ``progress`` argument as the native module's callback
    (``callback(step, what)`` as each step starts): ``None`` shows a
    ``tqdm`` bar when tqdm is installed and stderr is a terminal, ``True``
    always (``ValueError`` without tqdm), ``False`` none; a callable is
    called as the native module calls it. Use as a context manager: the
    bar closes when the call ends."""

    def __init__(self, progress, total, desc):
        self.bar = None
        self.callback = None
        if callable(progress) and not isinstance(progress, (bool, np.bool_)):
            self.callback = progress
            return
        if progress is not None and not isinstance(progress, (bool, np.bool_)):
            raise ValueError(f"progress must be None, True, False or a callable, not {progress!r}")
        if progress is False:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            if progress:
                raise ValueError("progress=True needs tqdm: pip install tqdm") from None
            return
        if progress is None and not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
            return
        self.bar = tqdm(total=total, desc=desc, leave=False)
        self.started = 0

        def step(done, what):
            if self.started:
                self.bar.update(1)
            self.started += 1
            self.bar.set_postfix_str(f"{what} {done}")

        self.callback = step

    def __enter__(self):
        return self.callback

    def __exit__(self, *exc):
        if self.bar is not None:
            if exc[0] is None:
                self.bar.update(self.bar.total - self.bar.n)
            self.bar.close()
        return False
