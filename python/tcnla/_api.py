"""The functions of the package: rsvd, svd_lowrank, randomized_svd, lra,
hosvd, matmul (docs/python.md)."""

import ctypes as C
import itertools
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from . import _arrays as ar
from . import _lib as L
from ._lib import TcnlaValueError


# ---------------------------------------------------------------------- info
@dataclass
class Info:
    """What one call computed with (from tcnla_info_t): `method` the last
    product's GEMM method as run (after range fallbacks, the native path for
    NaN / Inf, the Ozaki scheme's FP64 fallback), `methods` every method that
    computed some product, `products` the matrix products run, `fallbacks`
    those run with another method than asked, `scaled` those computed on
    operands scaled exactly by powers of two (rows of op(A), columns of
    op(B): data outside FP16's range), the last Ozaki product's
    scheme / slice or moduli counts, the backend's kernel `path`, for rsvd
    the methods its projection (`proj_method`) and power iterations
    (`power_method`, None without them) ran with, as chosen where the
    options leave them to the library, and for rsvd(timings=True) the
    seconds per step. `backend` / `device` say where
    the call ran ('cpu' or 'cuda', the CUDA ordinal or None)."""
    method: Optional[str] = None
    methods: List[str] = field(default_factory=list)
    products: int = 0
    fallbacks: int = 0
    scaled: int = 0
    ozaki_scheme: int = 0
    ozaki_d: int = 0
    ozaki_slices_a: int = 0
    ozaki_slices_b: int = 0
    path: int = 0
    proj_method: Optional[str] = None
    power_method: Optional[str] = None
    backend: Optional[str] = None
    device: Optional[int] = None
    timings: Optional[Dict[str, float]] = None

    def _add(self, ci):
        """Accumulates one tcnla_info_t (products of a batch or a driver)."""
        if ci.products <= 0 and ci.methods == 0:
            return
        self.method = L.gemm_method_name(ci.method)
        for m in range(L.GEMM_METHOD_COUNT):
            nm = L.gemm_method_name(m)
            if ci.methods >> m & 1 and nm not in self.methods:
                self.methods.append(nm)
        self.products += ci.products
        self.fallbacks += ci.fallbacks
        self.scaled += ci.scaled
        if ci.ozaki_scheme:
            self.ozaki_scheme, self.ozaki_d = ci.ozaki_scheme, ci.ozaki_d
            self.ozaki_slices_a, self.ozaki_slices_b = ci.ozaki_slices_a, ci.ozaki_slices_b
        self.path = ci.path
        if ci.proj_method:
            self.proj_method = L.gemm_method_name(ci.proj_method)
        if ci.power_method:
            self.power_method = L.gemm_method_name(ci.power_method)


# ------------------------------------------------------------------- devices
def _parse_device(device):
    """None | 'cpu' | ('cuda', ordinal or None)."""
    if device is None:
        return None
    if isinstance(device, int) and not isinstance(device, bool):
        return ("cuda", device)
    s = str(device).strip().lower()
    if s == "cpu":
        return "cpu"
    if s == "cuda" or s == "gpu":
        return ("cuda", None)
    if s.startswith("cuda:") and s[5:].isdigit():
        return ("cuda", int(s[5:]))
    raise TcnlaValueError(f"device: 'cpu', 'cuda', 'cuda:N', N or None expected, got "
                          f"{device!r}", argument="device")


def _span(a):
    """Elements from a's first to its last one (strides >= 0)."""
    if any(n == 0 for n in a.shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(a.shape, a.strides))


class _Call:
    """Where one call runs: the handle of (backend, device), the stream, and
    for host arrays computed on a GPU the staging buffers (tcnla_malloc +
    tcnla_memcpy on the handle). Use as `with _Call(...) as c:`; the
    handle's lock is held throughout."""

    def __init__(self, fn, arrays, device):
        self.fn = fn
        locs = {a.device for a in arrays}
        if len(locs) > 1:
            raise TcnlaValueError(f"{fn}: the arrays are on different devices "
                                  f"({sorted(str(x) for x in locs)})", argument="device")
        loc = locs.pop()
        dev = _parse_device(device)
        if loc is not None:
            if dev == "cpu":
                raise TcnlaValueError(f"{fn}: the input is on cuda:{loc} and device='cpu': "
                                      "tcnla does not copy GPU inputs to the host; move it "
                                      "first (e.g. .cpu())", argument="device")
            if dev is not None and dev[1] is not None and dev[1] != loc:
                raise TcnlaValueError(f"{fn}: the input is on cuda:{loc}, device asks for "
                                      f"cuda:{dev[1]}", argument="device")
            self.backend, self.dev, self.stage = L.BACKEND_CUDA, loc, False
            self.stream, self._stream_ref = ar.current_stream(arrays[0])
        else:
            if dev is None:
                compiled, count = L.cuda_available()
                dev = ("cuda", None) if compiled and count > 0 else "cpu"
            if dev == "cpu":
                self.backend, self.dev, self.stage = L.BACKEND_CPU, 0, False
            else:
                self.backend, self.dev, self.stage = L.BACKEND_CUDA, dev[1] or 0, True
            self.stream, self._stream_ref = 0, None
        self.handle = L.get_handle(self.backend, self.dev)
        self.h = self.handle.h
        self.lib = L.lib()
        self._bufs = []
        self._back = []

    def __enter__(self):
        self.handle.lock.acquire()
        try:
            self.handle.set_stream(self.stream, self._stream_ref)
        except BaseException:
            self.handle.lock.release()
            raise
        return self

    def __exit__(self, et, ev, tb):
        try:
            if et is None:
                for host, dptr, nbytes in self._back:
                    L.check(self.lib.tcnla_memcpy(self.h, host, dptr, nbytes, 1), "tcnla_memcpy")
        finally:
            for p in self._bufs:
                self.lib.tcnla_free(self.h, p)
            self.handle.lock.release()
        return False

    def _malloc(self, nbytes):
        p = C.c_void_p()
        L.check(self.lib.tcnla_malloc(self.h, C.byref(p), max(nbytes, 4)), "tcnla_malloc")
        self._bufs.append(p)
        return p.value

    def _staged(self, a):
        """Handle memory for a's elements, and their bytes."""
        nbytes = _span(a) * a.itemsize
        return self._malloc(nbytes), nbytes

    def inp(self, a):
        """a's pointer in the handle's memory (staged to the GPU if needed)."""
        if not self.stage:
            return a.ptr
        d, nbytes = self._staged(a)
        if nbytes:
            L.check(self.lib.tcnla_memcpy(self.h, d, a.ptr, nbytes, 0), "tcnla_memcpy")
        return d

    def out(self, a):
        if not self.stage:
            return a.ptr
        d, nbytes = self._staged(a)
        if nbytes:
            self._back.append((a.ptr, d, nbytes))
        return d

    def info(self):
        return Info(backend="cuda" if self.backend == L.BACKEND_CUDA else "cpu",
                    device=self.dev if self.backend == L.BACKEND_CUDA else None)


