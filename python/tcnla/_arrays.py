"""Array adaptation: NumPy arrays, PyTorch tensors (CPU and CUDA), CuPy
arrays, and other objects exposing __cuda_array_interface__ or __dlpack__,
seen as (pointer, shape, strides in elements, dtype, device) without
copying; outputs allocated by the input's framework on its device; the
framework's current CUDA stream."""

import sys

import numpy as np

from ._lib import TcnlaValueError

HOST = None  # device of host memory


def _torch():
    return sys.modules.get("torch")


def _cupy():
    return sys.modules.get("cupy")


class Arr:
    """A view of one array: kind 'numpy' | 'torch' | 'cupy', the framework
    object, data pointer (int), shape, strides in elements, dtype
    ('float32' / 'float64' / other numpy name) and device (None = host, or
    the CUDA ordinal)."""

    __slots__ = ("kind", "obj", "ptr", "shape", "strides", "dtype", "device")

    def __init__(self, kind, obj, ptr, shape, strides, dtype, device):
        self.kind, self.obj, self.ptr = kind, obj, ptr
        self.shape, self.strides, self.dtype, self.device = tuple(shape), tuple(strides), dtype, device

    @property
    def itemsize(self):
        return np.dtype(self.dtype).itemsize

    def view(self, ptr, shape, strides):
        return Arr(self.kind, self.obj, ptr, shape, strides, self.dtype, self.device)


