#!/usr/bin/env bash
# GEMMul8 (Uchino, Ozaki, Imamura: Ozaki scheme II on INT8, public source) in
# bench_ozaki's runs, one command on the GPU machine (about 5 minutes on one H100):
#   bash bench/ozaki/gemmul8.sh GEMMUL8 [OUTDIR]        (OUTDIR defaults to $OUT)
# GEMMUL8: a checkout of GEMMul8's source (e.g. .peer/GEMMul8, git-ignored), or its
# hook library already built (a .so). Nothing of it enters this repository: a
# source tree is copied to a temporary folder and built there with GEMMul8's own
# Makefile and flags:
#   - a tree with src/gemm, src/oz2 and hook/ (its earlier layout): only the
#     objects the GEMM hook needs (src/gemm INT8 s_s_s and d_d_d, src/oz2 INT8 real
#     "full" variants, src/worksize INT8 real, hook/gemm.cu, hook/destroy.cu: about
#     a minute on 16 cores; the whole library takes over ten), linked into
#     libgemmul8_hook.so;
#   - a tree with src/gemmul8.cu and src/hook.cu (one translation unit, the layout
#     since late 2025): its lib/libgemmul8.so, which compiles as one nvcc process
#     (8.5 minutes on one core of a CPU machine), so build it there first:
#       make -C GEMMul8 BACKEND=cuda GPU_ARCH=90 lib/libgemmul8.so
#     (where no libnvidia-ml is installed, link the two objects by hand without
#     -lnvidia-ml: the GEMM hook does not use it) and pass the .so (a file VERSION
#     beside it, when there, goes into gemmul8_version.txt).
# Then bench_ozaki runs
#   - without preload: cuBLAS DGEMM / SGEMM and tcnla's scheme 2 (DP, AUTO);
#   - with LD_PRELOAD=libgemmul8_hook.so, once per configuration, its cuBLAS rows
#     (cublas_dgemm: cublasGemmEx FP64; cublas: cublasSgemm) computed by GEMMul8 and
#     named by --method-label: gemmul8_d_{fast,acc}_N for N in MODS_D moduli
#     (GEMMUL8_NUM_MOD_D, GEMMUL8_FASTMODE_D; the earlier layout's names end in
#     _GEMM: both are set), gemmul8_s_{fast,acc}_N for N in MODS_S
#     (GEMMUL8_NUM_MOD_S, GEMMUL8_FASTMODE_S; CSV names sgemm_gemmul8_...).
# n = 8192 and 16384, phi = 0.5 and 2, the same inputs and exact reference for every
# row (bench_ozaki's seeds). tcnla's own cuBLAS calls do not go through the preload
# (its cuBLAS table is dlsym'ed from its own handles), GEMMul8's workspace reuse
# across calls (GEMMUL8_SKIP_SCALE_A/B) is off.
# Writes OUTDIR/gemmul8.csv (bench_ozaki rows), OUTDIR/*.log.
# Environment: GEMMUL8_OBJ_REGEX overrides the object selection of the earlier
# layout (an extended regex on GEMMul8's object paths); SIZES, PHIS, MODS_D, MODS_S
# override "8192,16384", "0.5,2", "12 13 14 15 16" and "6 7 8 9".
set -u
SRC="${1:?usage: gemmul8.sh GEMMUL8_SRC_OR_SO [OUTDIR]}"
OUTDIR="${2:-${OUT:?usage: gemmul8.sh GEMMUL8_SRC_OR_SO OUTDIR (or set OUT)}}"
SIZES="${SIZES:-8192,16384}"
PHIS="${PHIS:-0.5,2}"
MODS_D="${MODS_D:-12 13 14 15 16}"
MODS_S="${MODS_S:-6 7 8 9}"
case "$SRC" in
*.so) [ -f "$SRC" ] || { echo "gemmul8.sh: no library $SRC"; exit 1; } ;;
*) [ -f "$SRC/Makefile" ] || { echo "gemmul8.sh: $SRC has no Makefile (GEMMul8's source?)"; exit 1; } ;;
esac
mkdir -p "$OUTDIR"
ROOT=$(pwd)
. tests/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >"$OUTDIR/gpu.txt" 2>&1
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
[ -n "$arch" ] || arch=90
CUDA_PATH="${CUDA_PATH:-/usr/local/cuda}"