# ------------------------------------------------------------------- layouts
def _layout(rows, cols, s0, s1):
    """('F', ld): column-major with leading dimension ld; ('C', ld): row-major
    (the transpose, column-major); (None, 0): neither (needs a copy)."""
    if (s0 == 1 or rows <= 1) and (cols <= 1 or s1 >= max(1, rows)):
        return "F", (s1 if cols > 1 else max(1, rows))
    if (s1 == 1 or cols <= 1) and (rows <= 1 or s0 >= max(1, cols)):
        return "C", (s0 if rows > 1 else max(1, cols))
    return None, 0


def _matrix(A, what, fn, dtypes=("float32",), batched=False):
    a = A if isinstance(A, ar.Arr) else ar.wrap(A, what)
    if len(a.shape) != 2 and not (batched and len(a.shape) > 2):
        raise TcnlaValueError(f"{fn}: {what} must be a matrix (2-D"
                              f"{', or a batch of matrices' if batched else ''}), got shape "
                              f"{a.shape}", argument=what)
    if a.dtype not in dtypes:
        raise TcnlaValueError(f"{fn}: {what} must be {' or '.join(dtypes)}, got {a.dtype}",
                              argument=what)
    return a


def _blas(a):
    """(a or a C-contiguous copy, layout, ld)."""
    lay, ld = _layout(a.shape[0], a.shape[1], a.strides[0], a.strides[1])
    if lay is None:
        a = ar.contiguous(a, "C")
        lay, ld = _layout(a.shape[0], a.shape[1], a.strides[0], a.strides[1])
    return a, lay, ld


def _int(v, what, fn, lo=None):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TcnlaValueError(f"{fn}: {what} must be an int, got {v!r}", argument=what)
    v = int(v)
    if lo is not None and v < lo:
        raise TcnlaValueError(f"{fn}: {what} must be >= {lo}, got {v}", argument=what)
    return v


def _finish(results, info, return_info):
    return (*results, info) if return_info else results


# ------------------------------------------------ options shared by the drivers
_OPT_CONVERT = {
    "proj_method": lambda v, fn: L.gemm_method(v, "proj_method"),
    "gemm_method": lambda v, fn: L.gemm_method(v, "gemm_method"),
    "power_method": lambda v, fn: L.gemm_method(v, "power_method"),
    "random_format": lambda v, fn: L.enum(L.FORMAT, v, "random_format"),
    "random_dist": lambda v, fn: L.enum(L.DIST, v, "random_dist"),
    "tgemm": lambda v, fn: L.enum(L.TGEMM, v, "tgemm"),
    "orth": lambda v, fn: L.enum(L.ORTH, v, "orth"),
    "on_breakdown": lambda v, fn: L.enum(L.BREAKDOWN, v, "on_breakdown"),
    "seed": lambda v, fn: _int(v, "seed", fn, 0) & (2 ** 64 - 1),
}


def _set_opts(o, fn, **values):
    """Sets the fields of the C options struct o whose value is not None,
    each converted (method and enum names, the seed) as _OPT_CONVERT says."""
    for name, v in values.items():
        if v is not None:
            setattr(o, name, _OPT_CONVERT[name](v, fn))


# ---------------------------------------------------------------------- rsvd
_RSVD_ARGS = ("handle", "opts", "m", "n", "A", "lda", "U", "ldu", "S", "VT", "ldvt")


def _rsvd_opts(fn, rank, oversampling, power_iters, proj_method, gemm_method, power_method,
               random_format, random_dist, orth, on_breakdown, seed, pass_efficient=None):
    o = L.lib().tcnla_rsvd_opts_default()
    o.rank = _int(rank, "rank", fn, 1)
    if oversampling is not None:
        o.oversampling = _int(oversampling, "oversampling", fn, 0)
    if power_iters is not None:
        o.power_iters = _int(power_iters, "power_iters", fn, 0)
        if o.power_iters > 100:
            raise TcnlaValueError(f"{fn}: power_iters must be <= 100", argument="power_iters")
    _set_opts(o, fn, proj_method=proj_method, gemm_method=gemm_method,
              power_method=power_method, random_format=random_format, random_dist=random_dist,
              orth=orth, on_breakdown=on_breakdown, seed=seed)
    if pass_efficient is not None:
        if not isinstance(pass_efficient, (bool, np.bool_)):
            raise TcnlaValueError(f"{fn}: pass_efficient must be True or False, got "
                                  f"{pass_efficient!r}", argument="pass_efficient")
        o.pass_efficient = int(bool(pass_efficient))
        if o.pass_efficient and o.power_iters < 1:
            raise TcnlaValueError(f"{fn}: pass_efficient needs at least one power iteration "
                                  f"(2q + 1 passes over A)", argument="pass_efficient")
    return o


