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
from . import _tensor as _tensor_sugar
from . import cuda

_tensor_sugar._install()

# Autograd: differentiable ops, Python operators and .backward() on Tensor; then nn and optim.
from . import autograd
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ._indexing import index_select
from ._shape_functions import cat, chunk, concat, concatenate, flatten, narrow, split, stack
from ._functions import (
    abs, add, all, amax, amin, any, argmax, argmin, clamp, clip, div, eq, exp, ge, gt, le, log, log_softmax, lt, matmul, max, maximum, mean,
    mul, ne, neg, pow, relu, sigmoid, softmax, softmax_impls, sqrt, sub, sum, tanh, where,
    min, minimum, prod, std, var,
)
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
    "CudaError", "ShapeError", "Tensor", "bfloat16", "bool", "cuda", "device", "double", "dtype", "empty", "float",
    "float16", "float32", "float64", "from_dlpack", "from_numpy", "full", "half", "int64",
    "log_softmax", "long", "manual_seed", "ones", "rand", "randn", "softmax", "softmax_impls", "tensor", "zeros",
    # autograd, nn, optim
    "autograd", "enable_grad", "is_grad_enabled", "nn", "no_grad", "optim", "set_grad_enabled",
    "abs", "add", "amax", "argmax", "clamp", "clip", "div", "eq", "exp", "ge", "gt", "le", "log", "lt", "matmul", "max",
    "maximum", "mean", "mul", "ne", "neg", "pow", "relu", "sigmoid", "sqrt", "sub", "sum", "tanh", "where",
    "all", "amin", "any", "argmin", "chunk", "concat", "concatenate", "flatten", "narrow", "index_select", "min", "minimum",
    "prod", "split", "stack", "std", "var",
    "arange", "cat", "empty_like", "full_like", "one_hot", "ones_like", "zeros_like",
]