echo "== build tcnla"
make -j16 CUDA=1 lib build/bench_ozaki >"$OUTDIR/build.log" 2>&1 \
  || { tail -30 "$OUTDIR/build.log"; exit 1; }

W=$(mktemp -d "${TMPDIR:-/tmp}/gemmul8.XXXXXX")
trap 'rm -rf "$W"' EXIT
if [ "${SRC%.so}" != "$SRC" ]; then
  HOOK="$(cd "$(dirname "$SRC")" && pwd)/$(basename "$SRC")"
  echo "== GEMMul8 hook library given: $HOOK"
  { echo "(prebuilt library $SRC)"; cat "$(dirname "$SRC")/VERSION" 2>/dev/null; } >"$OUTDIR/gemmul8_version.txt"
elif [ -f "$SRC/src/gemmul8.cu" ]; then
  echo "== build GEMMul8's lib/libgemmul8.so (one translation unit, sm_$arch)"
  cp -a "$SRC" "$W/src" || exit 1
  t0=$(date +%s)
  make -C "$W/src" BACKEND=cuda GPU_ARCH="$arch" CUDA_PATH="$CUDA_PATH" lib/libgemmul8.so \
    >>"$OUTDIR/gemmul8_build.log" 2>&1 || { tail -30 "$OUTDIR/gemmul8_build.log"; exit 1; }
  HOOK="$W/src/lib/libgemmul8.so"
  echo "built in $(( $(date +%s) - t0 )) s: $HOOK"
  (cd "$W/src" && git rev-parse HEAD 2>/dev/null || echo "(not a git checkout)") >"$OUTDIR/gemmul8_version.txt"
else
  echo "== build GEMMul8's GEMM objects (sm_$arch)"
  cp -a "$SRC" "$W/src" || exit 1
  rm -rf "$W/src/build" "$W/src/lib"
  cat >"$W/print.mk" <<'MK'
gm8-print-objs:
	@echo $(INST_OBJ) $(CU_OBJ) $(HOOK_OBJ)
gm8-print-link:
	@echo $(COMPILER) $(ARCH) -shared
gm8-print-libs:
	@echo $(LIBS)
MK
  mk=(make -s -C "$W/src" -f Makefile -f "$W/print.mk" BACKEND=cuda GPU_ARCH="$arch" CUDA_PATH="$CUDA_PATH")
  all_objs=$("${mk[@]}" gm8-print-objs 2>>"$OUTDIR/gemmul8_build.log" | tr ' ' '\n' | grep '\.o$')
  re="${GEMMUL8_OBJ_REGEX:-/src/gemm/gemm_i8_(s_s_s|d_d_d)\.o$|/src/oz2/.*(^|/|_)(s|d|real)_i8_full[^/]*\.o$|/src/worksize/worksize_real_i8\.o$|/hook/(gemm|destroy)\.o$}"
  objs=$(printf '%s\n' "$all_objs" | grep -E "$re")
  # (the accurate scaling's triangular-output variants are not used by GEMM)
  [ -n "${GEMMUL8_OBJ_REGEX:-}" ] || objs=$(printf '%s\n' $objs | grep -Ev '_out_(upper|lower)\.o$')
  echo "$(printf '%s\n' "$objs" | grep -c .) of $(printf '%s\n' "$all_objs" | grep -c .) objects:" \
    | tee -a "$OUTDIR/gemmul8_build.log"
  printf '  %s\n' $objs | tee -a "$OUTDIR/gemmul8_build.log"
  [ -n "$objs" ] || { echo "no object matched (set GEMMUL8_OBJ_REGEX)"; exit 1; }
  t0=$(date +%s)
  make -C "$W/src" -j16 BACKEND=cuda GPU_ARCH="$arch" CUDA_PATH="$CUDA_PATH" $objs \
    >>"$OUTDIR/gemmul8_build.log" 2>&1 || { tail -30 "$OUTDIR/gemmul8_build.log"; exit 1; }
  link=$("${mk[@]}" gm8-print-link 2>/dev/null)
  libs=$("${mk[@]}" gm8-print-libs 2>/dev/null)
  HOOK="$W/libgemmul8_hook.so"
  (cd "$W/src" && $link -o "$HOOK" $objs -L"$CUDA_PATH/lib64" $libs) >>"$OUTDIR/gemmul8_build.log" 2>&1 \
    || { tail -30 "$OUTDIR/gemmul8_build.log"; exit 1; }
  echo "built in $(( $(date +%s) - t0 )) s: $HOOK"
  # GEMMul8 symbols left undefined (instantiations not built: complex types and the
  # like, called lazily, never by the real FP32 / FP64 GEMMs run here)
  nm -D --undefined-only -C "$HOOK" 2>/dev/null | grep -i gemmul8 >"$OUTDIR/gemmul8_undefined.txt"
  echo "undefined GEMMul8 symbols: $(wc -l <"$OUTDIR/gemmul8_undefined.txt") (gemmul8_undefined.txt)"
  (cd "$W/src" && git rev-parse HEAD 2>/dev/null || echo "(not a git checkout)") >"$OUTDIR/gemmul8_version.txt"
