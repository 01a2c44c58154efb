"""Builds libtcnla with the repository's Makefile and ships it inside the
package as tcnla/libtcnla.so.0 beside the pure-Python ctypes layer
(python/tcnla). The wheel is tagged py3-none-<platform>: it holds no
Python extension, so it works with any Python 3 of the platform.

Environment:
  TCNLA_BUILD  the Makefile's build folder (default "build", or "build-cpu"
               with TCNLA_CUDA=0: an existing, up-to-date build is reused,
               nothing is rebuilt);
  TCNLA_CUDA   0 / 1 overrides the Makefile's choice (CUDA when nvcc is found);
  TCNLA_JOBS   make's -j (default: the CPU count, at most 8)."""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildWithLib(build_py):
    def run(self):
        super().run()
        # a CPU-only build in a folder of its own (make does not track flags)
        cpu_only = os.environ.get("TCNLA_CUDA") == "0"
        build = os.environ.get("TCNLA_BUILD", "build-cpu" if cpu_only else "build")
        jobs = os.environ.get("TCNLA_JOBS", str(min(8, os.cpu_count() or 1)))
        cmd = ["make", "-C", ROOT, f"-j{jobs}", f"BUILD={build}"]
        if os.environ.get("TCNLA_CUDA") in ("0", "1"):
            cmd.append("CUDA=" + os.environ["TCNLA_CUDA"])
        cmd.append(f"{build}/libtcnla.so")
        print("tcnla: " + " ".join(cmd), flush=True)
        subprocess.check_call(cmd)
        src = os.path.join(ROOT, build, "libtcnla.so")
        dst_dir = os.path.join(self.build_lib, "tcnla")
        os.makedirs(dst_dir, exist_ok=True)
        shutil.copyfile(src, os.path.join(dst_dir, "libtcnla.so.0"))


class PlatformWheel(bdist_wheel):
    """Not pure (it carries a shared library), but no Python ABI."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


# setuptools' own build folder apart from the Makefile's build/
setup(cmdclass={"build_py": BuildWithLib, "bdist_wheel": PlatformWheel},
      options={"build": {"build_base": "build-py"}})
