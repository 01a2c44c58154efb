#!/usr/bin/env bash
# Builds the tcnla command with AddressSanitizer + UndefinedBehaviorSanitizer
# (CPU-only, into its own build folder) and feeds it malformed .npy / .mtx
# files through `tcnla rsvd --input` and `tcnla lra --input`, plus a few valid
# small runs of gen, rsvd, lra and hosvd. Fails on any sanitizer report (leaks
# included), on a malformed file not giving exit status 1 with exactly one
# line on stderr naming the file, or on a valid run not exiting 0.
# When build/run_tests exists, the CLI tests also run against the ASan binary.
#
#   tests/asan_cli.sh                       (about 30-60 s on 2 cores, mostly the build)
#   ASAN_BUILD=/tmp/asan CC=gcc-13 tests/asan_cli.sh
#   ASAN_CLI_VERBOSE=1 tests/asan_cli.sh   (prints each malformed file's message)
#
# The build is the Makefile's SAN=1 build (CUDA=0) in build-asan, the one
# `make CUDA=0 BUILD=build-asan SAN=1 test` (.ci/run) then reuses.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root" || exit 1
bdir=${ASAN_BUILD:-build-asan}
cc=${CC:-gcc}
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p "$bdir" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/tcnla_asan_XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

echo "asan_cli: building $bdir/tcnla with -fsanitize=address,undefined"
t0=$(date +%s)
if ! make -j"$jobs" CUDA=0 BUILD="$bdir" CC="$cc" SAN=1 "$bdir/tcnla" \
    > "$work/build.log" 2>&1; then
    tail -30 "$work/build.log"
    echo "asan_cli: FAILED to build"
    exit 1
fi
echo "asan_cli: built in $(($(date +%s) - t0)) s"
bin=$bdir/tcnla

# Sanitizer exit statuses distinct from tcnla's own (0..3).
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:exitcode=87}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
sanitizer_report() { grep -qE 'Sanitizer|runtime error:' "$1"; }