def _rsvd_run(fn, a, o, device, timings):
    """U (..., m x k), S (..., k), Vt (..., k x n) of the float32 matrix (or
    batch of matrices, one tcnla_rsvd call each) Arr a; U and Vt are
    C-ordered matrices for a C-ordered a, F-ordered for an F-ordered one."""
    m, n = a.shape[-2:]
    lay, ld = _layout(m, n, a.strides[-2], a.strides[-1])
    if lay is None or any(x < 0 for x in a.strides[:-2]):
        a = ar.contiguous(a, "C")
        lay, ld = _layout(m, n, a.strides[-2], a.strides[-1])
    k, p = o.rank, o.oversampling
    if k + p > min(m, n):
        raise TcnlaValueError(f"{fn}: rank + oversampling = {k + p} exceeds min(m, n) = "
                              f"{min(m, n)} of the {m} x {n} matrix", argument="rank")
    batch = tuple(a.shape[:-2])
    with _Call(fn, [a], device) as c:
        info = c.info()
        tsum = dict.fromkeys(L.RSVD_STEPS, 0.0) if timings else None
        S = ar.empty(a, batch + (k,))
        if lay == "F":  # F-ordered matrices: transposed views of C-ordered (k x m), (n x k)
            U = ar.swap_last(ar.empty(a, batch + (k, m), "C"))
            Vt = ar.swap_last(ar.empty(a, batch + (n, k), "C"))
        else:
            U, Vt = ar.empty(a, batch + (m, k), "C"), ar.empty(a, batch + (k, n), "C")
        pA, pU, pS, pVt = c.inp(a), c.out(U), c.out(S), c.out(Vt)
        sz = a.itemsize
        for idx in itertools.product(*(range(x) for x in batch)):
            off = lambda X: sz * sum(i * st for i, st in zip(idx, X.strides))
            qA, qU, qS, qVt = pA + off(a), pU + off(U), pS + off(S), pVt + off(Vt)
            ci = L.Info()
            o.info = C.pointer(ci)
            tbuf = (C.c_double * len(L.RSVD_STEPS))() if timings else None
            o.timings = C.cast(tbuf, C.POINTER(C.c_double)) if timings else None
            if lay == "F":
                st = c.lib.tcnla_rsvd(c.h, C.byref(o), m, n, qA, ld, qU, m, qS, qVt, k)
            else:  # a^T is n x m column-major: a^T = U' S V'^T, a = V' S U'^T
                st = c.lib.tcnla_rsvd(c.h, C.byref(o), n, m, qA, ld, qVt, n, qS, qU, k)
            L.check(st, "tcnla_rsvd", _RSVD_ARGS)
            info._add(ci)
            if timings:
                for name, t in zip(L.RSVD_STEPS, list(tbuf)):
                    tsum[name] += t
        info.timings = tsum
    return U, S, Vt, info


def rsvd(A, rank, *, oversampling=None, power_iters=None, proj_method=None, gemm_method=None,
         power_method=None, random_format=None, random_dist=None, orth=None,
         on_breakdown=None, seed=None, pass_efficient=None, timings=False, device=None,
         return_info=False):
    """Rank-`rank` randomized SVD, A ~ U @ diag(S) @ Vt, by tcnla_rsvd
    ([Ootomo & Yokota 2023] Algorithm 1): the product A Omega with an FP16
    Gaussian Omega, power iterations re-orthonormalized at every step, the
    small SVD on the l x l problem, l = rank + oversampling.

    A: float32 matrix (m x n), or a batch (..., m, n) (one tcnla_rsvd call
    per matrix), NumPy / CuPy / PyTorch (CPU or CUDA) or any
    __cuda_array_interface__ / __dlpack__ object, C- or F-ordered (any
    leading dimension); GPU arrays are used in place on the framework's
    current stream (the result is queued there, not waited for). Returns
    U (..., m x rank), S (..., rank), Vt (..., rank x n) of A's kind on A's
    device, in A's order (C in, C out), and with return_info=True an Info as
    4th item (Info.timings: summed over a batch).

    Options (None = the library's default, tcnla_rsvd_opts_default):
      oversampling  p, default 10 (rank + p <= min(m, n));
      power_iters   q, default 2 (0 .. 100);
      proj_method   Y = A Omega, default: 'fp16' where power iterations follow (they
                    filter its rounding of A) and FP16 needs no copy of A, else
                    'shgemm_fp16' (Info.proj_method says which ran);
      gemm_method   the other products, default 'tcec_fp16';
      power_method  the power iterations' products ('fp16', 'shgemm_fp16', or any
                    gemm_method but 'shgemm_tf32'), default: with gemm_method
                    'tcec_fp16' chosen from the data ('fp16' or 'shgemm_fp16',
                    whose first product runs in 'fp16' where another iteration
                    follows; include/tcnla.h), else gemm_method;
      random_format Omega's format, default 'fp16' ('fp32','fp16','bf16','tf32','e4m3','e5m2');
      random_dist   default 'gaussian' ('uniform', 'sparse3', 'sparse_sqrt');
      orth          default 'cholqr_fp64' ('householder','cholqr_fp32','cholqr2_fp64');
      on_breakdown  default 'retry' ('error');
      seed          default 1 (the result is a function of the seed);
      pass_efficient default False: 2q + 2 passes over A. True: 2q + 1 (needs q >= 1;
                    [Bjarkason 2019]): the last power iteration stops at Y = A Z,
                    Z = orth(A^T Q), and A ~ Y Z^T, one product and one
                    orthonormalization fewer; the residual lies between those of
                    q - 1 and q iterations (1.031 against 1.020 x optimal on a slow
                    decay at q = 2, docs/design.md);
      timings       True: Info.timings holds seconds per step (synchronizing
                    after each step: slower);
      device        for host arrays: 'cpu', 'cuda', 'cuda:N' or None (the GPU when
                    one is present); GPU arrays run on their own device.

    Accuracy: the FP32 pipeline's (TCEC / SHGEMM keep FP32 accuracy of every
    product); the residual ||A - U S Vt||_F is that of a rank-l randomized
    range finder with q power iterations (close to the optimal
    sqrt(sum_{i>k} s_i^2) for a decaying spectrum). Cost: (2q + 2) products
    of m x n x l (2q + 1 with pass_efficient; 3 Tensor Core products each
    for TCEC, 2 for SHGEMM), 2q + 1 orthonormalizations of m x l / n x l
    (2q with pass_efficient), one l x l SVD; device memory
    beside A and the outputs about (m + n) l floats (the handle's pool,
    kept for the next call)."""
    fn = "rsvd"
    a = _matrix(A, "A", fn, batched=True)
    o = _rsvd_opts(fn, rank, oversampling, power_iters, proj_method, gemm_method, power_method,
                   random_format, random_dist, orth, on_breakdown, seed, pass_efficient)
    U, S, Vt, info = _rsvd_run(fn, a, o, device, timings)
    return _finish((U.obj, S.obj, Vt.obj), info, return_info)


