#!/usr/bin/env bash
# Builds the libFuzzer targets of the file-format layer (fuzz_npy, fuzz_mtx)
# with clang -fsanitize=fuzzer,address,undefined and runs each for a bounded
# time from the seed corpora tests/fuzz/corpus_{npy,mtx} (left unchanged: new
# inputs go to a working copy under the output folder).
#
#   tests/fuzz/run.sh                 30 s per target
#   FUZZ_SECONDS=300 tests/fuzz/run.sh
#   FUZZ_OUT=/tmp/f FUZZ_CC=clang-15 tests/fuzz/run.sh
#
# Exits 0 when no target crashed; 1 when a target found a crash, leak,
# timeout or failed check: the input is kept as $FUZZ_OUT/crash-<target>-*
# and the log as $FUZZ_OUT/<target>.log; 2 when no fuzzing ran because no
# clang with libFuzzer is found and none could be installed (CI fails then).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${FUZZ_SECONDS:-30}
out=${FUZZ_OUT:-$root/build/fuzz}
targets="npy mtx"
mkdir -p "$out" || exit 1

# A clang that links -fsanitize=fuzzer programs, in $cc; 1 when none.
find_cc() {
    local c
    printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)'\
'{ (void)d; (void)n; return 0; }\n' > "$out/probe.c"
    for c in ${FUZZ_CC:-} clang clang-14 clang-15 clang-16 clang-17 clang-18 clang-19; do
        command -v "$c" > /dev/null 2>&1 || continue
        if "$c" -fsanitize=fuzzer,address,undefined "$out/probe.c" -o "$out/probe" \
            > /dev/null 2>&1; then
            cc=$c
            return 0
        fi
    done
    return 1
}

if ! find_cc; then
    if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null 2>&1; then
        echo "fuzz: clang or its fuzzer runtime is missing; installing clang libclang-rt-14-dev"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q clang libclang-rt-14-dev > "$out/apt.log" 2>&1 ||
            { apt-get update -q >> "$out/apt.log" 2>&1 &&
              apt-get install -y -q clang libclang-rt-14-dev >> "$out/apt.log" 2>&1; }
    fi
    if ! find_cc; then
        echo "fuzz: FAILED: no clang with libFuzzer (-fsanitize=fuzzer) found, and it could not" \
             "be installed (needs root and apt-get: apt-get install clang libclang-rt-14-dev;" \
             "FUZZ_CC=... names another clang)"
        exit 2
    fi
fi
echo "fuzz: compiler $(command -v "$cc") ($("$cc" --version | head -n 1)), $secs s per target"

cflags="-std=c11 -g -O1 -fno-omit-frame-pointer -ffp-contract=off -D_GNU_SOURCE
        -I$root/include -I$root/app -I$here -Wall -Wextra
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
status=0
for t in $targets; do
    # shellcheck disable=SC2086
    if ! "$cc" $cflags "$root"/app/io/*.c "$here/fuzz_$t.c" -o "$out/fuzz_$t"; then
        echo "fuzz: building fuzz_$t failed"
        exit 1
    fi
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for t in $targets; do
    mkdir -p "$out/corpus_$t"
    "$out/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
        -dict="$here/$t.dict" -artifact_prefix="$out/crash-$t-" -print_final_stats=1 \
        "$out/corpus_$t" "$here/corpus_$t" > "$out/$t.log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -n 1)
    if [ "$rc" -ne 0 ]; then
        status=1
        echo "fuzz: fuzz_$t FAILED (exit $rc) after ${execs:-?} executions; log $out/$t.log:"
        grep -E "ERROR|runtime error|fuzz check failed|SUMMARY|Test unit written|artifact" \
            "$out/$t.log" | head -n 20
    else
        echo "fuzz: fuzz_$t ok: ${execs:-?} executions in $secs s, no crash" \
             "(corpus $(ls "$out/corpus_$t" | wc -l) inputs)"
    fi
done
exit $status
