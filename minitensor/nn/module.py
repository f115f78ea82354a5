"""nn.Module: parameters and submodules registered by attribute assignment, as in PyTorch."""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterator

from .. import _C
from . import state
from .parameter import Parameter


class Module:
    """Base class of layers. Subclasses call super().__init__() and define forward()."""

    training: bool

    def __init__(self) -> None:
        # object.__setattr__: our own __setattr__ needs these dicts to exist already
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # -- registration ---------------------------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign attributes before Module.__init__() call")
        if isinstance(value, Parameter):
            self._forget(name)
            self._parameters[name] = value
        elif name in self._parameters:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self._parameters[name] = None
        elif isinstance(value, Module):
            self._forget(name)
            self._modules[name] = value
        elif name in self._buffers:
            if value is not None and not isinstance(value, _C.Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            self._buffers[name] = value
        else:
            self._forget(name)
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        """Drops `name` from every registry and from the instance dict, before it is set anew."""
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        self._non_persistent_buffers.discard(name)
        self.__dict__.pop(name, None)

    def __getattr__(self, name: str):  # only called when normal lookup fails
        for registry in ("_parameters", "_buffers", "_modules"):
            items = self.__dict__.get(registry)
            if items is not None and name in items:
                return items[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if param is None:
            self._forget(name)
            self._parameters[name] = None
        else:
            setattr(self, name, param)

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """A tensor that belongs to the module's state (moved by to(), saved by state_dict() unless
        persistent=False) but is not a parameter: running statistics, masks, constants."""
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, _C.Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._forget(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is None:
            object.__setattr__(self, name, None)
        else:
            setattr(self, name, module)

    # -- traversal ------------------------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, Module]]:
        yield from self._modules.items()

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        yield prefix, self
        for name, child in self._modules.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        seen = set()  # a parameter shared by two layers is listed once (by identity)
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for module_name, module in modules:
            for name, param in module._parameters.items():
                if param is not None and id(param) not in seen:
                    seen.add(id(param))
                    yield (f"{module_name}.{name}" if module_name else name), param

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, _C.Tensor]]:
        seen = set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for module_name, module in modules:
            for name, buffer in module._buffers.items():
                if buffer is not None and id(buffer) not in seen:
                    seen.add(id(buffer))
                    yield (f"{module_name}.{name}" if module_name else name), buffer

    def buffers(self, recurse: bool = True) -> Iterator[_C.Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    # -- state ----------------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        for param in self.parameters():
            if param.grad is not None:
                param.grad = None if set_to_none else _C.zeros_like(param.grad)

    def state_dict(self, destination=None, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
        """name -> tensor for every parameter and persistent buffer ("layer.0.weight"); the tensors
        share memory with the module's (detached unless keep_vars=True), as in torch."""
        return state.module_state_dict(self, destination, prefix, keep_vars)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copies the values of state_dict into the module's parameters and buffers, in place.
        Returns (missing_keys, unexpected_keys); with strict=True (the default) any of them, or a
        shape mismatch, raises RuntimeError in torch's words."""
        return state.load_module_state_dict(self, state_dict, strict, assign)

    def train(self, mode: bool = True) -> Module:
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Moves parameters (and buffers) to a device and/or casts floating ones to a dtype, in place:
        each Parameter object stays the same (its .data is swapped), so an optimizer built before
        keeps working, as in torch."""
        for tensor in list(self.parameters()) + list(self.buffers()):
            moved = tensor.detach().to(*args, **kwargs)
            if tensor.dtype.is_floating_point or moved.dtype == tensor.dtype:
                tensor.data = moved
            else:  # integer buffers move but keep their dtype (torch casts floating tensors only)
                tensor.data = tensor.detach().to(moved.device)
            if tensor.grad is not None:
                tensor.grad.data = tensor.grad.detach().to(tensor.device, tensor.dtype)
        return self

    def cuda(self, device=None) -> Module:
        return self.to("cuda" if device is None else f"cuda:{device}")

    def cpu(self) -> Module:
        return self.to("cpu")

    def float(self) -> Module:
        return self.to(_C.dtype.float32)

    def double(self) -> Module:
        return self.to(_C.dtype.float64)

    # -- calling and printing -------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required \"forward\" function")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [self.extra_repr()] if self.extra_repr() else []
        child_lines = []
        for name, module in self._modules.items():
            child = repr(module).replace("\n", "\n  ")
            child_lines.append(f"({name}): {child}")
        if not child_lines:
            return f"{type(self).__name__}({', '.join(lines)})"
        body = "\n  ".join(lines + child_lines)
        return f"{type(self).__name__}(\n  {body}\n)"
