"""minitensor: a small tensor library with a fast Softmax on CPU and CUDA.

    import minitensor as mt
    x = mt.Tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    x.softmax(dim=1)
"""

from ._locate import locate_compiled_module as _locate_compiled_module

_locate_compiled_module(__path__)
from . import _C
from ._C import CudaError, ShapeError, Tensor, device, dtype, from_dlpack, from_numpy, manual_seed
from ._C import one_hot
from ._factories import (arange, empty, empty_like, full, full_like, ones, ones_like, rand, randn, tensor,
                         zeros, zeros_like)
from . import cuda

# Autograd, then the operators (each module registers its public functions in _registry.OPS),
# then Tensor's Python methods, all attached in one place (_tensor.install).
from . import autograd
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from . import _functions, _indexing, _shape_functions  # noqa: F401  (they register the operators)
from ._registry import OPS as _OPS
from . import _tensor

globals().update(_OPS)  # mt.add, mt.softmax, mt.cat, ...: every registered operator, under its name
_tensor.install()
from . import nn, optim

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


__version__ = "0.1.0"

__all__ = [
    "CudaError", "ShapeError", "Tensor", "bfloat16", "bool", "cuda", "device", "double", "dtype", "float",
    "float16", "float32", "float64", "from_dlpack", "from_numpy", "half", "int64", "long", "manual_seed",
    "one_hot",
    # creation
    "arange", "empty", "empty_like", "full", "full_like", "ones", "ones_like", "rand", "randn", "tensor", "zeros",
    "zeros_like",
    # autograd, nn, optim
    "autograd", "enable_grad", "is_grad_enabled", "nn", "no_grad", "optim", "set_grad_enabled",
    *_OPS,  # the operators
]
