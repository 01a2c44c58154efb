#!/usr/bin/env bash
# The Python package as a user installs it: a fresh venv, `pip install .`
# (the Makefile's build folder is reused: where its objects are up to date
# only libtcnla.so is linked), a small computation from outside the tree
# with the installed package, then the CPU pytest suite (python/tests; the
# gpu-marked tests skip without a GPU). PIP_TEST_PACKAGES: what the tests
# need from PyPI (default numpy scipy scikit-learn pytest). Exit status 0
# when everything passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tcnla_py.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
py=$tmp/venv/bin/python
pipq() { "$py" -m pip -q --disable-pip-version-check "$@"; }
pipq install ${PIP_TEST_PACKAGES:-numpy scipy scikit-learn pytest}
# the make of a caller (make test-python) must not leak into the build's
(cd "$root" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$py" -m pip -q \
    --disable-pip-version-check install .)
(cd "$tmp" && "$py" -c '
import numpy as np, tcnla
r = np.random.default_rng(0)
X = (r.standard_normal((300, 20)) @ r.standard_normal((20, 200))).astype(np.float32)
U, S, Vt = tcnla.rsvd(X, 20)
s = np.linalg.svd(X.astype(np.float64), compute_uv=False)[:20]
assert np.allclose(S, s, rtol=1e-4), (S, s)
C = tcnla.matmul(X, X.T)
ref = X.astype(np.float64) @ X.T.astype(np.float64)
err, base = (np.linalg.norm(Z - ref) / np.linalg.norm(ref) for Z in (C, X @ X.T))
assert err <= 2 * base, (err, base)
assert "site-packages" in tcnla.__file__
print(f"python: tcnla {tcnla.version()} from {tcnla.__file__}: rank-20 rsvd max rel. error "
      f"of S {np.max(np.abs(S - s) / s):.1e}, matmul error {err:.2e} (numpy FP32 {base:.2e})")
')
cd "$root"
"$py" -m pytest -q -p no:cacheprovider python/tests
