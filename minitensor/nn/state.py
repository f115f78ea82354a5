"""Module.state_dict / load_state_dict, with torch's key names, order and error messages."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

from .. import _C
from ..autograd.grad_mode import no_grad

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


def _own_state(module):
    """(name, tensor) of a module's own parameters, then its persistent buffers (torch's order)."""
    for name, param in module._parameters.items():
        if param is not None:
            yield name, param
    for name, buffer in module._buffers.items():
        if buffer is not None and name not in module._non_persistent_buffers:
            yield name, buffer


def module_state_dict(module, destination, prefix: str, keep_vars: bool) -> OrderedDict:
    if destination is None:
        destination = OrderedDict()
    for name, tensor in _own_state(module):
        destination[prefix + name] = tensor if keep_vars else tensor.detach()
    for name, child in module._modules.items():
        if child is not None:
            module_state_dict(child, destination, prefix + name + ".", keep_vars)
    return destination


def _all_state(module, prefix: str = ""):
    for name, tensor in _own_state(module):
        yield prefix + name, tensor
    for name, child in module._modules.items():
        if child is not None:
            yield from _all_state(child, prefix + name + ".")


def load_module_state_dict(module, state_dict, strict: bool, assign: bool) -> IncompatibleKeys:
    if not hasattr(state_dict, "items"):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    own = OrderedDict(_all_state(module))
    errors = []
    with no_grad():
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, _C.Tensor):
                errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                              f"object from checkpoint but received {type(value)}")
                continue
            if tuple(value.shape) != tuple(target.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape {_size(value)} from "
                              f"checkpoint, the shape in current model is {_size(target)}.")
                continue
            if assign:
                target.data = value.detach()
            else:
                try:
                    target.copy_(value)
                except Exception as ex:  # noqa: BLE001  (torch reports it with the others, in its words)
                    errors.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{_size(target)} and whose dimensions in the checkpoint are {_size(value)}, "
                                  f"an exception occurred : {ex.args}.")
    missing = [k for k in own if k not in state_dict]
    unexpected = [k for k in state_dict if k not in own]
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
    if errors:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            type(module).__name__, "\n\t".join(errors)))
    return IncompatibleKeys(missing, unexpected)


def _size(tensor) -> str:
    return f"torch.Size({list(tensor.shape)})"
