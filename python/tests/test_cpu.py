"""tcnla's Python layer on host arrays (NumPy; PyTorch CPU when installed).
The backend is TCNLA_TEST_DEVICE ('cpu' by default; 'cuda' runs the same
host arrays on the GPU through the staging path). Accuracy bounds are O(1)
ratios against what the FP32 / FP64 baseline achieves on the same data."""

import os
import threading

import numpy as np
import pytest

import tcnla
from tcnla import _lib

DEV = os.environ.get("TCNLA_TEST_DEVICE", "cpu")


def rng(seed=0):
    return np.random.default_rng(seed)


def spectrum_matrix(m, n, s, seed=0, dtype=np.float64):
    """U diag(s) V^T with Haar-random orthonormal U, V."""
    r = rng(seed)
    U, _ = np.linalg.qr(r.standard_normal((m, len(s))))
    V, _ = np.linalg.qr(r.standard_normal((n, len(s))))
    return ((U * s) @ V.T).astype(dtype)


def rel_err(X, ref):
    return np.linalg.norm(np.asarray(X, np.float64) - ref) / np.linalg.norm(ref)


# ------------------------------------------------------------------- matmul
@pytest.mark.parametrize("order_a", ["C", "F"])
@pytest.mark.parametrize("order_b", ["C", "F"])
def test_matmul_fp32_accuracy_ratio(order_a, order_b):
    r = rng(1)
    a = np.asarray(r.standard_normal((130, 97)), np.float32, order=order_a)
    b = np.asarray(r.standard_normal((97, 71)), np.float32, order=order_b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    base = rel_err(a @ b, ref)  # numpy's FP32 SGEMM
    c, info = tcnla.matmul(a, b, device=DEV, return_info=True)
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == (130, 71)
    assert c.flags.c_contiguous
    assert rel_err(c, ref) <= 2.0 * base
    assert info.method == "tcec_fp16" and info.products == 1 and info.fallbacks == 0
    # the bound can fail: one FP16 product is far outside it
    c16 = tcnla.matmul(a, b, method="fp16", device=DEV)
    assert rel_err(c16, ref) > 10 * base


def test_matmul_views_leading_dimension():
    r = rng(2)
    big = r.standard_normal((200, 300)).astype(np.float32)
    a = big[10:60, 20:90]  # C-order view, ld = 300
    b = np.asfortranarray(big[:70, :40])  # F-order
    bt = big.T[5:75, 3:33]  # F-order view of the transpose, ld = 300
    for x, y in ((a, b), (a, bt)):
        ref = x.astype(np.float64) @ y.astype(np.float64)
        assert rel_err(tcnla.matmul(x, y, device=DEV), ref) <= 2.0 * max(rel_err(x @ y, ref),
                                                                          1e-8)


def test_matmul_odd_strides_copied():
    r = rng(3)
    a = r.standard_normal((40, 60)).astype(np.float32)[::2, ::3]  # no unit stride
    b = r.standard_normal((20, 30)).astype(np.float32)[::-1]  # negative stride
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert rel_err(tcnla.matmul(a, b, device=DEV), ref) <= 2.0 * rel_err(a @ b, ref)


def test_matmul_batched_like_numpy():
    r = rng(4)
    a = r.standard_normal((3, 4, 20, 30)).astype(np.float32)
    b = r.standard_normal((4, 30, 10)).astype(np.float32)
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    c, info = tcnla.matmul(a, b, device=DEV, return_info=True)
    assert c.shape == (3, 4, 20, 10)
    assert rel_err(c, ref) <= 2.0 * rel_err(np.matmul(a, b), ref)
    assert info.products == 12
    # batch strides that do not collapse to one: one call per leading index
    a2 = r.standard_normal((3, 8, 20, 30)).astype(np.float32)[:, 2:6]
    ref2 = np.matmul(a2.astype(np.float64), b.astype(np.float64))
    c2, info2 = tcnla.matmul(a2, b, device=DEV, return_info=True)
    assert rel_err(c2, ref2) <= 2.0 * rel_err(np.matmul(a2, b), ref2)
    assert info2.products == 12
    # F-order matrices in a batch whose strides do not collapse
    a4 = r.standard_normal((3, 8, 30, 20)).astype(np.float32).transpose(0, 1, 3, 2)[:, 2:6]
    ref4 = np.matmul(a4.astype(np.float64), b.astype(np.float64))
    assert rel_err(tcnla.matmul(a4, b, device=DEV), ref4) <= 2.0 * rel_err(np.matmul(a4, b),
                                                                            ref4)
    # broadcast of a batch of 1 and F-order matrices inside a batch
    a3 = np.asfortranarray(r.standard_normal((20, 30)).astype(np.float32))[None]
    b3 = r.standard_normal((5, 30, 10)).astype(np.float32)
    ref3 = np.matmul(a3.astype(np.float64), b3.astype(np.float64))
    assert rel_err(tcnla.matmul(a3, b3, device=DEV), ref3) <= 2.0 * rel_err(np.matmul(a3, b3),
                                                                            ref3)


def test_matmul_1d_and_empty():
    r = rng(5)
    A = r.standard_normal((7, 5)).astype(np.float32)
    v = r.standard_normal(5).astype(np.float32)
    w = r.standard_normal(7).astype(np.float32)
    assert tcnla.matmul(A, v, device=DEV).shape == (7,)
    np.testing.assert_allclose(tcnla.matmul(A, v, device=DEV), A @ v, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tcnla.matmul(w, A, device=DEV), w @ A, rtol=1e-5, atol=1e-5)
    assert np.shape(tcnla.matmul(v, v, device=DEV)) == ()
    z = tcnla.matmul(np.zeros((3, 0), np.float32), np.zeros((0, 4), np.float32), device=DEV)
    assert z.shape == (3, 4) and not z.any()
    assert tcnla.matmul(np.zeros((0, 3), np.float32), np.ones((3, 4), np.float32),
                        device=DEV).shape == (0, 4)


def test_matmul_scale_never_matters():
    """Data far outside FP16's range: computed on exactly scaled copies, the
    product of the in-range data times the power of two, bit for bit."""
    r = rng(6)
    a = r.standard_normal((32, 40)).astype(np.float32)
    b = r.standard_normal((40, 24)).astype(np.float32)
    c0, i0 = tcnla.matmul(a, b, device=DEV, return_info=True)
    for e in (-60, 40):
        c, info = tcnla.matmul(np.ldexp(a, e).astype(np.float32), b, device=DEV,
                               return_info=True)
        assert info.scaled == 1 and info.method == "tcec_fp16" and info.fallbacks == 0
        assert np.array_equal(np.asarray(c), np.ldexp(np.asarray(c0), e).astype(np.float32))
    assert i0.scaled == 0
    a6 = (a * 1e6).astype(np.float32)
    ref = a6.astype(np.float64) @ b
    c = tcnla.matmul(a6, b, device=DEV)
    assert rel_err(c, ref) <= 1.5 * rel_err(a6 @ b, ref)


_NO_SCALING = """
import numpy as np, tcnla
r = np.random.default_rng(6)
a = (r.standard_normal((32, 32)) * 1e6).astype(np.float32)
b = r.standard_normal((32, 32)).astype(np.float32)
try:
    tcnla.matmul(a, b, device=DEV)
    raise SystemExit("no range error")
except tcnla.TcnlaRangeError as e:
    assert e.status == tcnla._lib.ERR_RANGE and isinstance(e, tcnla.TcnlaError)
c, info = tcnla.matmul(a, b, device=DEV, range_policy="fallback", return_info=True)
ref = a.astype(np.float64) @ b
err = np.linalg.norm(c - ref) / np.linalg.norm(ref)
assert err <= 2.0 * np.linalg.norm(a @ b - ref) / np.linalg.norm(ref)
assert info.fallbacks == 1 and info.method == "tcec_tf32"
try:  # the setting is per call: the next call raises again
    tcnla.matmul(a, b, device=DEV)
    raise SystemExit("no range error after the fallback call")
except tcnla.TcnlaRangeError:
    pass
"""


def test_matmul_range_error_and_fallback_without_exact_scaling():
    """TCNLA_EXACT_SCALING=0 (read when a handle is created: a process of
    its own): the range error, and range_policy='fallback'."""
    import subprocess
    import sys
    env = dict(os.environ, TCNLA_EXACT_SCALING="0")
    r = subprocess.run([sys.executable, "-c", f"DEV = {DEV!r}" + _NO_SCALING], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("mode", ["dp", "cr"])
def test_matmul_fp64_ozaki(mode):
    r = rng(7)
    a = r.standard_normal((40, 50))
    b = r.standard_normal((50, 30))
    ref = np.matmul(a.astype(np.longdouble), b.astype(np.longdouble))
    err = lambda c: float(np.max(np.abs(c - ref) / np.abs(ref).max()))
    c, info = tcnla.matmul(a, b, method="ozaki", mode=mode, device=DEV, return_info=True)
    assert c.dtype == np.float64
    assert err(c) <= 2.0 * err(a @ b)
    assert info.ozaki_scheme in (1, 2) and info.products == 1
    if mode == "cr":  # every element the correctly rounded exact product
        from fractions import Fraction
        x, y = a[:6, :20], b[:20, :5]
        exact = np.array([[float(sum(Fraction(x[i, l]) * Fraction(y[l, j]) for l in range(20)))
                           for j in range(5)] for i in range(6)])
        assert np.array_equal(tcnla.matmul(x, y, method="ozaki", mode="cr", device=DEV), exact)
    # fixed slice counts: the error falls as slices are added; scheme by name
    e1, e3 = (err(tcnla.matmul(a, b, method="ozaki", mode="fixed", slices=d, scheme=1,
                               device=DEV)) for d in (1, 3))
    assert e3 < e1 / 100
    with pytest.raises(ValueError):
        tcnla.matmul(a, b, method="ozaki", mode="fixed", device=DEV)
    with pytest.raises(ValueError):
        tcnla.matmul(a, b, method="ozaki", scheme=3, device=DEV)
    # batched FP64
    a3 = r.standard_normal((2, 6, 8))
    c3 = tcnla.matmul(a3, b[:8, :5], method="ozaki_fp16", mode=mode, device=DEV)
    np.testing.assert_allclose(c3, a3 @ b[:8, :5], rtol=1e-13, atol=1e-13)


def test_matmul_fp64_ozaki_auto_mode():
    """mode='auto': a small product goes to the native GEMM (its bits, Info.method)."""
    r = rng(8)
    a = r.standard_normal((24, 40))
    b = r.standard_normal((40, 16))
    c, info = tcnla.matmul(a, b, method="ozaki", mode="auto", device=DEV, return_info=True)
    ref = tcnla.matmul(a, b, method="native_fp64", device=DEV)
    assert info.method == "native_fp64" and info.ozaki_scheme == 0
    assert np.array_equal(c, ref)
    c32, info = tcnla.matmul(a.astype(np.float32), b.astype(np.float32), method="ozaki_int8",
                             mode="AUTO", device=DEV, return_info=True)
    assert info.method == "native_fp32"
    np.testing.assert_allclose(c32, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(ValueError):
        tcnla.matmul(a, b, method="ozaki", mode="automatic", device=DEV)


def test_matmul_bad_inputs():
    a = np.ones((4, 5), np.float32)
    with pytest.raises(ValueError):
        tcnla.matmul(a, np.ones((6, 3), np.float32))  # inner dimensions
    with pytest.raises(tcnla.TcnlaValueError):
        tcnla.matmul(a, np.ones((5, 3), np.float64))  # dtypes differ
    with pytest.raises(ValueError):
        tcnla.matmul(a.astype(np.float16), np.ones((5, 3), np.float16))
    with pytest.raises(ValueError):
        tcnla.matmul(a.astype(np.int32), np.ones((5, 3), np.int32))
    with pytest.raises(ValueError):
        tcnla.matmul(a, np.ones((5, 3), np.float32), method="no_such_method")
    with pytest.raises(ValueError):
        tcnla.matmul(a.astype(np.float64), np.ones((5, 3)), method="tcec_fp16")
    with pytest.raises(ValueError):
        tcnla.matmul(a, np.ones((5, 3), np.float32), range_policy="maybe")
    with pytest.raises(ValueError):
        tcnla.matmul(np.ones((2, 4, 5), np.float32), np.ones((3, 5, 2), np.float32))
    with pytest.raises(ValueError):
        tcnla.matmul(a, np.ones((5, 3), np.float32), device="tpu")
    with pytest.raises(ValueError):
        tcnla.matmul(a, object())
    with pytest.raises(ValueError):
        tcnla.matmul(np.float32(1.0), a)


def test_status_mapping():
    with pytest.raises(tcnla.TcnlaValueError) as e:
        _lib.check(-5, "tcnla_rsvd", ("handle", "opts", "m", "n", "A"))
    assert e.value.status == -5 and e.value.argument == "A" and "argument 5" in str(e.value)
    for st, cls in ((_lib.ERR_RANGE, tcnla.TcnlaRangeError),
                    (_lib.ERR_NUMERICAL, tcnla.TcnlaNumericalError),
                    (_lib.ERR_NO_BACKEND, tcnla.TcnlaBackendError),
                    (_lib.ERR_ALLOC, tcnla.TcnlaError)):
        with pytest.raises(cls) as e:
            _lib.check(st, "f")
        assert e.value.status == st and e.value.message == _lib.strerror(st)


def test_no_gpu_device_raises_cleanly():
    compiled, count = tcnla.cuda_available()
    if compiled and count > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(tcnla.TcnlaError):
        tcnla.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), device="cuda")


def test_threads_share_handle():
    r = rng(8)
    mats = [(r.standard_normal((64, 48)).astype(np.float32),
             r.standard_normal((48, 40)).astype(np.float32)) for _ in range(8)]
    serial = [tcnla.matmul(a, b, device=DEV) for a, b in mats]
    out = [None] * len(mats)

    def work(i):
        for _ in range(3):
            out[i] = tcnla.matmul(*mats[i], device=DEV)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(len(mats))]
    [t.start() for t in ts]
    [t.join() for t in ts]
    for s, o in zip(serial, out):
        assert np.array_equal(s, o)


