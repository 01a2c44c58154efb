#!/usr/bin/env bash
# The Python package on a GPU machine (repository root, no network): builds
# libtcnla (CUDA) and bench_rsvd, installs the package with pip into a
# private folder (--no-build-isolation --no-deps --no-index --target: the
# python's own setuptools and wheel, nothing downloaded; where pip or
# setuptools is missing, python/tcnla and the library are copied there),
# runs the Python test suite (the gpu-marked
# tests on PyTorch / CuPy, the host-array tests on the CPU backend and again
# through the GPU staging path), then bench/python/bench_python.py (with
# bench_rsvd's C time of the same tcnla_rsvd call). Logs and CSV under
# OUTDIR. pytest is taken from the python, or from wheels carried in .whl/
# (pure Python: pytest, pluggy, iniconfig, packaging; setuptools, wheel).
# Files in OUTDIR (8): py_build.log (build and install), pytest.log,
# bench_rsvd_c.csv / .log, python_bench.csv / .log / .png, and
# python_results.tgz holding them all. Exit status: 1 when the build or the
# install failed, else that of the pytest runs (0 when both passed).
#   tests/gpu/python_run.sh OUTDIR [steps: test,bench,spectra] [--quick]
set -u
OUT="${1:?usage: python_run.sh OUTDIR [steps] [--quick]}"
STEPS=",${2:-test,bench},"
QUICK="${3:-}"
mkdir -p "$OUT"
. tests/gpu/env.sh
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version --format=csv 2>&1
has() { case "$STEPS" in *",$1,"*) return 0;; esac; return 1; }
echo "== build"
make -j16 CUDA=1 build/libtcnla.so build/bench_rsvd >"$OUT/py_build.log" 2>&1 ||
  { tail -30 "$OUT/py_build.log"; exit 1; }
echo "== install"
SITE=$(mktemp -d /tmp/tcnla_py.XXXXXX)
# wheels carried in .whl/ (pytest and its needs; setuptools and wheel where
# the python lacks them), before the package: its build may need them
if ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .whl/*.whl \
    >>"$OUT/py_build.log" 2>&1
fi
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
if TCNLA_JOBS=16 $PY -m pip install --no-build-isolation --no-deps --no-index --target "$SITE" . \
    >>"$OUT/py_build.log" 2>&1; then
  echo "installed with pip into $SITE"
else
  # no pip or no setuptools: the package is its Python files and the library
  echo "pip could not install (see py_build.log): copying python/tcnla and build/libtcnla.so"
  mkdir -p "$SITE/tcnla" && cp python/tcnla/*.py "$SITE/tcnla/" &&
    cp build/libtcnla.so "$SITE/tcnla/libtcnla.so.0" || exit 1
fi
$PY -c "import tcnla; print('tcnla', tcnla.version(), 'at', tcnla.__file__, 'cuda (compiled in, devices):', tcnla.cuda_available())" ||
  exit 1
$PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" 2>&1 | tail -1
$PY -c "import cupy; print('cupy', cupy.__version__)" 2>&1 | tail -1
trc=0
if has test; then
  # (plugins of the machine's Python, e.g. a pytest-timeout newer than the
  # carried pytest, stay out)
  export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
  if $PY -c "import pytest" 2>/dev/null; then
    echo "== pytest: GPU tests and host arrays on the CPU backend"
    $PY -m pytest -q -rfEs -p no:cacheprovider python/tests 2>&1 | tee "$OUT/pytest.log" | tail -25
    trc=${PIPESTATUS[0]}
    if $PY -c "import sys, tcnla; sys.exit(0 if tcnla.cuda_available()[1] > 0 else 1)"; then
      echo "== pytest: host arrays through the GPU (TCNLA_TEST_DEVICE=cuda)"
      TCNLA_TEST_DEVICE=cuda $PY -m pytest -q -rfEs -p no:cacheprovider python/tests/test_cpu.py 2>&1 |
        tee -a "$OUT/pytest.log" | tail -15
      r=${PIPESTATUS[0]}
      [ "$trc" = 0 ] && trc=$r
    else
      echo "no GPU visible to tcnla: the staged run is left out"; trc=1
    fi
    echo "pytest rc=$trc"
  else
    echo "pytest is missing (carry its wheels in .whl/: docs/python.md): tests not run"
    trc=1
  fi
fi
if has spectra; then
  echo "== bench/python/rsvd_spectra.py: tcnla and torch.svd_lowrank across spectra"
  timeout 500 $PY bench/python/rsvd_spectra.py --out "$OUT" 2>&1 | tee "$OUT/rsvd_spectra.log"
fi
if has bench; then
  echo "== bench_rsvd (C): tcnla_rsvd's defaults"
  Q=""
  [ "$QUICK" = "--quick" ] && Q="--quick"
  rm -f "$OUT/bench_rsvd_c.csv"
  timeout 300 ./build/bench_rsvd --m 4096 --n 4096 --rank 64 --variants defaults \
    --csv "$OUT/bench_rsvd_c.csv" >"$OUT/bench_rsvd_c.log" 2>&1
  [ -z "$Q" ] && timeout 300 ./build/bench_rsvd --variants defaults \
    --csv "$OUT/bench_rsvd_c.csv" >>"$OUT/bench_rsvd_c.log" 2>&1
  grep -E "^  defaults" "$OUT/bench_rsvd_c.log" | head -4
  echo "== bench/python/bench_python.py"
  timeout 500 $PY bench/python/bench_python.py --out "$OUT" --c-csv "$OUT/bench_rsvd_c.csv" $Q 2>&1 |
    tee "$OUT/python_bench.log"
fi
# everything in one archive too (the GPU-machine tool returns at most 8 files)
tar czf "$OUT/python_results.tgz" -C "$OUT" --exclude python_results.tgz . 2>/dev/null
ls -la "$OUT"
exit $trc
