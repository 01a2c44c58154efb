#!/usr/bin/env bash
# `make install` into a private temporary prefix, then what a user of the
# installed library does: the README's C example built with
# `pkg-config --cflags --libs tcnla` and run; the installed libtcnla.so
# exports tcnla_* only and links neither tmglib nor the static CUDA runtime;
# `make uninstall` leaves none of the installed files behind.
# Installs the build in $TCNLA_BUILD (default: build) without rebuilding it.
# Exit status 0 when every check passes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TCNLA_BUILD:-$root/build}
case $build in /*) ;; *) build=$root/$build ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tcnla_install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "install_check: $*" >&2; exit 1; }

# the make of the caller (make test) must not leak into this one
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$root" BUILD="$build" PREFIX="$prefix" "$@"; }

mk install >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "make install failed"; }
for f in include/tcnla.h lib/libtcnla.so.0.1.0 lib/libtcnla.so.0 lib/libtcnla.so lib/libtcnla.a \
         lib/pkgconfig/tcnla.pc bin/tcnla; do
    [ -e "$prefix/$f" ] || fail "$f not installed"
done
so=$prefix/lib/libtcnla.so.0.1.0
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libtcnla.so.0 ] || fail "soname is '$soname'"

# exports: tcnla_* only
other=$(nm -D --defined-only "$so" | awk '$3 != "" && $3 !~ /^tcnla_/ {print $3}')
[ -z "$other" ] || fail "libtcnla.so exports more than tcnla_*: $(echo $other | head -c 300)"
nm -D --defined-only "$so" | grep -q ' tcnla_sgemm$' || fail "tcnla_sgemm not exported"
# dependencies: no tmglib, no static CUDA runtime, no cuBLAS / cuSOLVER / cuRAND
needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if echo "$needed" | grep -Eq 'tmglib|cudart_static|cublas|cusolver|curand'; then
    fail "libtcnla.so needs: $(echo $needed)"
fi
ldd "$so" >"$tmp/ldd.txt" 2>&1 || true
grep -q 'not found' "$tmp/ldd.txt" && fail "ldd: $(grep 'not found' "$tmp/ldd.txt")"
grep -Eq 'tmglib|cudart_static' "$tmp/ldd.txt" && fail "ldd lists tmglib or cudart_static"
# a CUDA build calls the runtime in libcudart.so, not a copy linked in
nm "$so" | grep -Eq ' [TtWw] cudaMalloc$' && fail "libtcnla.so holds the static CUDA runtime"
if nm -D --undefined-only "$so" | grep -q ' cudaMalloc$'; then
    echo "$needed" | grep -q '^libcudart\.so' || fail "libtcnla.so calls the CUDA runtime but does not need libcudart.so"
fi

# the README's example, complete
cat >"$tmp/example.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <tcnla.h>

int main(void) {
    const int m = 64, n = 48, k = 80;
    float *A = malloc(sizeof(float) * m * k), *B = malloc(sizeof(float) * k * n);
    float *C = malloc(sizeof(float) * m * n);
    for (int i = 0; i < m * k; i++) A[i] = (float)((i * 37 % 101) - 50) / 63.0f;
    for (int i = 0; i < k * n; i++) B[i] = (float)((i * 53 % 97) - 48) / 31.0f;
    tcnla_handle_t h;
    int st = tcnla_create(&h, TCNLA_BACKEND_AUTO); /* GPU if present, else CPU */
    if (st) { fprintf(stderr, "tcnla_create: %s\n", tcnla_strerror(st)); return 1; }
    float *dA, *dB, *dC; /* memory of the handle's backend */
    if (tcnla_malloc(h, (void **)&dA, sizeof(float) * m * k) ||
        tcnla_malloc(h, (void **)&dB, sizeof(float) * k * n) ||
        tcnla_malloc(h, (void **)&dC, sizeof(float) * m * n)) return 1;
    tcnla_memcpy(h, dA, A, sizeof(float) * m * k, TCNLA_MEMCPY_HOST_TO_HANDLE);
    tcnla_memcpy(h, dB, B, sizeof(float) * k * n, TCNLA_MEMCPY_HOST_TO_HANDLE);
    st = tcnla_sgemm(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k,
                     1.0f, dA, m, dB, k, 0.0f, dC, m);
    if (st) { fprintf(stderr, "tcnla: %s\n", tcnla_strerror(st)); return 1; }
    tcnla_memcpy(h, C, dC, sizeof(float) * m * n, TCNLA_MEMCPY_HANDLE_TO_HOST);
    double worst = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0, a = 0;
            for (int p = 0; p < k; p++) {
                s += (double)A[i + p * m] * B[p + j * k];
                a += fabs((double)A[i + p * m] * B[p + j * k]);
            }
            double e = fabs(C[i + j * m] - s) / (a > 0 ? a : 1);
            if (e > worst) worst = e;
        }
    tcnla_free(h, dA); tcnla_free(h, dB); tcnla_free(h, dC);
    tcnla_destroy(h);
    free(A); free(B); free(C);
    printf("largest error / sum|a b|: %.3g\n", worst);
    return worst < 1e-4 ? 0 : 2;
}
C
pc() { PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config "$@" tcnla; }
command -v pkg-config >/dev/null || fail "pkg-config not installed (scripts/deps.sh installs it)"
[ "$(pc --modversion)" = 0.1.0 ] || fail "pkg-config --modversion: $(pc --modversion)"
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -o "$tmp/example" "$tmp/example.c" $(pc --cflags --libs) 2>"$tmp/cc.log" ||
    { cat "$tmp/cc.log" >&2; fail "example does not build with pkg-config --cflags --libs tcnla"; }
ldd "$tmp/example" | grep -q "$prefix/lib/libtcnla.so.0" || fail "example does not use the installed libtcnla.so.0"
"$tmp/example" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log" >&2; fail "example failed"; }
# and against the static library
# shellcheck disable=SC2046
$cc -o "$tmp/example_static" "$tmp/example.c" $(pc --cflags) "$prefix/lib/libtcnla.a" \
    $(pc --libs --static | sed 's/-ltcnla//') 2>"$tmp/cc.log" ||
    { cat "$tmp/cc.log" >&2; fail "example does not build with libtcnla.a and Libs.private"; }
"$tmp/example_static" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log" >&2; fail "static example failed"; }
"$prefix/bin/tcnla" --help >/dev/null 2>&1 || fail "installed bin/tcnla --help failed"

mk uninstall >"$tmp/uninstall.log" 2>&1 || { cat "$tmp/uninstall.log" >&2; fail "make uninstall failed"; }
left=$(find "$prefix" \( -type f -o -type l \) | sed "s|^$prefix/||")
[ -z "$left" ] || fail "left after make uninstall: $(echo $left)"
echo "install_check: ok ($(cat "$tmp/run.log" 2>/dev/null))"
