"""minitensor.cuda: is a GPU usable here, how many, and waiting for them."""

from ._C import cuda as _cuda

is_built = _cuda.is_built
is_available = _cuda.is_available
device_count = _cuda.device_count
current_device = _cuda.current_device
synchronize = _cuda.synchronize
memory_reserved = _cuda.memory_reserved


def empty_cache(device=None) -> None:
    """Hands the unused blocks of minitensor's memory pool back to the driver, as
    torch.cuda.empty_cache() does for torch's; nothing to do where CUDA is not available."""
    if is_available():
        _cuda.empty_cache(device)


__all__ = ["is_built", "is_available", "device_count", "current_device", "synchronize", "memory_reserved",
           "empty_cache"]