# ---------------------------------------------------------------------- SVD
SPEC = np.concatenate([1.0 - 0.05 * np.arange(10), 0.01 * 0.9 ** np.arange(110)])


@pytest.mark.parametrize("order", ["C", "F"])
def test_rsvd_layouts(order):
    A = np.asarray(spectrum_matrix(300, 200, SPEC, seed=9), np.float32, order=order)
    U, S, Vt, info = tcnla.rsvd(A, 10, device=DEV, return_info=True)
    assert U.shape == (300, 10) and S.shape == (10,) and Vt.shape == (10, 200)
    assert U.flags[order + "_CONTIGUOUS"] and Vt.flags[order + "_CONTIGUOUS"]
    np.testing.assert_allclose(S, SPEC[:10], rtol=1e-5)
    opt = np.sqrt(np.sum(SPEC[10:] ** 2))
    res = np.linalg.norm(A - (U * S) @ Vt)
    assert res <= 1.01 * opt
    assert info.products > 0 and info.backend == DEV
    # the default projection (power iterations follow): FP16 where it runs in place
    assert info.proj_method in ("fp16", "shgemm_fp16") and info.proj_method in info.methods
    assert info.power_method in ("fp16", "shgemm_fp16") and info.power_method in info.methods


def test_rsvd_options_by_name():
    A = spectrum_matrix(200, 150, SPEC, seed=10, dtype=np.float32)
    U, S, Vt, info = tcnla.rsvd(A, 10, oversampling=5, power_iters=1, proj_method="native_fp32",
                                gemm_method="native_fp32", random_format="fp32",
                                random_dist="uniform", orth="householder", on_breakdown="error",
                                seed=7, timings=True, device=DEV, return_info=True)
    np.testing.assert_allclose(S, SPEC[:10], rtol=1e-4)
    assert info.methods == ["native_fp32"]
    assert set(info.timings) == set(_lib.RSVD_STEPS) and all(t >= 0 for t in
                                                               info.timings.values())
    U2, S2, _ = tcnla.rsvd(A, 10, power_method="fp16", device=DEV)
    np.testing.assert_allclose(S2, SPEC[:10], rtol=1e-4)
    # the seed decides the result
    a1 = tcnla.rsvd(A, 10, seed=3, device=DEV)[0]
    assert np.array_equal(a1, tcnla.rsvd(A, 10, seed=3, device=DEV)[0])


