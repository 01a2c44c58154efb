"""pytest set-up: the installed package, or else python/ of this tree with
the tree's build/libtcnla.so (TCNLA_LIBRARY); the `gpu` marker, whose tests
are skipped where no GPU (or no CUDA build of the library) is present."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import tcnla  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import tcnla  # noqa: F401
if not os.environ.get("TCNLA_LIBRARY") and not os.path.exists(
        os.path.join(os.path.dirname(tcnla.__file__), "libtcnla.so.0")):
    os.environ["TCNLA_LIBRARY"] = os.path.join(
        ROOT, os.environ.get("TCNLA_BUILD", "build"), "libtcnla.so")


def _have_gpu():
    try:
        compiled, count = tcnla.cuda_available()
    except tcnla.TcnlaError:
        return False
    return compiled and count > 0


HAVE_GPU = _have_gpu()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a GPU and a CUDA build of libtcnla")


def pytest_collection_modifyitems(config, items):
    if HAVE_GPU:
        return
    skip = pytest.mark.skip(reason="no GPU (or libtcnla built without CUDA)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