fi

CSV="$OUTDIR/gemmul8.csv"
rm -f "$CSV"
B="$ROOT/build/bench_ozaki"
common=(--sizes "$SIZES" --phis "$PHIS" --reps 3 --sample 16 --out "$CSV")
# (in rounds: each method once per round, so that no method is always timed
# right after cuBLAS's heavy call, which slows the next call down)
echo "== tcnla and cuBLAS (no preload, in rounds)"
timeout 150 "$B" "${common[@]}" --rounds --methods cublas_dgemm,ozaki_int8_crt/DP,ozaki_int8_crt/AUTO \
  >"$OUTDIR/bench_tcnla_d.log" 2>&1; echo "rc=$?"
timeout 100 "$B" "${common[@]}" --rounds --precision single --methods cublas,ozaki_int8_crt/DP \
  >"$OUTDIR/bench_tcnla_s.log" 2>&1; echo "rc=$?"
export GEMMUL8_BACKEND_GEMM=INT8 GEMMUL8_BACKEND=INT8 GEMMUL8_SKIP_SCALE_A=0 GEMMUL8_SKIP_SCALE_B=0
for mode in fast acc; do
  fm=$([ $mode = fast ] && echo 1 || echo 0)
  for nmod in $MODS_D; do
    echo "== GEMMul8 FP64 $mode, $nmod moduli"
    GEMMUL8_NUM_MOD_D_GEMM=$nmod GEMMUL8_FASTMODE_D_GEMM=$fm GEMMUL8_NUM_MOD_D=$nmod \
      GEMMUL8_FASTMODE_D=$fm LD_PRELOAD="$HOOK" \
      timeout 60 "$B" "${common[@]}" --methods cublas_dgemm --method-label "gemmul8_d_${mode}_$nmod" \
      >>"$OUTDIR/bench_gemmul8_d.log" 2>&1; echo "rc=$?"
  done
  for nmod in $MODS_S; do
    echo "== GEMMul8 FP32 $mode, $nmod moduli"
    GEMMUL8_NUM_MOD_S_GEMM=$nmod GEMMUL8_FASTMODE_S_GEMM=$fm GEMMUL8_NUM_MOD_S=$nmod \
      GEMMUL8_FASTMODE_S=$fm LD_PRELOAD="$HOOK" \
      timeout 60 "$B" "${common[@]}" --precision single --methods cublas \
      --method-label "gemmul8_s_${mode}_$nmod" >>"$OUTDIR/bench_gemmul8_s.log" 2>&1; echo "rc=$?"
  done
done
echo "== rows"
if command -v column >/dev/null; then column -s, -t <"$CSV" | cut -c1-160; else cat "$CSV"; fi