@pytest.mark.parametrize("order", ["C", "F"])
def test_rsvd_pass_efficient_between_q_minus_1_and_q(order):
    # 2q + 1 passes: the residual between those of q - 1 and q iterations
    # (the same Omega; every product in FP32 here), in both layouts, and
    # through svd_lowrank's and randomized_svd's keywords
    spec = 1.0 / np.sqrt(np.arange(1.0, 151.0))
    A = np.asarray(spectrum_matrix(240, 150, spec, seed=12), np.float32, order=order)
    kw = dict(proj_method="native_fp32", gemm_method="native_fp32", random_format="fp32",
              device=DEV)
    res = []
    for q, pe in ((1, False), (2, True), (2, False)):
        U, S, Vt, info = tcnla.rsvd(A, 8, oversampling=2, power_iters=q, pass_efficient=pe,
                                    return_info=True, **kw)
        res.append(np.linalg.norm(A - (U * S) @ Vt))
        np.testing.assert_allclose(U.T @ U, np.eye(8), atol=1e-5)
        np.testing.assert_allclose(Vt @ Vt.T, np.eye(8), atol=1e-5)
        if pe:
            products, S_pe = info.products, S
    assert res[2] * (1 - 1e-5) <= res[1] <= res[0] * (1 + 1e-5)
    assert res[1] < res[0] * (1 - 1e-3)  # strict on the slow decay
    assert products == info.products - 1
    _, S2, _ = tcnla.svd_lowrank(A, q=8, niter=2, oversampling=2, seed=1, pass_efficient=True,
                                 **kw)
    _, S3, _ = tcnla.randomized_svd(A, 8, n_oversamples=2, n_iter=2, random_state=1,
                                    pass_efficient=True, **kw)
    np.testing.assert_allclose(S2, S3, rtol=1e-6)
    np.testing.assert_allclose(S2, S_pe, rtol=1e-6)  # (the same seed)


