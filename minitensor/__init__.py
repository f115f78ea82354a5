"""minitensor: a small tensor library with a fast Softmax on CPU and CUDA.

    import minitensor as mt
    x = mt.Tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    x.softmax(dim=1)
"""

from . import _C
from ._C import (
    CudaError,
    Tensor,
    device,
    dtype,
    empty,
    from_dlpack,
    from_numpy,
    full,
    log_softmax,
    manual_seed,
    ones,
    rand,
    randn,
    softmax,
    zeros,
)
from . import _tensor as _tensor_sugar
from . import cuda

_tensor_sugar._install()

float32 = dtype.float32
float64 = dtype.float64
float16 = dtype.float16
bfloat16 = dtype.bfloat16
int64 = dtype.int64
bool = dtype.bool  # noqa: A001  (torch spells it torch.bool too)
float = float32  # noqa: A001
double = float64
half = float16
long = int64


def tensor(data, dtype=None, device=None) -> Tensor:
    """A new tensor copied from data (nested lists, scalars, NumPy arrays or tensors)."""
    return Tensor(data, dtype=dtype, device=device)


__version__ = "0.1.0"

__all__ = [
    "CudaError", "Tensor", "bfloat16", "bool", "cuda", "device", "double", "dtype", "empty", "float",
    "float16", "float32", "float64", "from_dlpack", "from_numpy", "full", "half", "int64",
    "log_softmax", "long", "manual_seed", "ones", "rand", "randn", "softmax", "tensor", "zeros",
]
