"""ctypes layer over libtcnla.so.0: loading, the C structs, prototypes,
name <-> enum maps, statuses -> exceptions, and the per-(backend, device)
handle cache. Nothing here knows about array frameworks (see _arrays.py)."""

import ctypes as C
import os
import threading

# ------------------------------------------------------------------ statuses
SUCCESS = 0
ERR_ALLOC = -101
ERR_NO_BACKEND = -102
ERR_NOT_SUPPORTED = -103
ERR_RANGE = -104
ERR_CUDA = -105
ERR_CUBLAS = -106
ERR_CUSOLVER = -107
ERR_NUMERICAL = -108
ERR_INTERNAL = -109

BACKEND_AUTO, BACKEND_CPU, BACKEND_CUDA = 0, 1, 2
OP_N, OP_T = 0, 1


class TcnlaError(RuntimeError):
    """Base of every error tcnla raises. `status` is tcnla's status (an int
    from include/tcnla.h; None for a check the Python layer made before
    calling C), `message` tcnla_strerror's text (or the Python check's)."""

    def __init__(self, message, status=None, function=None):
        self.status = status
        self.message = message
        self.function = function
        where = f"{function}: " if function else ""
        code = f" (status {status})" if status is not None else ""
        super().__init__(f"{where}{message}{code}")


class TcnlaValueError(TcnlaError, ValueError):
    """A bad argument: a negative status -i from C (argument i, the handle
    counting as argument 1; `argument` names it where known), or a shape,
    dtype, stride, device or option the Python layer rejected."""

    def __init__(self, message, status=None, function=None, argument=None):
        self.argument = argument
        super().__init__(message, status, function)


class TcnlaRangeError(TcnlaError):
    """TCNLA_ERR_RANGE: an input is outside what the method's split can
    represent (e.g. |x| beyond FP16's range for 'tcec_fp16' with
    range_policy='error', or Ozaki DP needing more than 20 moduli)."""


class TcnlaNumericalError(TcnlaError):
    """TCNLA_ERR_NUMERICAL: numerical breakdown (NaN / Inf where the method
    cannot take it, Cholesky breakdown with on_breakdown='error')."""


class TcnlaBackendError(TcnlaError):
    """TCNLA_ERR_NO_BACKEND / TCNLA_ERR_NOT_SUPPORTED: the backend or the
    method / backend combination is not available."""


# ------------------------------------------------------------------- structs
class Info(C.Structure):
    _fields_ = [("method", C.c_int), ("products", C.c_int), ("fallbacks", C.c_int),
                ("methods", C.c_uint32), ("ozaki_scheme", C.c_int), ("ozaki_d", C.c_int),
                ("ozaki_slices_a", C.c_int), ("ozaki_slices_b", C.c_int), ("path", C.c_int),
                ("scaled", C.c_int), ("proj_method", C.c_int), ("power_method", C.c_int)]


class RsvdOpts(C.Structure):
    _fields_ = [("rank", C.c_int64), ("oversampling", C.c_int64), ("power_iters", C.c_int),
                ("proj_method", C.c_int), ("gemm_method", C.c_int), ("power_method", C.c_int),
                ("random_format", C.c_int), ("random_dist", C.c_int), ("orth", C.c_int),
                ("on_breakdown", C.c_int), ("seed", C.c_uint64),
                ("timings", C.POINTER(C.c_double)), ("info", C.POINTER(Info)),
                ("pass_efficient", C.c_int)]


class LraOpts(C.Structure):
    _fields_ = [("rank", C.c_int64), ("oversampling", C.c_int64), ("tgemm", C.c_int),
                ("gemm_method", C.c_int), ("orth", C.c_int), ("on_breakdown", C.c_int),
                ("refine", C.c_int), ("recompress", C.c_int), ("seed", C.c_uint64),
                ("info", C.POINTER(Info))]


HOSVD_MAX_ORDER = 8


class HosvdOpts(C.Structure):
    _fields_ = [("ranks", C.c_int64 * HOSVD_MAX_ORDER), ("proj_method", C.c_int),
                ("gemm_method", C.c_int), ("random_format", C.c_int), ("orth", C.c_int),
                ("on_breakdown", C.c_int), ("seed", C.c_uint64), ("info", C.POINTER(Info))]


class OzakiOpts(C.Structure):
    _fields_ = [("mode", C.c_int), ("slices", C.c_int), ("fast", C.c_int),
                ("workspace_cap", C.c_size_t), ("scheme", C.c_int)]


RSVD_STEPS = ("random", "proj", "orth", "power", "bt", "svd")