def test_rsvd_bad_inputs():
    A = np.ones((30, 20), np.float32)
    for kw in ({"orth": "gram_schmidt"}, {"random_dist": "cauchy"}, {"proj_method": "x"},
               {"oversampling": -1}, {"power_iters": 101}, {"seed": -1},
               {"pass_efficient": 1}, {"pass_efficient": "yes"},
               {"pass_efficient": True, "power_iters": 0}):
        with pytest.raises(ValueError):
            tcnla.rsvd(A, 2, device=DEV, **kw)
    with pytest.raises(ValueError):
        tcnla.rsvd(A, 15, device=DEV)  # rank + oversampling > min(m, n)
    with pytest.raises(ValueError):
        tcnla.rsvd(A, 0, device=DEV)
    with pytest.raises(ValueError):
        tcnla.rsvd(A.astype(np.float64), 2, device=DEV)
    with pytest.raises(ValueError):
        tcnla.rsvd(np.ones(5, np.float32), 1, device=DEV)
    with pytest.raises(ValueError):
        tcnla.randomized_svd(np.ones((3, 40, 50), np.float32), 1, device=DEV)
    with pytest.raises(tcnla.TcnlaNumericalError):
        B = A.copy()
        B[1, 1] = np.nan
        tcnla.rsvd(B, 2, device=DEV)


