"""gradcheck: backward() against central finite differences, in float64."""

from __future__ import annotations

import numpy as np

from .. import _C
from .grad_mode import no_grad

Tensor = _C.Tensor


class GradcheckError(RuntimeError):
    pass


def _as_float64_leaf(x):
    """A float64 leaf copy of a floating tensor input (other inputs pass through unchanged)."""
    if not isinstance(x, Tensor) or not x.requires_grad:
        return x
    leaf = x.detach().to(_C.dtype.float64).clone()
    leaf.requires_grad = True
    return leaf


def _outputs(result) -> list:
    results = result if isinstance(result, (tuple, list)) else (result,)
    return [r for r in results if isinstance(r, Tensor) and r.dtype == _C.dtype.float64]


def _numerical_jacobians(fn, inputs, index: int, eps: float) -> list[np.ndarray]:
    """d(every output)/d(inputs[index]) by (f(x + eps) - f(x - eps)) / 2eps, one element at a time."""
    x = inputs[index]
    base = x.detach().cpu().numpy().astype(np.float64)
    columns = []
    for flat in range(base.size):
        values = []
        for step in (eps, -eps):
            shifted = base.copy()
            shifted.reshape(-1)[flat] += step
            args = list(inputs)
            args[index] = _C.Tensor(shifted, dtype=_C.dtype.float64, device=x.device)
            with no_grad():
                values.append([o.cpu().numpy().astype(np.float64).reshape(-1) for o in _outputs(fn(*args))])
        columns.append([(plus - minus) / (2 * eps) for plus, minus in zip(*values)])
    # per output: a (output elements, input elements) matrix
    return [np.stack([c[k] for c in columns], axis=1) if columns else np.zeros((0, 0))
            for k in range(len(columns[0]) if columns else 0)]


def _analytical_jacobian_rows(fn, inputs, index: int, output_index: int, numel_out: int) -> np.ndarray:
    """Row j = gradient of output element j w.r.t. inputs[index], by backward with a one-hot seed."""
    x = inputs[index]
    rows = []
    for j in range(numel_out):
        for leaf in inputs:
            if isinstance(leaf, Tensor):
                leaf.grad = None
        out = _outputs(fn(*inputs))[output_index]
        seed = np.zeros(out.numel())
        seed[j] = 1.0
        if out.requires_grad:
            out.backward(_C.Tensor(seed.reshape(out.shape), dtype=_C.dtype.float64, device=out.device))
        grad = x.grad
        rows.append(np.zeros(x.numel()) if grad is None else grad.cpu().numpy().astype(np.float64).reshape(-1))
    return np.stack(rows) if rows else np.zeros((0, x.numel()))


def gradcheck(fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3) -> bool:
    """True when backward() of fn agrees with finite differences for every input that requires
    grad; raises GradcheckError naming the worst element otherwise. Inputs are copied to float64."""
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    inputs = tuple(_as_float64_leaf(x) for x in inputs)
    differentiable = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not differentiable:
        raise ValueError("gradcheck expects at least one input tensor with requires_grad=True")
    for index in differentiable:
        numerical = _numerical_jacobians(fn, inputs, index, eps)
        for output_index, expected in enumerate(numerical):
            actual = _analytical_jacobian_rows(fn, inputs, index, output_index, expected.shape[0])
            error = np.abs(actual - expected) - (atol + rtol * np.abs(expected))
            if error.size and error.max() > 0:
                out_el, in_el = np.unravel_index(np.argmax(error), error.shape)
                raise GradcheckError(
                    f"Jacobian mismatch for output {output_index} with respect to input {index}: worst "
                    f"element (output element {out_el}, input element {in_el}): numerical "
                    f"{expected[out_el, in_el]:.8g}, analytical {actual[out_el, in_el]:.8g}\n"
                    f"numerical:\n{expected}\nanalytical:\n{actual}")
    return True
