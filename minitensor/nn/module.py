"""nn.Module: parameters and submodules registered by attribute assignment, as in PyTorch."""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterator

from .. import _C
from .parameter import Parameter


class Module:
    """Base class of layers. Subclasses call super().__init__() and define forward()."""

    training: bool

    def __init__(self) -> None:
        # object.__setattr__: our own __setattr__ needs these dicts to exist already
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # -- registration ---------------------------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign attributes before Module.__init__() call")
        for registry in (self._parameters, self._modules):
            registry.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)
            return
        self.__dict__.pop(name, None)

    def __getattr__(self, name: str):  # only called when normal lookup fails
        for registry in ("_parameters", "_modules"):
            items = self.__dict__.get(registry)
            if items is not None and name in items:
                return items[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._modules):
            if name in registry:
                del registry[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if param is None:
            self._parameters.pop(name, None)
            object.__setattr__(self, name, None)
        else:
            setattr(self, name, param)

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
                if id(param) not in seen:
                    seen.add(id(param))
                    yield (f"{module_name}.{name}" if module_name else name), param

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    # -- state ----------------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        for param in self.parameters():
            if param.grad is not None:
                param.grad = None if set_to_none else _C.zeros_like(param.grad)

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
        """Moves parameters to a device and/or casts floating ones to a dtype. A C++ tensor cannot
        be re-pointed at new storage, so each moved parameter is a new Parameter rebound to the same
        attribute: build optimizers after calling to(), as PyTorch's docs advise too."""
        moved: dict[int, Parameter] = {}  # a parameter shared by two layers stays shared
        for module in self.modules():
            for name, param in list(module._parameters.items()):
                if id(param) not in moved:
                    new = Parameter(param.detach().to(*args, **kwargs), requires_grad=param.requires_grad)
                    if param.grad is not None:
                        new.grad = param.grad.to(new.device, new.dtype)
                    moved[id(param)] = new
                module._parameters[name] = moved[id(param)]
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