def test_svd_lowrank_semantics():
    A = spectrum_matrix(250, 180, SPEC, seed=11)  # float64: rounded to float32 inside
    U, S, V = tcnla.svd_lowrank(A, q=10, niter=2, device=DEV)
    assert U.dtype == np.float64 and U.shape == (250, 10) and V.shape == (180, 10)
    np.testing.assert_allclose(S, SPEC[:10], rtol=1e-5)
    assert np.linalg.norm(A - (U * S) @ V.T) <= 1.01 * np.sqrt(np.sum(SPEC[10:] ** 2))
    # M: the SVD of A - M
    M = rng(12).standard_normal((1, 180))
    U2, S2, V2 = tcnla.svd_lowrank(A + M, q=10, M=M, device=DEV)
    np.testing.assert_allclose(S2, SPEC[:10], rtol=1e-5)
    with pytest.raises(ValueError):
        tcnla.svd_lowrank(A, q=181, device=DEV)
    # batches as torch's: one call per matrix, C and F matrices
    for order in ("C", "F"):
        Ab = np.stack([A, 2 * A, 3 * A]).astype(np.float32)
        if order == "F":
            Ab = np.swapaxes(np.swapaxes(Ab, 1, 2).copy(), 1, 2)
        Ub, Sb, Vb, info = tcnla.svd_lowrank(Ab, q=10, device=DEV, return_info=True)
        assert Ub.shape == (3, 250, 10) and Sb.shape == (3, 10) and Vb.shape == (3, 180, 10)
        for i in range(3):
            np.testing.assert_allclose(Sb[i], (i + 1) * SPEC[:10], rtol=1e-5)
            R = Ab[i].astype(np.float64) - (Ub[i] * Sb[i]) @ Vb[i].T
            assert np.linalg.norm(R) <= 1.01 * (i + 1) * np.sqrt(np.sum(SPEC[10:] ** 2))
        assert info.products > 3