def svd_lowrank(A, q=6, niter=2, M=None, *, device=None, return_info=False, **options):
    """torch.svd_lowrank's meaning on tcnla_rsvd: A ~ U @ diag(S) @ V.T with
    U (m x q), S (q,), V (n x q) (V a transposed view of tcnla's Vt, no
    copy). q: the rank (torch's default 6; q <= min(m, n)), as in torch
    computed from a q-column sketch without oversampling (pass
    oversampling=p for q + p columns); niter: power iterations (default 2).
    M: as torch, the SVD of A - M (M broadcast to A's shape); A - M is formed
    in A's framework first (one temporary of A's size). A: a matrix or a
    batch (..., m, n) as torch's, of any kind rsvd takes; float64 input
    is rounded to float32 (a copy) and the outputs converted back to
    float64. Other keywords: rsvd's options. Accuracy and cost as rsvd with
    rank q (FP32 accuracy; about 2 niter + 2 products of m x n x q; the power
    iterations in FP16 where the data allow). Measured on an H100 at
    16384^2, q = 266, niter = 2: 8.4 ms against torch.svd_lowrank's 59 ms at
    the same residual (docs/results.md)."""
    fn = "svd_lowrank"
    a = _matrix(A, "A", fn, ("float32", "float64"), batched=True)
    q = 6 if q is None else q
    if M is not None:
        a = ar.subtract(a, ar.wrap(M, "M"))
    dt = a.dtype
    a32 = ar.astype(a, "float32")
    options.setdefault("oversampling", 0)
    timings = options.pop("timings", False)
    o = _rsvd_opts(fn, q, options.pop("oversampling"), niter, *(options.pop(k, None) for k in (
        "proj_method", "gemm_method", "power_method", "random_format", "random_dist", "orth",
        "on_breakdown", "seed", "pass_efficient")))
    if options:
        raise TypeError(f"{fn}: unexpected keyword arguments {sorted(options)}")
    U, S, Vt, info = _rsvd_run(fn, a32, o, device, timings)
    if dt != "float32":
        U, S, Vt = ar.astype(U, dt), ar.astype(S, dt), ar.astype(Vt, dt)
    return _finish((U.obj, S.obj, ar.swap_last(Vt).obj), info, return_info)


def _seed_from(random_state):
    if random_state is None:
        return int(np.random.mtrand._rand.randint(0, 2 ** 31 - 1))
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state) & (2 ** 64 - 1)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2 ** 31 - 1))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2 ** 63 - 1))
    raise TcnlaValueError(f"random_state: None, an int, a RandomState or a Generator expected, "
                          f"got {random_state!r}", argument="random_state")