# ---------------------------------------------------------------- files
d=$work/in
mkdir -p "$d"
# (the printf format strings below are built on purpose: they write raw bytes)
# shellcheck disable=SC2059
hex2() { printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $((($1 >> 8) & 255)))"; }
# npy NAME VERSION_MAJOR DICT DATA_BYTES [raw data printf string]
# shellcheck disable=SC2059
npy() {
    local name=$1 ver=$2 dict=$3 nbytes=$4 data=${5:-}
    local total=$(((10 + ${#dict} + 1 + 63) / 64 * 64)) h
    h=$((total - 10))
    {
        printf '\x93NUMPY'
        printf "\\x$(printf %02x "$ver")\\x00"
        hex2 "$h"
        printf '%s' "$dict"
        printf '%*s' $((h - ${#dict} - 1)) ''
        printf '\n'
        if [ -n "$data" ]; then printf "$data"; else head -c "$nbytes" /dev/zero; fi
    } > "$d/$name"
}
F="'fortran_order': False"
: > "$d/empty.npy"
printf '\x93NUMPX\x01\x00\x06\x00{}    ' > "$d/bad_magic.npy"
printf "\\x93NUMPY\\x01\\x00\\x76\\x00{'descr': '<f4', " > "$d/short_header.npy"
npy garbage_header.npy 1 "hello, world" 64
npy dtype_i4.npy 1 "{'descr': '<i4', $F, 'shape': (4, 4), }" 64
npy dtype_c8.npy 1 "{'descr': '<c8', $F, 'shape': (2, 4), }" 64
npy dtype_struct.npy 1 "{'descr': [('a', '<f4')], $F, 'shape': (4, 4), }" 64
npy absurd_shape.npy 1 "{'descr': '<f4', $F, 'shape': (100000000000, 100000000000), }" 64
npy huge_shape.npy 1 "{'descr': '<f8', $F, 'shape': (99999999999999999999999, 3), }" 64
npy negative_shape.npy 1 "{'descr': '<f4', $F, 'shape': (-4, 4), }" 64
npy truncated_data.npy 1 "{'descr': '<f4', $F, 'shape': (4, 4), }" 20
npy trailing_data.npy 1 "{'descr': '<f4', $F, 'shape': (2, 2), }" 20
npy three_d.npy 1 "{'descr': '<f4', $F, 'shape': (2, 2, 4), }" 64
npy bad_version.npy 9 "{'descr': '<f4', $F, 'shape': (4, 4), }" 64
npy unterminated_dict.npy 1 "{'descr': '<f4', $F, 'shape': (4, 4" 64
npy missing_key.npy 1 "{'descr': '<f4', 'shape': (4, 4), }" 64
npy nan_value.npy 1 "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1), }" 8 \
    '\x00\x00\x80\x3f\x00\x00\xc0\x7f'
printf '' > "$d/empty.mtx"
printf '%%%%MatrixMarket tensor array real general\n2 2\n1\n2\n3\n4\n' > "$d/bad_banner.mtx"
printf 'hello world\n1 2 3\n' > "$d/not_mtx.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.5\n2 2 abc\n' > "$d/bad_number.mtx"
printf '%%%%MatrixMarket matrix array real general\n2 1\nnan\n1\n' > "$d/nan_number.mtx"
printf '%%%%MatrixMarket matrix array real general\n2 1\n1e999\n1\n' > "$d/overflow_number.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n' > "$d/truncated.mtx"
printf '%%%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n' > "$d/trailing.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 1\n5 1 1.0\n' > "$d/out_of_bounds.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 1\n0 1 1.0\n' > "$d/zero_index.mtx"
printf '%%%%MatrixMarket matrix array real general\n99999999999 99999999999\n1\n' > "$d/absurd_size.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n-3 3 1\n1 1 1\n' > "$d/negative_size.mtx"
printf '%%%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0 2.0\n' > "$d/complex.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0 7\n' > "$d/extra_field.mtx"
printf '%%%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1.0\n' > "$d/upper_symmetric.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n%% only a comment\n' > "$d/missing_size.mtx"
head -c 3000 /dev/urandom > "$d/random_bytes.npy"
head -c 3000 /dev/urandom > "$d/random_bytes.mtx"
mkdir -p "$d/a_directory.npy"
files=$(cd "$d" && ls)
files="$files does_not_exist.npy"
# the fuzzers' seed corpora: whatever they hold must not trip a sanitizer
corpus=$(ls tests/fuzz/corpus_npy/* tests/fuzz/corpus_mtx/* 2>/dev/null)

# ---------------------------------------------------------------- runs
n=0
for f in $files; do
    p=$d/$f
    for cmd in "rsvd --rank 2 --oversampling 0 --power-iters 0" "lra --rank 1 --oversampling 0" \
               "rsvd --rank 2 --oversampling 0 --power-iters 0 --ranks 2" \
               "lra --rank 1 --oversampling 0 --ranks 3"; do
        n=$((n + 1))
        # shellcheck disable=SC2086
        "$bin" $cmd --backend cpu --input "$p" > /dev/null 2> "$work/err"
        st=$?
        if sanitizer_report "$work/err"; then
            fail "$cmd --input $f: sanitizer report"
            cat "$work/err"
        elif [ "$st" -ne 1 ]; then
            fail "$cmd --input $f: exit status $st, expected 1"
            cat "$work/err"
        elif [ "$(wc -l < "$work/err")" -ne 1 ] || ! grep -qF "$p" "$work/err"; then
            fail "$cmd --input $f: stderr is not one line naming the file:"
            cat "$work/err"
        fi
        [ -n "${ASAN_CLI_VERBOSE:-}" ] && cat "$work/err"
    done
done
# the same files through a pipe (read as they come, not mapped)
for f in $files; do
    p=$d/$f
    [ -f "$p" ] || continue
    n=$((n + 1))
    cat "$p" | "$bin" rsvd --rank 2 --oversampling 0 --power-iters 0 --backend cpu \
        --input /dev/stdin > /dev/null 2> "$work/err"
    st=$?
    if sanitizer_report "$work/err"; then
        fail "rsvd --input /dev/stdin < $f: sanitizer report"
        cat "$work/err"
    elif [ "$st" -ne 1 ] || [ "$(wc -l < "$work/err")" -ne 1 ]; then
        fail "rsvd --input /dev/stdin < $f: exit status $st, expected 1 with one line:"
        cat "$work/err"
    fi
done
for p in $corpus; do
    for cmd in "rsvd --rank 1 --oversampling 0 --power-iters 0" "lra --rank 1 --oversampling 0 --no-refine" \
               "rsvd --rank 1 --oversampling 0 --power-iters 0 --ranks 2"; do
        n=$((n + 1))
        # shellcheck disable=SC2086
        "$bin" $cmd --backend cpu --input "$p" > /dev/null 2> "$work/err"
        st=$?
        if sanitizer_report "$work/err" || [ "$st" -gt 3 ]; then
            fail "$cmd --input $p: exit status $st"
            cat "$work/err"
        fi
    done
done
# valid runs: exit 0, no report
valid=(
    "gen --kind exp --m 60 --n 40 --rank 5 --output $work/a.npy"
    "gen --kind linear --m 60 --n 40 --rank 5 --output $work/lin.npy --double"
    "gen --kind poly --m 50 --n 40 --rank 5 --output $work/poly.npy --json"
    "gen --kind cauchy --m 30 --n 20 --output $work/cauchy.npy"
    "gen --kind lowrank --m 1100 --n 40 --rank 5 --output $work/lr.npy"
    "rsvd --backend cpu --input $work/a.npy --rank 5 --output $work/r"
    "rsvd --backend cpu --input $work/lin.npy --rank 5 --proj tcec_tf32 --gemm tcec_fp16 --json"
    "lra --backend cpu --input $work/a.npy --rank 4 --output $work/l"
    "rsvd --backend cpu --ranks 3 --input $work/lin.npy --rank 5 --output $work/rd --json"
    "lra --backend cpu --ranks 2 --m 90 --n 70 --rank 4 --output $work/ld"
    "lra --backend cpu --m 90 --n 70 --rank 4 --tgemm 16_32 --recompress --noise 1e-3 --json"
    "lra --backend cpu --m 90 --n 70 --rank 4 --tgemm 16_16 --orth cholqr_fp32"
    "lra --backend cpu --m 90 --n 70 --rank 4 --tgemm 32_32 --no-refine --orth householder"
    "hosvd --backend cpu --dims 12,10,8 --ranks 4,3,3 --pad 1"
    "hosvd --backend cpu --dims 8,7,6,5 --ranks 3,3,2,2 --pad 1 --proj shgemm_fp16 --gemm tcec_tf32 --json"
    "hosvd --backend cpu --dims 30,20 --ranks 5,4 --pad 0 --random-format bf16"
)
for a in "${valid[@]}"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    "$bin" $a > /dev/null 2> "$work/err"
    st=$?
    if [ "$st" -ne 0 ] || sanitizer_report "$work/err"; then
        fail "tcnla $a: exit status $st"
        cat "$work/err"
    fi
done
# a valid file through a pipe, and a FIFO nobody writes to (a bounded wait)
n=$((n + 2))
cat "$work/a.npy" | "$bin" rsvd --backend cpu --input /dev/stdin --rank 5 --output "$work/p" \
    > /dev/null 2> "$work/err"
st=$?
if [ "$st" -ne 0 ] || sanitizer_report "$work/err"; then
    fail "rsvd --input /dev/stdin (a valid .npy through a pipe): exit status $st"
    cat "$work/err"
fi
mkfifo "$work/fifo.npy"
TCNLA_FIFO_WAIT=1 timeout 20 "$bin" lra --backend cpu --input "$work/fifo.npy" > /dev/null \
    2> "$work/err"
st=$?
if [ "$st" -ne 1 ] || sanitizer_report "$work/err"; then
    fail "lra --input FIFO with no writer: exit status $st, expected 1"
    cat "$work/err"
fi
for a in "lra --rank 0" "hosvd --dims 4,4 --ranks 5,5" "gen --kind x --output $work/x.npy" "gen"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    "$bin" $a > /dev/null 2> "$work/err"
    st=$?
    if [ "$st" -ne 2 ] || sanitizer_report "$work/err"; then
        fail "tcnla $a: exit status $st, expected 2"
        cat "$work/err"
    fi
done
echo "asan_cli: $n runs of $bin, $fails failed"

if [ -x build/run_tests ]; then
    echo "asan_cli: the CLI tests against $bin"
    if ! TCNLA_BIN=$bin ./build/run_tests cli > "$work/tests.log" 2>&1; then
        cat "$work/tests.log"
        fail "build/run_tests cli with TCNLA_BIN=$bin"
    else
        tail -1 "$work/tests.log"
    fi
else
    echo "asan_cli: build/run_tests not built: CLI tests against the ASan binary skipped"
fi
echo "asan_cli: done in $(($(date +%s) - t0)) s"
[ "$fails" -eq 0 ] && echo "asan_cli: OK" && exit 0
echo "asan_cli: FAILED"
exit 1