def test_randomized_svd_matches_sklearn():
    sk_rsvd = pytest.importorskip("sklearn.utils.extmath").randomized_svd
    A = spectrum_matrix(400, 300, SPEC, seed=13)  # float64, as sklearn computes
    k = 10
    Us, Ss, Vts = sk_rsvd(A, k, random_state=0)
    Ut, St, Vtt = tcnla.randomized_svd(A, k, random_state=0, device=DEV)
    assert Ut.shape == Us.shape and Vtt.shape == Vts.shape and Ut.dtype == np.float64
    res_s = np.linalg.norm(A - (Us * Ss) @ Vts)
    res_t = np.linalg.norm(A - (Ut * St) @ Vtt)
    assert res_t <= 1.01 * res_s
    np.testing.assert_allclose(St, Ss, rtol=1e-5)
    # the same sign convention (svd_flip): the vectors agree, not just up to sign
    assert np.max(np.abs(Ut - Us)) < 1e-3 and np.max(np.abs(Vtt - Vts)) < 1e-3
    # float32 input stays float32; n_iter='auto' and explicit
    U32, S32, _ = tcnla.randomized_svd(A.astype(np.float32), k, n_iter=3, device=DEV)
    assert U32.dtype == np.float32
    np.testing.assert_allclose(S32, Ss, rtol=1e-5)
    with pytest.raises(NotImplementedError):
        sparse = pytest.importorskip("scipy.sparse")
        tcnla.randomized_svd(sparse.random(50, 40, format="csr"), 3)
    with pytest.raises(ValueError):
        tcnla.randomized_svd(A, k, power_iteration_normalizer="QQ")
    with pytest.raises(ValueError):
        tcnla.randomized_svd(A, k, random_state="seed")


# ------------------------------------------------------------- lra / hosvd
@pytest.mark.parametrize("order", ["C", "F"])
def test_lra(order):
    A = np.asarray(spectrum_matrix(240, 200, SPEC, seed=14), np.float32, order=order)
    opt = np.sqrt(np.sum(SPEC[10:] ** 2))
    X, Y, info = tcnla.lra(A, 10, device=DEV, return_info=True)
    assert X.shape == (240, 30) and Y.shape == (200, 30)  # refined: 3k columns
    assert np.linalg.norm(A - X @ Y.T) <= 1.05 * opt
    assert info.products > 0
    X2, Y2 = tcnla.lra(A, 10, refine=False, tgemm="none", gemm_method="native_fp32",
                       device=DEV)
    assert X2.shape == (240, 10)
    # one pass without power iterations: a randomized range finder's residual,
    # a small factor above the optimal one (refinement above closes the gap)
    assert np.linalg.norm(A - X2 @ Y2.T) <= 1.5 * opt
    X3, Y3 = tcnla.lra(A, 10, recompress=True, device=DEV)
    assert X3.shape == (240, 10)
    with pytest.raises(ValueError):
        tcnla.lra(A, 100, device=DEV)  # 2k + p > min(m, n)
    with pytest.raises(ValueError):
        tcnla.lra(A, 5, tgemm="8_8", device=DEV)