def randomized_svd(M, n_components, *, n_oversamples=10, n_iter="auto",
                   power_iteration_normalizer="auto", transpose="auto", flip_sign=True,
                   random_state=None, svd_lapack_driver="gesdd", device=None,
                   return_info=False, **options):
    """sklearn.utils.extmath.randomized_svd's meaning on tcnla_rsvd: returns
    U (m x n_components), S, Vt (n_components x n) with M ~ U diag(S) Vt.
    n_oversamples: default 10; n_iter: default 'auto' = 7 if n_components <
    0.1 min(m, n) else 4 (sklearn's rule); flip_sign=True: sklearn's sign
    convention (svd_flip: the largest |entry| of each column of U positive);
    random_state: None (a seed drawn from NumPy's global RandomState, as
    sklearn's), an int (the seed), a RandomState or a Generator (a seed drawn
    from it); the numbers differ from sklearn's (another generator).
    power_iteration_normalizer: every power iteration is re-orthonormalized
    (CholeskyQR in FP64; 'auto', 'QR', 'LU' and 'none' are accepted and
    all give that); transpose and svd_lapack_driver are accepted and do not
    change the result's meaning (tcnla works on the stored layout).
    M: a dense matrix of any kind rsvd takes (scipy.sparse raises
    NotImplementedError); float64 input is rounded to float32 (a copy) and
    U, S, Vt returned in float64 (FP32-accurate: about 1e-6 relative in the
    singular values of a well-separated spectrum). Other keywords: rsvd's
    options. Cost: as rsvd, 2 n_iter + 2 products of m x n x (k + p)."""
    fn = "randomized_svd"
    if hasattr(M, "tocsr") and hasattr(M, "nnz"):
        raise NotImplementedError(f"{fn}: sparse matrices are not supported (dense only)")
    if power_iteration_normalizer not in ("auto", "QR", "LU", "none"):
        raise TcnlaValueError(f"{fn}: power_iteration_normalizer must be 'auto', 'QR', 'LU' or "
                              f"'none'", argument="power_iteration_normalizer")
    if transpose not in ("auto", True, False):
        raise TcnlaValueError(f"{fn}: transpose must be 'auto', True or False",
                              argument="transpose")
    a = _matrix(M, "M", fn, ("float32", "float64"))
    k = _int(n_components, "n_components", fn, 1)
    if n_iter == "auto":
        n_iter = 7 if k < 0.1 * min(a.shape) else 4
    seed = _seed_from(random_state)
    dt = a.dtype
    a32 = ar.astype(a, "float32")
    timings = options.pop("timings", False)
    o = _rsvd_opts(fn, k, n_oversamples, n_iter, *(options.pop(x, None) for x in (
        "proj_method", "gemm_method", "power_method", "random_format", "random_dist", "orth",
        "on_breakdown")), seed, options.pop("pass_efficient", None))
    if options:
        raise TypeError(f"{fn}: unexpected keyword arguments {sorted(options)}")
    U, S, Vt, info = _rsvd_run(fn, a32, o, device, timings)
    if dt != "float32":
        U, S, Vt = ar.astype(U, dt), ar.astype(S, dt), ar.astype(Vt, dt)
    if flip_sign:
        ar.flip_signs(U, Vt)
    return _finish((U.obj, S.obj, Vt.obj), info, return_info)


# ----------------------------------------------------------------------- lra
_LRA_ARGS = ("handle", "opts", "m", "n", "A", "lda", "X", "ldx", "Y", "ldy")


def lra(A, rank, *, oversampling=None, tgemm=None, gemm_method=None, orth=None,
        on_breakdown=None, refine=None, recompress=None, seed=None, device=None,
        return_info=False):
    """Randomized low-rank approximation A ~ X @ Y.T by tcnla_lra ([Baboulin
    et al. 2024] Algorithms 1, 4, 5). A: float32 matrix (m x n), any kind
    rsvd takes, used in place. Returns X (m x r), Y (n x r) (F-ordered, A's
    kind and device), r = rank, or 3 rank with refinement and no
    recompression; with return_info=True an Info too.

    Options (None = the library's default, tcnla_lra_opts_default):
      oversampling  p, default 10 ((2 rank when refining) + p <= min(m, n));
      tgemm         '16_32' (default: A rounded to FP16 once, FP32 C),
                    '32_32', '16_16', or 'none' (every product by gemm_method);
      gemm_method   used when tgemm='none' (default 'native_fp32');
      orth          default 'cholqr_fp64'; on_breakdown default 'retry';
      refine        default True: a second pass of rank 2 rank on A - X Y^T
                    (needs one m x n workspace in the handle's memory);
      recompress    default False: recompress the refined rank-3k result to rank k;
      seed          default 1.

    Accuracy: FP16 Tensor Core products with FP32 accumulation; refinement
    brings the residual close to the FP32 pipeline's ([Baboulin et al.
    2024] section 4). Cost: about 2 (or 2 + 4 with refinement) products of
    m x n x l, l = rank + p."""
    fn = "lra"
    a = _matrix(A, "A", fn)
    o = L.lib().tcnla_lra_opts_default()
    o.rank = _int(rank, "rank", fn, 1)
    if oversampling is not None:
        o.oversampling = _int(oversampling, "oversampling", fn, 0)
    _set_opts(o, fn, tgemm=tgemm, gemm_method=gemm_method, orth=orth, on_breakdown=on_breakdown,
              seed=seed)
    if refine is not None:
        o.refine = 1 if refine else 0
    if recompress is not None:
        o.recompress = 1 if recompress else 0
    a, lay, ld = _blas(a)
    m, n = a.shape
    need = (2 if o.refine else 1) * o.rank + o.oversampling
    if need > min(m, n):
        raise TcnlaValueError(f"{fn}: {'2 rank' if o.refine else 'rank'} + oversampling = "
                              f"{need} exceeds min(m, n) = {min(m, n)}", argument="rank")
    r = int(L.lib().tcnla_lra_out_rank(C.byref(o)))
    with _Call(fn, [a], device) as c:
        ci = L.Info()
        o.info = C.pointer(ci)
        X, Y = ar.empty(a, (m, r), "F"), ar.empty(a, (n, r), "F")
        pA = c.inp(a)
        if lay == "F":
            st = c.lib.tcnla_lra(c.h, C.byref(o), m, n, pA, ld, c.out(X), m, c.out(Y), n)
        else:  # a^T (n x m) ~ X' Y'^T, a ~ Y' X'^T
            st = c.lib.tcnla_lra(c.h, C.byref(o), n, m, pA, ld, c.out(Y), n, c.out(X), m)
        L.check(st, "tcnla_lra", _LRA_ARGS)
        info = c.info()
        info._add(ci)
    return _finish((X.obj, Y.obj), info, return_info)


