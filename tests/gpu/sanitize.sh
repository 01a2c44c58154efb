#!/usr/bin/env bash
# Runs GPU tests under compute-sanitizer: memcheck (out-of-bounds and
# misaligned accesses, uninitialized device memory read by the host copies),
# then racecheck (the shared-memory pipelines of the mma.sync / wgmma
# kernels). Exit status 0 when both are clean and the tests pass.
#   tests/gpu/sanitize.sh [-b BUILD] [filter ...]
# Without filters, the default set: gpu_small_sanitize_set (every kernel
# configuration at small sizes) and the paths that check operand ranges and
# fall back or scale (every GPU test whose name contains "range", "fall" or
# "scal"). A filter selects the tests whose name contains it (build/run_gpu_tests
# runs those matching any). Needs $BUILD/run_gpu_tests (make CUDA=1) and a GPU;
# `make test-gpu` runs it after the GPU tests, `make test-gpu-sanitize` alone.
# H100: memcheck a few seconds, racecheck about 200 s (the Jacobi path's
# planted faults about 100 s, the exact scaling's every path about 70 s);
# the whole of `make test-gpu` about 6 minutes.
set -u
build=build
if [ "${1:-}" = -b ]; then build="${2:?sanitize.sh: -b needs a build folder}"; shift 2; fi
if [ $# -gt 0 ]; then filters=("$@"); else filters=(gpu_small_sanitize_set range fall scal); fi
bin="$build/run_gpu_tests"
san="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)"
if [ ! -x "$bin" ]; then echo "sanitize: $bin not built" >&2; exit 2; fi
if [ -z "$san" ]; then echo "sanitize: compute-sanitizer not found" >&2; exit 2; fi
rc=0
for tool in memcheck racecheck; do
  echo "== compute-sanitizer --tool $tool $bin ${filters[*]}"
  "$san" --tool "$tool" --error-exitcode 99 "$bin" "${filters[@]}" || rc=1
done
[ $rc -eq 0 ] && echo "sanitize: clean" || echo "sanitize: ERRORS"
exit $rc