def _elem_strides(byte_strides, itemsize, shape, what):
    out = []
    for s, n in zip(byte_strides, shape):
        if n <= 1:
            out.append(0 if s % itemsize else s // itemsize)
            continue
        if s % itemsize:
            return None
        out.append(s // itemsize)
    return out


_DT_NAMES = {np.dtype(t): np.dtype(t).name for t in (np.float32, np.float64, np.float16)}


def _dt_name(dt):
    return _DT_NAMES.get(dt) or dt.name


def _from_numpy(x, what):
    if x.dtype.byteorder not in ("=", "|") and x.dtype.byteorder != sys.byteorder[0]:
        x = x.astype(x.dtype.newbyteorder("="))
    st = _elem_strides(x.strides, x.itemsize, x.shape, what)
    ptr = x.__array_interface__["data"][0]
    if st is None or ptr % x.itemsize:  # unaligned: a copy
        x = np.ascontiguousarray(x)
        st = [s // x.itemsize for s in x.strides]
        ptr = x.__array_interface__["data"][0]
    return Arr("numpy", x, ptr, x.shape, st, _dt_name(x.dtype), HOST)


_TORCH_DT = {"torch.float32": "float32", "torch.float64": "float64", "torch.float16": "float16"}


def _from_torch(x, what):
    torch = _torch()
    if x.layout != torch.strided:
        raise TcnlaValueError(f"{what}: a strided (dense) tensor expected, got {x.layout}",
                              argument=what)
    if x.is_complex() or (hasattr(x, "is_conj") and x.is_conj()) or \
            (hasattr(x, "is_neg") and x.is_neg()):
        raise TcnlaValueError(f"{what}: a real tensor expected, got {x.dtype}", argument=what)
    if x.device.type == "cuda":
        dev = x.device.index if x.device.index is not None else torch.cuda.current_device()
    elif x.device.type == "cpu":
        dev = HOST
    else:
        raise TcnlaValueError(f"{what}: tensors on {x.device.type} are not supported (cpu or "
                              "cuda)", argument=what)
    dt = _TORCH_DT.get(str(x.dtype), str(x.dtype).replace("torch.", ""))
    return Arr("torch", x, x.data_ptr(), tuple(x.shape), tuple(x.stride()), dt, dev)


def _from_cupy(x, what):
    st = _elem_strides(x.strides, x.itemsize, x.shape, what)
    if st is None or x.data.ptr % x.itemsize:
        x = _cupy().ascontiguousarray(x)
        st = [s // x.itemsize for s in x.strides]
    return Arr("cupy", x, x.data.ptr, x.shape, st, _dt_name(x.dtype), x.device.id)


def wrap(x, what="A"):
    """An Arr for x, without copying its data (a copy only for byte-swapped,
    misaligned or itemsize-incompatible strides of NumPy / CuPy arrays)."""
    if isinstance(x, np.ndarray):
        return _from_numpy(x, what)
    torch, cupy = _torch(), _cupy()
    if torch is not None and isinstance(x, torch.Tensor):
        return _from_torch(x, what)
    if cupy is not None and isinstance(x, cupy.ndarray):
        return _from_cupy(x, what)
    if hasattr(x, "__cuda_array_interface__"):
        # zero-copy views by CuPy (preferred) or PyTorch; outputs are theirs
        try:
            import cupy as cp
            return _from_cupy(cp.asarray(x), what)
        except ImportError:
            pass
        try:
            import torch as th
            return _from_torch(th.as_tensor(x, device="cuda"), what)
        except ImportError:
            raise TcnlaValueError(f"{what}: an object with __cuda_array_interface__ needs CuPy "
                                  "or PyTorch installed", argument=what) from None
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        dev_type = int(x.__dlpack_device__()[0])
        if dev_type in (1, 3):  # kDLCPU, kDLCUDAHost
            return _from_numpy(np.from_dlpack(x), what)
        if dev_type == 2:  # kDLCUDA
            try:
                import cupy as cp
                return _from_cupy(cp.from_dlpack(x), what)
            except ImportError:
                pass
            try:
                import torch as th
                return _from_torch(th.from_dlpack(x), what)
            except ImportError:
                raise TcnlaValueError(f"{what}: a CUDA DLPack tensor needs CuPy or PyTorch "
                                      "installed", argument=what) from None
        raise TcnlaValueError(f"{what}: DLPack device type {dev_type} is not supported",
                              argument=what)
    if isinstance(x, (list, tuple)) or hasattr(x, "__array_interface__") or \
            hasattr(x, "__array__"):
        return _from_numpy(np.asarray(x), what)
    raise TcnlaValueError(f"{what}: an array (NumPy, CuPy, PyTorch, or with "
                          f"__cuda_array_interface__ / __dlpack__) expected, got "
                          f"{type(x).__name__}", argument=what)


# ----------------------------------------------------------------- framework ops
def _torch_dtype(dt):
    return getattr(_torch(), dt)


def empty(like, shape, order="C", dtype=None):
    """An uninitialized array of like's kind, dtype and device."""
    dtype = dtype or like.dtype
    shape = tuple(int(s) for s in shape)
    if like.kind == "numpy":
        x = np.empty(shape, dtype=dtype, order=order)
        return _from_numpy(x, "out")
    if like.kind == "torch":
        torch = _torch()
        st = _contig_strides(shape, order)
        dev = torch.device("cuda", like.device) if like.device is not None else torch.device("cpu")
        x = torch.empty_strided(shape, st, dtype=_torch_dtype(dtype), device=dev)
        return _from_torch(x, "out")
    cupy = _cupy()
    with cupy.cuda.Device(like.device):
        x = cupy.empty(shape, dtype=dtype, order=order)
    return _from_cupy(x, "out")


def zeros(like, shape, dtype=None):
    a = empty(like, shape, "C", dtype)
    if a.kind == "torch":
        a.obj.zero_()
    else:
        a.obj.fill(0)
    return a


def _contig_strides(shape, order):
    st = [0] * len(shape)
    acc = 1
    idx = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for i in idx:
        st[i] = acc
        acc *= max(1, shape[i])
    return tuple(st)


def contiguous(a, order="C"):
    """A C- (or F-) contiguous copy of a, same framework and device."""
    if a.kind == "numpy":
        x = np.ascontiguousarray(a.obj) if order == "C" else np.asfortranarray(a.obj)
        return _from_numpy(x, "copy")
    if a.kind == "torch":
        out = empty(a, a.shape, order)
        out.obj.copy_(a.obj)
        return out
    cupy = _cupy()
    with cupy.cuda.Device(a.device):
        x = cupy.ascontiguousarray(a.obj) if order == "C" else cupy.asfortranarray(a.obj)
    return _from_cupy(x, "copy")


def astype(a, dtype):
    """a converted to dtype (a copy, same layout kind C/F where possible)."""
    if a.dtype == dtype:
        return a
    if a.kind == "numpy":
        return _from_numpy(np.asarray(a.obj, dtype=dtype, order="K"), "copy")
    if a.kind == "torch":
        return _from_torch(a.obj.to(_torch_dtype(dtype)), "copy")
    return _from_cupy(a.obj.astype(dtype, order="K"), "copy")


def subtract(a, b):
    """a - b (b broadcast to a's shape) in a's framework, a new array."""
    if a.kind == "torch":
        torch = _torch()
        bo = b.obj if b.kind == "torch" else torch.as_tensor(b.obj, device=a.obj.device)
        return _from_torch((a.obj - bo.to(a.obj.dtype)).contiguous(), "A - M")
    xp = np if a.kind == "numpy" else _cupy()
    if a.kind == "cupy":
        with _cupy().cuda.Device(a.device):
            return _from_cupy(xp.ascontiguousarray(a.obj - xp.asarray(b.obj, dtype=a.dtype)),
                              "A - M")
    return _from_numpy(np.ascontiguousarray(a.obj - np.asarray(b.obj, dtype=a.dtype)), "A - M")


def flip_signs(U, Vt):
    """sklearn's svd_flip (u_based_decision=True) in place: the entry of
    largest magnitude of every column of U made positive, the rows of Vt
    following."""
    k = U.shape[1]
    if k == 0:
        return
    if U.kind == "torch":
        torch = _torch()
        u = U.obj
        idx = torch.argmax(u.abs(), dim=0)
        s = torch.sign(u[idx, torch.arange(k, device=u.device)])
        s[s == 0] = 1
        u.mul_(s)
        Vt.obj.mul_(s[:, None])
        return
    xp = np if U.kind == "numpy" else _cupy()
    u = U.obj
    idx = xp.argmax(xp.abs(u), axis=0)
    s = xp.sign(u[idx, xp.arange(k)])
    s[s == 0] = 1
    u *= s
    Vt.obj *= s[:, None]


def current_stream(a):
    """(cudaStream_t as int, 0 = legacy default; the framework's stream
    object) of the stream a's framework queues work on at this call, on a's device.
    The object is kept by the handle while that stream is the handle's, so
    that a stream the framework would destroy with its object (CuPy's)
    outlives its use by the handle."""
    if a.device is None:
        return 0, None
    if a.kind == "torch":
        s = _torch().cuda.current_stream(a.device)
        return int(s.cuda_stream), s
    cupy = _cupy()
    with cupy.cuda.Device(a.device):
        s = cupy.cuda.get_current_stream()
    return int(s.ptr), s


def swap_last(a):
    """a with its last two dimensions swapped: a view, no copy."""
    if a.kind == "torch":
        return _from_torch(a.obj.transpose(-1, -2), "view")
    if a.kind == "numpy":
        return _from_numpy(np.swapaxes(a.obj, -1, -2), "view")
    return _from_cupy(_cupy().swapaxes(a.obj, -1, -2), "view")


def reshape_view(a, shape):
    """a reshaped without a copy (a is contiguous in C order)."""
    if a.kind == "torch":
        return _from_torch(a.obj.view(tuple(shape)), "view")
    x = a.obj.reshape(tuple(shape))
    return _from_numpy(x, "view") if a.kind == "numpy" else _from_cupy(x, "view")