# --------------------------------------------------------------------- hosvd
def hosvd(T, ranks, *, proj_method=None, gemm_method=None, random_format=None, orth=None,
          on_breakdown=None, seed=None, device=None, return_info=False):
    """Random-projection HOSVD ([Ootomo & Yokota 2023] Algorithm 2) by
    tcnla_hosvd: T ~ core x_1 Q_1 ... x_N Q_N, i.e. T[i1..iN] ~ sum core[j1..jN]
    Q_1[i1, j1] ... Q_N[iN, jN]. T: float32 tensor of order 2..8, C- or
    F-contiguous (another layout is copied), any kind rsvd takes, used in
    place; ranks: J_i, 1 <= J_i <= T.shape[i]. Returns core (J_1 x ... x J_N,
    T's order C or F) and the list [Q_1 .. Q_N] (Q_i T.shape[i] x J_i with
    orthonormal columns, F-ordered), T's kind and device; with
    return_info=True an Info too.

    Options (None = the library's default, tcnla_hosvd_opts_default):
      proj_method   the random projections, default 'shgemm_fp16';
      gemm_method   the core's mode products, default 'tcec_fp16';
      random_format default 'fp16'; orth default 'cholqr2_fp64';
      on_breakdown  default 'retry'; seed default 1.

    Accuracy: FP32-accurate products (TCEC / SHGEMM); the truncation error is
    the RP-HOSVD's. Cost: one projection of the tensor per mode (a product of
    size(T) x J_i) and the core's mode products; device memory beside T, Q
    and the core: two intermediates of size(T) / dims[0] x J_1 floats."""
    fn = "hosvd"
    t = T if isinstance(T, ar.Arr) else ar.wrap(T, "T")
    N = len(t.shape)
    if not 2 <= N <= L.HOSVD_MAX_ORDER:
        raise TcnlaValueError(f"{fn}: T must have order 2 .. {L.HOSVD_MAX_ORDER}, got shape "
                              f"{t.shape}", argument="T")
    if t.dtype != "float32":
        raise TcnlaValueError(f"{fn}: T must be float32, got {t.dtype}", argument="T")
    ranks = list(ranks)
    if len(ranks) != N:
        raise TcnlaValueError(f"{fn}: {len(ranks)} ranks for an order-{N} tensor",
                              argument="ranks")
    for i, (J, d) in enumerate(zip(ranks, t.shape)):
        _int(J, f"ranks[{i}]", fn, 1)
        if J > d:
            raise TcnlaValueError(f"{fn}: ranks[{i}] = {J} exceeds T.shape[{i}] = {d}",
                                  argument="ranks")

    def contig(order):
        want = ar._contig_strides(t.shape, order)
        return all(s == w for s, w, n in zip(t.strides, want, t.shape) if n > 1)

    order = "F" if contig("F") else "C"
    if not contig(order):
        t = ar.contiguous(t, "C")
    o = L.lib().tcnla_hosvd_opts_default()
    _set_opts(o, fn, proj_method=proj_method, gemm_method=gemm_method,
              random_format=random_format, orth=orth, on_breakdown=on_breakdown, seed=seed)
    # the C tensor's first index is the fastest: C order = reversed modes
    perm = list(range(N)) if order == "F" else list(range(N - 1, -1, -1))
    dims = [int(t.shape[i]) for i in perm]
    for j, i in enumerate(perm):
        o.ranks[j] = int(ranks[i])
    with _Call(fn, [t], device) as c:
        ci = L.Info()
        o.info = C.pointer(ci)
        core = ar.empty(t, tuple(int(J) for J in ranks), order)
        Qs = [ar.empty(t, (int(t.shape[i]), int(ranks[i])), "F") for i in range(N)]
        pT = c.inp(t)
        qptr = (C.c_void_p * N)(*[c.out(Qs[i]) for i in perm])
        cdims = (C.c_int64 * N)(*dims)
        st = c.lib.tcnla_hosvd(c.h, C.byref(o), N, cdims, pT, c.out(core), qptr)
        L.check(st, "tcnla_hosvd", ("handle", "opts", "order", "dims", "A", "core", "Q"))
        info = c.info()
        info._add(ci)
    return _finish((core.obj, [q.obj for q in Qs]), info, return_info)


# -------------------------------------------------------------------- matmul
_FP64_METHODS = ("native_fp64", "ozaki_fp16", "ozaki_int8")


def _method_for(name, dtype):
    if name is None:
        name = "tcec_fp16" if dtype == "float32" else "ozaki_int8"
    if isinstance(name, str) and name.lower() == "ozaki":
        name = "ozaki_int8"
    m = L.gemm_method(name, "method")
    if dtype == "float64" and L.gemm_method_name(m) not in _FP64_METHODS and m != 0:
        raise TcnlaValueError(f"matmul: float64 operands take method 'ozaki' ('ozaki_int8'), "
                              f"'ozaki_fp16' or 'native_fp64', not {name!r}", argument="method")
    return m


def _bcast(sa, sb):
    n = max(len(sa), len(sb))
    sa = (1,) * (n - len(sa)) + tuple(sa)
    sb = (1,) * (n - len(sb)) + tuple(sb)
    out = []
    for x, y in zip(sa, sb):
        if x != y and x != 1 and y != 1:
            return None
        out.append(max(x, y) if min(x, y) != 0 else 0)
    return tuple(out)


def _batch_strides(a, bshape):
    """a's batch strides aligned to the broadcast batch shape (0 where
    broadcast)."""
    r = len(bshape)
    own = a.shape[:-2]
    ost = a.strides[:-2]
    pad = r - len(own)
    return tuple(0 if (i < pad or own[i - pad] == 1) else ost[i - pad] for i in range(r))


def _collapse(bst, bshape):
    """One stride for the flattened batch, or None."""
    dims = [(n, s) for n, s in zip(bshape, bst) if n != 1]
    if not dims:
        return 0
    for (n0, s0), (n1, s1) in zip(dims, dims[1:]):
        if s0 != s1 * n1:
            return None
    return dims[-1][1]