# names of the enums (the C library parses GEMM method names itself)
ORTH = {"householder": 0, "cholqr_fp32": 1, "cholqr_fp64": 2, "cholqr2_fp64": 3}
BREAKDOWN = {"error": 0, "retry": 1}
FORMAT = {"fp32": 0, "fp16": 1, "bf16": 2, "tf32": 3, "e4m3": 4, "e5m2": 5}
DIST = {"gaussian": 0, "uniform": 1, "sparse3": 2, "sparse_sqrt": 3}
TGEMM = {"none": 0, "32_32": 1, "16_16": 2, "16_32": 3}
OZAKI_MODE = {"dp": 0, "cr": 1, "fixed": 2, "auto": 3}
OZAKI_SCHEME = {"auto": 0, "1": 1, "2": 2}
RANGE_POLICY = {"error": 0, "fallback": 1}
GEMM_METHOD_COUNT = 12

# ------------------------------------------------------------------- loading
_lib = None
_lib_lock = threading.Lock()

_P = C.c_void_p
_I64 = C.c_int64
_PROTOS = {
    "tcnla_strerror": (C.c_char_p, [C.c_int]),
    "tcnla_version": (C.c_char_p, []),
    "tcnla_create_on_device": (C.c_int, [C.POINTER(_P), C.c_int, C.c_int]),
    "tcnla_destroy": (C.c_int, [_P]),
    "tcnla_get_backend": (C.c_int, [_P, C.POINTER(C.c_int)]),
    "tcnla_get_device": (C.c_int, [_P, C.POINTER(C.c_int)]),
    "tcnla_cuda_available": (C.c_int, [C.POINTER(C.c_int), C.POINTER(C.c_int)]),
    "tcnla_device_name": (C.c_int, [_P, C.c_char_p, C.c_size_t]),
    "tcnla_set_stream": (C.c_int, [_P, _P]),
    "tcnla_synchronize": (C.c_int, [_P]),
    "tcnla_malloc": (C.c_int, [_P, C.POINTER(_P), C.c_size_t]),
    "tcnla_free": (C.c_int, [_P, _P]),
    "tcnla_memcpy": (C.c_int, [_P, _P, _P, C.c_size_t, C.c_int]),
    "tcnla_memory_stats": (C.c_int, [_P, C.POINTER(C.c_size_t), C.POINTER(C.c_size_t)]),
    "tcnla_reset_peak_memory": (C.c_int, [_P]),
    "tcnla_gemm_method_name": (C.c_char_p, [C.c_int]),
    "tcnla_gemm_method_from_name": (C.c_int, [C.c_char_p, C.POINTER(C.c_int)]),
    "tcnla_set_range_policy": (C.c_int, [_P, C.c_int]),
    "tcnla_sgemm_ex": (C.c_int, [_P, C.c_int, C.c_int, C.c_int, _I64, _I64, _I64, C.c_float,
                                 _P, _I64, _P, _I64, C.c_float, _P, _I64, C.POINTER(Info)]),
    "tcnla_sgemm_strided_batched": (C.c_int, [_P, C.c_int, C.c_int, C.c_int, _I64, _I64, _I64,
                                              C.c_float, _P, _I64, _I64, _P, _I64, _I64,
                                              C.c_float, _P, _I64, _I64, _I64]),
    "tcnla_dgemm_ex": (C.c_int, [_P, C.c_int, C.c_int, C.c_int, _I64, _I64, _I64, C.c_double,
                                 _P, _I64, _P, _I64, C.c_double, _P, _I64, C.POINTER(Info)]),
    "tcnla_ozaki_opts_default": (OzakiOpts, []),
    "tcnla_set_ozaki_opts": (C.c_int, [_P, C.POINTER(OzakiOpts)]),
    "tcnla_rsvd_opts_default": (RsvdOpts, []),
    "tcnla_rsvd": (C.c_int, [_P, C.POINTER(RsvdOpts), _I64, _I64, _P, _I64, _P, _I64, _P,
                             _P, _I64]),
    "tcnla_lra_opts_default": (LraOpts, []),
    "tcnla_lra_out_rank": (_I64, [C.POINTER(LraOpts)]),
    "tcnla_lra": (C.c_int, [_P, C.POINTER(LraOpts), _I64, _I64, _P, _I64, _P, _I64, _P, _I64]),
    "tcnla_hosvd_opts_default": (HosvdOpts, []),
    "tcnla_hosvd": (C.c_int, [_P, C.POINTER(HosvdOpts), C.c_int, C.POINTER(_I64), _P, _P,
                              C.POINTER(_P)]),
}