@pytest.mark.parametrize("order", ["C", "F"])
def test_hosvd(order):
    r = rng(15)
    dims, ranks = (30, 24, 20), (5, 4, 3)
    core = r.standard_normal(ranks)
    Qs = [np.linalg.qr(r.standard_normal((d, j)))[0] for d, j in zip(dims, ranks)]
    T = np.einsum("abc,ia,jb,kc->ijk", core, *Qs)
    T32 = np.asarray(T, np.float32, order=order)
    G, Q, info = tcnla.hosvd(T32, ranks, device=DEV, return_info=True)
    assert G.shape == ranks and [q.shape for q in Q] == [(d, j) for d, j in zip(dims, ranks)]
    R = np.einsum("abc,ia,jb,kc->ijk", G.astype(np.float64), *[q.astype(np.float64) for q in Q])
    base = rel_err(T32, T)  # the FP32 rounding of T itself
    assert rel_err(R, T) <= 50 * base
    for q in Q:
        assert np.linalg.norm(q.T.astype(np.float64) @ q - np.eye(q.shape[1])) < 1e-5
    assert info.products > 0
    with pytest.raises(ValueError):
        tcnla.hosvd(T32, (5, 4), device=DEV)
    with pytest.raises(ValueError):
        tcnla.hosvd(T32, (31, 4, 3), device=DEV)
    with pytest.raises(ValueError):
        tcnla.hosvd(np.ones(5, np.float32), (1,), device=DEV)


# ------------------------------------------------------- other array kinds
class DLPackOnly:
    """Exposes a NumPy array through DLPack only."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_and_lists():
    r = rng(16)
    a = r.standard_normal((20, 30)).astype(np.float32)
    b = r.standard_normal((30, 10)).astype(np.float32)
    c = tcnla.matmul(DLPackOnly(a), DLPackOnly(b), device=DEV)
    assert isinstance(c, np.ndarray)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    c2 = tcnla.matmul(a.tolist(), b.tolist(), method="native_fp64", device=DEV)  # float64
    np.testing.assert_allclose(c2, a.astype(np.float64) @ b, rtol=1e-12)


def test_torch_cpu():
    torch = pytest.importorskip("torch")
    A = torch.from_numpy(spectrum_matrix(200, 150, SPEC, seed=17, dtype=np.float32))
    U, S, V = tcnla.svd_lowrank(A, q=10, niter=2, device=DEV)
    assert isinstance(U, torch.Tensor) and U.device.type == "cpu" and V.shape == (150, 10)
    Ut, St, Vt = torch.svd_lowrank(A, q=10, niter=2)
    np.testing.assert_allclose(S.numpy(), St.numpy(), rtol=1e-4)
    a, b = torch.randn(3, 20, 30), torch.randn(30, 12)
    c = tcnla.matmul(a, b, device=DEV)
    assert isinstance(c, torch.Tensor) and c.shape == (3, 20, 12)
    ref = a.double() @ b.double()
    assert (c.double() - ref).norm() <= 2.0 * (a @ b - ref).norm()
    c = tcnla.matmul(a.transpose(1, 2).contiguous().transpose(1, 2), b, device=DEV)
    assert (c.double() - ref).norm() <= 2.0 * (a @ b - ref).norm()


# ------------------------------------------------- pointers handed to C
def spy(monkeypatch, name):
    """Records the arguments of every call of the C function `name`."""
    L = _lib.lib()
    real = getattr(L, name)
    calls = []

    def f(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(L, name, f)
    return calls


def test_views_passed_in_place(monkeypatch):
    if DEV != "cpu":
        pytest.skip("host pointers reach C only on the CPU backend")
    r = rng(18)
    big = r.standard_normal((120, 90)).astype(np.float32)
    a = big[10:50, 5:65]  # C-order view, ld 90
    bt = big.T[7:67, 20:45]  # F-order view, ld 90
    calls = spy(monkeypatch, "tcnla_sgemm_ex")
    c = tcnla.matmul(a, bt, device="cpu")
    (args,) = calls
    # C^T = op(b') op(a'): b's memory first, then a's, as they are
    assert args[8] == bt.__array_interface__["data"][0] and args[9] == 90
    assert args[10] == a.__array_interface__["data"][0] and args[11] == 90
    assert (args[2], args[3]) == (_lib.OP_T, _lib.OP_N)
    assert args[13] == c.__array_interface__["data"][0]
    calls = spy(monkeypatch, "tcnla_rsvd")
    U, S, Vt = tcnla.rsvd(big[:, :80], 5, device="cpu")
    (args,) = calls
    assert args[4] == big.__array_interface__["data"][0] and args[5] == 90
    assert (args[2], args[3]) == (80, 120)  # the transpose, column-major
    assert args[6] == Vt.__array_interface__["data"][0]  # the C call's U is Vt
    assert args[9] == U.__array_interface__["data"][0]