def matmul(a, b, method=None, *, mode="dp", slices=None, scheme="auto", range_policy="error",
           device=None, return_info=False):
    """a @ b with numpy.matmul's shape rules (1-D operands, batches over the
    leading dimensions, broadcast) on Tensor Cores.

    float32 operands: method default 'tcec_fp16' (error-corrected FP16
    Tensor Core SGEMM [Ootomo & Yokota 2021]: 3 FP16 products, FP32
    accuracy: error about that of an FP32 SGEMM); any tcnla_sgemm method
    name ('native_fp32', 'tf32', 'fp16', 'tcec_tf32', 'shgemm_fp16',
    'ozaki_int8', ...). The FP16 methods compute data outside FP16's range
    on copies scaled exactly by powers of two per row / column (the same
    accuracy at any scale; Info.scaled counts such products); where that
    cannot be done, range_policy decides: 'error' (default: TcnlaRangeError)
    or 'fallback' (computed with the TF32 variant; Info.fallbacks counts it).
    float64 operands: method default 'ozaki' (= 'ozaki_int8'; or
    'ozaki_fp16', 'native_fp64'), the Ozaki scheme [Mukunoki et al. 2020]
    with mode 'dp' (default: as accurate as DGEMM, slice count from the
    probabilistic bound), 'cr' (every element correctly rounded), 'fixed'
    (`slices` slices / moduli) or 'auto' (DP's accuracy; the native GEMM,
    reported in Info.method, where a cost model predicts it faster than
    scheme 2: small, skinny and short-k products); scheme 'auto' (default),
    1 or 2.
    Cost: 'tcec_fp16' 3 FP16 Tensor Core products of m x n x k; Ozaki DP
    about d(d+1)/2 INT8 / FP16 products (scheme 1) or d (scheme 2), d from
    the exponent range of the rows / columns.

    a, b: the same dtype, kind and device (GPU: used in place on the current
    stream, C- or F-ordered matrices without copies; other strides are
    copied). The result is C-ordered, of a's kind on a's device. Batches
    run as one tcnla_sgemm_strided_batched call where the batch strides
    allow (one call per leading index otherwise; float64: one call per
    product). With return_info=True returns (C, Info)."""
    fn = "matmul"
    A = a if isinstance(a, ar.Arr) else ar.wrap(a, "a")
    B = b if isinstance(b, ar.Arr) else ar.wrap(b, "b")
    if A.kind != B.kind:
        raise TcnlaValueError(f"{fn}: a is {A.kind}, b is {B.kind}: pass the same kind",
                              argument="b")
    if A.dtype != B.dtype or A.dtype not in ("float32", "float64"):
        raise TcnlaValueError(f"{fn}: a and b must both be float32 or both float64, got "
                              f"{A.dtype} and {B.dtype}", argument="b")
    if len(A.shape) == 0 or len(B.shape) == 0:
        raise TcnlaValueError(f"{fn}: scalars are not matrices", argument="a")
    meth = _method_for(method, A.dtype)
    mode_v = L.enum(L.OZAKI_MODE, mode, "mode")
    scheme_v = L.enum(L.OZAKI_SCHEME, scheme, "scheme")
    pol = L.enum(L.RANGE_POLICY, range_policy, "range_policy")
    if mode_v == 2 and slices is None:
        raise TcnlaValueError(f"{fn}: mode='fixed' needs slices >= 1", argument="slices")
    if slices is not None and not 1 <= _int(slices, "slices", fn, 1) <= 1000:
        raise TcnlaValueError(f"{fn}: slices must be in 1 .. 1000", argument="slices")
    # numpy's 1-D rules, on the metadata only
    a1, b1 = len(A.shape) == 1, len(B.shape) == 1
    if a1:
        A = A.view(A.ptr, (1, A.shape[0]), (A.shape[0] * A.strides[0], A.strides[0]))
    if b1:
        B = B.view(B.ptr, (B.shape[0], 1), (B.strides[0], 1))
    m, k = A.shape[-2:]
    k2, n = B.shape[-2:]
    if k != k2:
        raise TcnlaValueError(f"{fn}: shapes {A.shape} and {B.shape}: inner dimensions "
                              f"{k} != {k2}", argument="b")
    bshape = _bcast(A.shape[:-2], B.shape[:-2])
    if bshape is None:
        raise TcnlaValueError(f"{fn}: batch shapes {A.shape[:-2]} and {B.shape[:-2]} do not "
                              "broadcast", argument="b")
    final = bshape + ((m,) if not a1 else ()) + ((n,) if not b1 else ())
    nbatch = int(np.prod(bshape)) if bshape else 1
    if k == 0:
        out = ar.zeros(A, final)
        return (out.obj, Info()) if return_info else out.obj
    out = ar.empty(A, final, "C")
    if m == 0 or n == 0 or nbatch == 0:
        return (out.obj, Info()) if return_info else out.obj

    def fix(X):
        # matrix part usable by BLAS and non-negative batch strides, else a copy
        lay, ld = _layout(X.shape[-2], X.shape[-1], X.strides[-2], X.strides[-1])
        if lay is None or any(s < 0 for s in X.strides):
            X = ar.contiguous(X, "C")
            lay, ld = _layout(X.shape[-2], X.shape[-1], X.strides[-2], X.strides[-1])
        return X, lay, ld

    A, la, lda = fix(A)
    B, lb, ldb = fix(B)
    # C^T (n x m, column-major, ldc = n) = op(B') op(A') where X' is X's memory
    opB = L.OP_N if lb == "C" else L.OP_T
    opA = L.OP_N if la == "C" else L.OP_T
    sA, sB = _batch_strides(A, bshape), _batch_strides(B, bshape)
    mn = m * n
    with _Call(fn, [A, B], device) as c:
        info = c.info()
        pA, pB, pC = c.inp(A), c.inp(B), c.out(out)
        fsz = A.itemsize
        is_oz = L.gemm_method_name(meth).startswith("ozaki")
        if is_oz:
            oz = c.lib.tcnla_ozaki_opts_default()
            oz.mode, oz.scheme = mode_v, scheme_v
            if slices is not None:
                oz.slices = int(slices)
            L.check(c.lib.tcnla_set_ozaki_opts(c.h, C.byref(oz)), "tcnla_set_ozaki_opts")
        if A.dtype == "float32":
            L.check(c.lib.tcnla_set_range_policy(c.h, pol), "tcnla_set_range_policy")
        cA, cB = _collapse(sA, bshape), _collapse(sB, bshape)
        ci = L.Info()
        if A.dtype == "float32" and nbatch == 1:
            st = c.lib.tcnla_sgemm_ex(c.h, meth, opB, opA, n, m, k, 1.0, pB, ldb, pA, lda,
                                      0.0, pC, n, C.byref(ci))
            L.check(st, "tcnla_sgemm_ex", _GEMM_ARGS)
            info._add(ci)
        elif A.dtype == "float32" and cA is not None and cB is not None:
            st = c.lib.tcnla_sgemm_strided_batched(c.h, meth, opB, opA, n, m, k, 1.0, pB, ldb,
                                                   cB, pA, lda, cA, 0.0, pC, n, mn, nbatch)
            L.check(st, "tcnla_sgemm_strided_batched", _BATCHED_ARGS)
            info.products += nbatch
            info.method = L.gemm_method_name(meth if meth else 1)
            info.methods = [info.method]
        else:
            outer = bshape[:-1] if A.dtype == "float32" else bshape
            inner = bshape[-1:] if A.dtype == "float32" else ()
            ni = inner[0] if inner else 1
            for idx in itertools.product(*(range(x) for x in outer)):
                oa = sum(i * s for i, s in zip(idx, sA))
                ob = sum(i * s for i, s in zip(idx, sB))
                oc = sum(i * s for i, s in zip(idx, ar._contig_strides(bshape, "C")))
                qA, qB, qC = pA + oa * fsz, pB + ob * fsz, pC + oc * mn * fsz
                if A.dtype == "float32":
                    st = c.lib.tcnla_sgemm_strided_batched(
                        c.h, meth, opB, opA, n, m, k, 1.0, qB, ldb, sB[-1], qA, lda, sA[-1],
                        0.0, qC, n, mn, ni)
                    L.check(st, "tcnla_sgemm_strided_batched", _BATCHED_ARGS)
                    info.products += ni
                    info.method = L.gemm_method_name(meth if meth else 1)
                    info.methods = [info.method]
                else:
                    st = c.lib.tcnla_dgemm_ex(c.h, meth, opB, opA, n, m, k, 1.0, qB, ldb, qA,
                                              lda, 0.0, qC, n, C.byref(ci))
                    L.check(st, "tcnla_dgemm_ex", _GEMM_ARGS)
                    info._add(ci)
    return (out.obj, info) if return_info else out.obj


