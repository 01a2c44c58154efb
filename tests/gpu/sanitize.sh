#!/usr/bin/env bash
# Runs a small GPU test filter under compute-sanitizer (memcheck, then
# racecheck for the shared-memory pipeline of the mma.sync kernels).
#   tests/gpu/sanitize.sh [filter] [build dir]
# Needs build/run_gpu_tests (make CUDA=1 build/run_gpu_tests) and a GPU.
set -u
filter="${1:-gpu_small_sanitize_set}"
build="${2:-build}"
bin="$build/run_gpu_tests"
san="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)"
if [ ! -x "$bin" ]; then echo "sanitize: $bin not built" >&2; exit 2; fi
if [ -z "$san" ]; then echo "sanitize: compute-sanitizer not found" >&2; exit 2; fi
rc=0
for tool in memcheck racecheck; do
  echo "== compute-sanitizer --tool $tool $bin $filter"
  "$san" --tool "$tool" --error-exitcode 99 "$bin" "$filter" || rc=1
done
[ $rc -eq 0 ] && echo "sanitize: clean" || echo "sanitize: ERRORS"
exit $rc
