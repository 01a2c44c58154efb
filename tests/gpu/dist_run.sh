#!/usr/bin/env bash
# The distributed drivers on this machine's GPUs, in one command: build,
# the GPU tests of the distributed drivers (NCCL, one thread per GPU), and
# with `all` the whole GPU test suite besides; logs under OUTDIR.
#   tests/gpu/dist_run.sh OUTDIR [all]
set -u
OUT="${1:?usage: dist_run.sh OUTDIR [all]}"
mkdir -p "$OUT"
. tests/gpu/env.sh
nvidia-smi -L >"$OUT/gpus.txt" 2>&1
nvidia-smi topo -m >>"$OUT/gpus.txt" 2>&1
cat "$OUT/gpus.txt"
echo "NCCL: ${TCNLA_NCCL_LIBRARY:-libnccl.so.2 on the library path}"
echo "== build"
make -j"$(nproc)" CUDA=1 lib build/tcnla build/run_gpu_tests >"$OUT/build.log" 2>&1 || {
  tail -30 "$OUT/build.log"
  exit 1
}
echo "== GPU tests of the distributed drivers"
timeout 300 ./build/run_gpu_tests gpu_dist 2>&1 | tee "$OUT/dist_tests.log"
rc=${PIPESTATUS[0]}
if [ "${2:-}" = all ]; then
  echo "== the whole GPU suite"
  timeout 400 ./build/run_gpu_tests >"$OUT/gpu_tests.log" 2>&1
  arc=$?
  grep -E "^FAIL|passed" "$OUT/gpu_tests.log"
  [ $rc -eq 0 ] && rc=$arc
fi
exit $rc