# argument names as the C function sees them (b's memory comes first)
_GEMM_ARGS = ("handle", "method", "transa (b)", "transb (a)", "m (n)", "n (m)", "k", "alpha",
              "A (b)", "lda (b)", "B (a)", "ldb (a)", "beta", "C", "ldc")
_BATCHED_ARGS = ("handle", "method", "transa (b)", "transb (a)", "m (n)", "n (m)", "k",
                 "alpha", "A (b)", "lda (b)", "strideA (b)", "B (a)", "ldb (a)",
                 "strideB (a)", "beta", "C", "ldc", "strideC", "batch")


# ---------------------------------------------------------------- utilities
def cuda_available():
    """(compiled_in, device_count): whether the loaded library has the CUDA
    backend and how many GPUs the CUDA runtime sees."""
    return L.cuda_available()


def version():
    """tcnla's version string (the C library's)."""
    return L.lib().tcnla_version().decode()


def memory_stats(device=None):
    """(current, peak) bytes the handle of `device` ('cpu', 'cuda', 'cuda:N'
    or None = the default one) holds in its own memory (tcnla_memory_stats:
    tcnla_malloc blocks, the workspace, the drivers' pooled buffers; not the
    framework's allocations)."""
    dev = _parse_device(device)
    if dev is None:
        compiled, count = L.cuda_available()
        dev = ("cuda", 0) if compiled and count > 0 else "cpu"
    h = L.get_handle(L.BACKEND_CPU, 0) if dev == "cpu" else L.get_handle(L.BACKEND_CUDA,
                                                                          dev[1] or 0)
    cur, peak = C.c_size_t(0), C.c_size_t(0)
    with h.lock:
        L.check(L.lib().tcnla_memory_stats(h.h, C.byref(cur), C.byref(peak)),
                "tcnla_memory_stats")
    return cur.value, peak.value


def reset_peak_memory(device=None):
    dev = _parse_device(device)
    if dev is None:
        compiled, count = L.cuda_available()
        dev = ("cuda", 0) if compiled and count > 0 else "cpu"
    h = L.get_handle(L.BACKEND_CPU, 0) if dev == "cpu" else L.get_handle(L.BACKEND_CUDA,
                                                                          dev[1] or 0)
    with h.lock:
        L.check(L.lib().tcnla_reset_peak_memory(h.h), "tcnla_reset_peak_memory")
