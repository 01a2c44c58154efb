#!/usr/bin/env bash
# The scale of the input never matters to the command's drivers: `tcnla
# rsvd`, `lra` and `hosvd` with their default options on one generated
# matrix / tensor multiplied by 2^-60, 1e-7, 1e7 and 2^60 must exit 0 with
# the relative residual of the unscaled input within 1 % (the truncation
# error of a rank below the input's, far above rounding). Needs the build's
# tcnla (build/tcnla) and python3 with numpy (to scale the .npy files).
#   tests/gpu/scale_check.sh [backend]   (default cuda)
set -u
be="${1:-cuda}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tn_scale.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
T=build/tcnla
python3 -c "import numpy" 2>/dev/null || { echo "scale_check: needs python3 with numpy" >&2; exit 2; }
status=0
$T gen --kind exp --m 4096 --n 4096 --rank 256 --output "$tmp/A.npy" >/dev/null || exit 1
$T gen --kind tucker --dims 256,256,256 --ranks 32,32,32 --output "$tmp/T.npy" >/dev/null || exit 1
scale() { # file scale out
  python3 -c "import numpy as np, sys; a = np.load(sys.argv[1]); \
np.save(sys.argv[3], (a.astype(np.float64) * float.fromhex(sys.argv[2])).astype(np.float32))" \
    "$1" "$2" "$3"
}
field() { sed -n "s/.*\"$1\":\([-+0-9.eE]*\).*/\1/p"; }
check() { # name command... ; prints the residual at each scale and the ratio
  local name=$1; shift
  local r0 r
  r0=$("$@" --input "$tmp/in1.npy" --json | field "$key")
  echo "$name: unscaled $r0"
  for s in 0x1p-60 "$(python3 -c 'print((1e-7).hex())')" "$(python3 -c 'print((1e7).hex())')" 0x1p60; do
    scale "$src" "$s" "$tmp/in.npy" || { status=1; continue; }
    if ! r=$("$@" --input "$tmp/in.npy" --json | field "$key") || [ -z "$r" ]; then
      echo "FAIL $name scale $s: the command failed"; status=1; continue
    fi
    if python3 -c "import sys; r0, r = float(sys.argv[1]), float(sys.argv[2]); \
sys.exit(0 if abs(r / r0 - 1) <= 0.01 else 1)" "$r0" "$r"; then
      echo "ok   $name scale $(python3 -c "print(float.fromhex('$s'))"): $r"
    else
      echo "FAIL $name scale $(python3 -c "print(float.fromhex('$s'))"): $r against $r0"; status=1
    fi
  done
}
src="$tmp/A.npy"; cp "$src" "$tmp/in1.npy"; key=rel_residual
check rsvd $T rsvd --backend "$be" --rank 256
key=rel_error
check lra $T lra --backend "$be" --rank 64
src="$tmp/T.npy"; cp "$src" "$tmp/in1.npy"; key=rel_error
# (ranks below the tensor's multilinear rank 28: a truncation error far
# above rounding, which a 1 % comparison can see)
check hosvd $T hosvd --backend "$be" --ranks 16,16,16
exit $status