def _candidates():
    env = os.environ.get("TCNLA_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.join(here, "libtcnla.so.0")]


def lib():
    """The loaded library (loaded on first use, so that `import tcnla` never
    fails for a library problem; TCNLA_LIBRARY overrides its path)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        errors = []
        for path in _candidates():
            try:
                L = C.CDLL(path, mode=C.RTLD_LOCAL)
            except OSError as e:
                errors.append(f"{path}: {e}")
                continue
            for name, (res, args) in _PROTOS.items():
                f = getattr(L, name)
                f.restype = res
                f.argtypes = args
            _lib = L
            return L
        raise TcnlaError("cannot load libtcnla: " + "; ".join(errors) +
                         " (reinstall the package, or set TCNLA_LIBRARY to a libtcnla.so)")


def strerror(status):
    return lib().tcnla_strerror(int(status)).decode()


def check(status, function, argnames=None):
    """Raises the exception for a nonzero status of `function`."""
    if status == SUCCESS:
        return
    msg = strerror(status)
    if -100 < status < 0:
        i = -status
        name = argnames[i - 1] if argnames and i - 1 < len(argnames) else None
        what = f"argument {i}" + (f" ({name})" if name else "")
        raise TcnlaValueError(f"{msg}: {what}", status, function, name)
    if status == ERR_RANGE:
        raise TcnlaRangeError(msg, status, function)
    if status == ERR_NUMERICAL:
        raise TcnlaNumericalError(msg, status, function)
    if status in (ERR_NO_BACKEND, ERR_NOT_SUPPORTED):
        raise TcnlaBackendError(msg, status, function)
    raise TcnlaError(msg, status, function)


def gemm_method(name, what="method"):
    if isinstance(name, int) and not isinstance(name, bool):
        if 0 <= name < GEMM_METHOD_COUNT:
            return name
        raise TcnlaValueError(f"{what}: no GEMM method {name}", argument=what)
    if not isinstance(name, str):
        raise TcnlaValueError(f"{what}: a method name (str) expected, got {name!r}",
                              argument=what)
    m = C.c_int(0)
    if lib().tcnla_gemm_method_from_name(name.encode(), C.byref(m)) != 0:
        raise TcnlaValueError(f"{what}: unknown GEMM method {name!r}", argument=what)
    return m.value


_method_names = {}


def gemm_method_name(m):
    m = int(m)
    name = _method_names.get(m)
    if name is None:
        s = lib().tcnla_gemm_method_name(m)
        name = _method_names[m] = s.decode() if s else str(m)
    return name


def enum(table, value, what):
    key = str(value).lower().replace("-", "_") if not isinstance(value, bool) else value
    if key in table:
        return table[key]
    raise TcnlaValueError(f"{what}: {value!r} is not one of {sorted(table)}", argument=what)


def cuda_available():
    """(compiled_in, device_count) of the loaded library."""
    c, n = C.c_int(0), C.c_int(0)
    lib().tcnla_cuda_available(C.byref(c), C.byref(n))
    return bool(c.value), n.value


# ------------------------------------------------------------------- handles
class Handle:
    """One tcnla handle with a Python lock held around every call made on it
    (including the stream / option settings that precede a call), and the
    stream last given to tcnla_set_stream (set again only when it changes:
    tcnla_set_stream waits for the old stream)."""

    def __init__(self, backend, device):
        h = C.c_void_p()
        st = lib().tcnla_create_on_device(C.byref(h), backend, device)
        check(st, "tcnla_create_on_device")
        self.h = h
        self.backend = backend
        self.device = device
        self.lock = threading.RLock()
        self.stream = 0
        self._stream_ref = None

    def set_stream(self, stream, ref=None):
        """Call with self.lock held. CPU handles have no stream. `ref`, the
        framework's stream object, is held while the stream is the handle's:
        tcnla_set_stream waits for the old stream, which must still exist
        then (a CuPy stream is destroyed with its object)."""
        if self.backend != BACKEND_CUDA or stream == self.stream:
            return
        check(lib().tcnla_set_stream(self.h, C.c_void_p(stream or None)), "tcnla_set_stream")
        self.stream = stream
        self._stream_ref = ref

    def name(self):
        buf = C.create_string_buffer(256)
        check(lib().tcnla_device_name(self.h, buf, 256), "tcnla_device_name")
        return buf.value.decode()


_handles = {}
_handles_lock = threading.Lock()


def get_handle(backend, device):
    """The cached handle of (backend, device), created on first use."""
    key = (backend, device if backend == BACKEND_CUDA else 0)
    h = _handles.get(key)
    if h is not None:
        return h
    with _handles_lock:
        h = _handles.get(key)
        if h is None:
            h = Handle(key[0], key[1])
            _handles[key] = h
        return h
