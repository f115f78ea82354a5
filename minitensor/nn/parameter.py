"""nn.Parameter: a tensor that a Module registers as learnable (requires_grad=True)."""

from __future__ import annotations

from .. import _C


class Parameter(_C.Tensor):
    """`nn.Parameter(t)`: a leaf copy of t's values (on t's device, in t's dtype) that requires grad."""

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        if data is None:
            data = _C.empty(0)
        if isinstance(data, _C.Tensor):
            data = data.detach()
        super().__init__(data)  # copies the values into this object's own storage
        self.requires_grad = requires_grad

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__
