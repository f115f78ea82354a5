"""minitensor.cuda: is a GPU usable here, how many, and waiting for them."""

from ._C import cuda as _cuda

is_built = _cuda.is_built
is_available = _cuda.is_available
device_count = _cuda.device_count
current_device = _cuda.current_device
synchronize = _cuda.synchronize
memory_reserved = _cuda.memory_reserved

__all__ = ["is_built", "is_available", "device_count", "current_device", "synchronize", "memory_reserved"]
