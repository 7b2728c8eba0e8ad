"""The reference kernels written in the Python kernel language: each emits
the same instructions as its C++ twin in sw/kernels (tests/python checks the
bytes, the outputs and the simulated times)."""
from .attention import attention
from .gemm import gemm
from .norm import rmsnorm, softmax

__all__ = ["attention", "gemm", "rmsnorm", "softmax"]
