"""tcnla: Tensor-Core numerical linear algebra for NumPy, CuPy and PyTorch
arrays (a ctypes binding of libtcnla; docs/python.md).

    import tcnla
    U, S, V = tcnla.svd_lowrank(A, q=266, niter=2)     # torch.svd_lowrank's meaning
    U, S, Vt = tcnla.randomized_svd(M, 10)             # sklearn's meaning
    C = tcnla.matmul(a, b)                             # FP32-accurate on FP16 Tensor Cores

GPU arrays are used in place on the framework's current stream; host
arrays run on the GPU when one is present (device='cpu' / 'cuda' chooses).
"""

from ._api import (Info, cuda_available, hosvd, lra, matmul, memory_stats, randomized_svd,
                   reset_peak_memory, rsvd, svd_lowrank, version)
from ._lib import (TcnlaBackendError, TcnlaError, TcnlaNumericalError, TcnlaRangeError,
                   TcnlaValueError)

__version__ = "0.1.0"

__all__ = ["svd_lowrank", "randomized_svd", "rsvd", "lra", "hosvd", "matmul", "Info",
           "TcnlaError", "TcnlaValueError", "TcnlaRangeError", "TcnlaNumericalError",
           "TcnlaBackendError", "cuda_available", "version", "memory_stats",
           "reset_peak_memory"]
