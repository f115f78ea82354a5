"""nll_loss and cross_entropy with torch's signature, semantics and errors.

input is (N, C), (C,) or (N, C, d1, ...): the class dim is 1 (0 unbatched). target holds int64
class indices of shape (N,), () or (N, d1, ...); cross_entropy also takes class probabilities of
input's shape. A target equal to ignore_index contributes nothing and is left out of the mean;
any other target outside [0, C) raises IndexError. With weight, each element's loss is scaled by
the weight of its target class and the mean divides by the sum of those weights (torch's
weighted mean). The target's entry is picked with a select, never a multiplication by a one-hot
mask, so a -inf logit elsewhere in the row does not turn the loss into NaN (-inf * 0).
"""

from __future__ import annotations

from .. import _C
from .. import _functions as F
from .._tensor import torch_scalar_type

Tensor = _C.Tensor
_INDEX_TYPES = (_C.dtype.int64,)


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """torch's mapping of the deprecated size_average / reduce flags onto `reduction`."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def check_reduction(reduction: str) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _batched(input, target):
    """(input as (N, C, ...), target as (N, ...), unbatched?) after torch's shape checks."""
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        return input.unsqueeze(0), target.unsqueeze(0), True
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if target.ndim >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    if input.ndim == 2 and target.ndim != 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input.ndim > 2 and tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
    return input, target, False


def _check_tensors(name: str, input, target) -> None:
    for position, (arg, value) in enumerate((("input", input), ("target", target)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")


def _check_index_target(target, num_classes: int, ignore_index: int) -> None:
    if target.dtype not in _INDEX_TYPES:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {torch_scalar_type(target.dtype)}")
    values = target.detach().cpu().numpy()  # one look on the host, as torch's CPU kernels do
    bad = values[(values != ignore_index) & ((values < 0) | (values >= num_classes))]
    if bad.size:
        raise IndexError(f"Target {int(bad.reshape(-1)[0])} is out of bounds.")


def _check_weight(weight, num_classes: int) -> None:
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != num_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {num_classes} classes or no classes "
                           f"but got weight tensor of shape: {list(weight.shape)}")


def _along_class_dim(vector, ndim: int):
    """A (C,) tensor shaped (C, 1, ..., 1) to broadcast against (N, C, d1, ...)."""
    return vector.reshape(vector.shape[0], *([1] * (ndim - 2)))


def _gather_targets(values, target, kept):
    """values (N, C, d1, ...) at each element's target class: (N, d1, ...). Gathered, so memory is
    O(N * d) rather than a dense (N, C, ...) mask, and no other class's value (a -inf logit) can
    reach the sum. Ignored elements read class 0; the caller zeroes them with where, not a product."""
    num_classes = values.shape[1]
    rows = values.permute(0, *range(2, values.ndim), 1).reshape(-1, num_classes)
    safe = _C.where(kept, target, 0).reshape(-1)
    return rows[_C.arange(safe.shape[0], device=values.device), safe].reshape(*target.shape)


def _reduce(losses, reduction: str, denominator):
    if reduction == "none":
        return losses
    total = F.sum(losses)
    return total if reduction == "sum" else F.div(total, denominator)


def _nll(log_probs, target, weight, ignore_index: int, reduction: str):
    """nll_loss on batched (N, C, ...) log-probabilities; returns (loss, each element's target weight)."""
    kept = _C.ne(target, ignore_index)  # ignore_index may be a real class (0 <= ignore_index < C)
    picked = F.where(kept, _gather_targets(log_probs, target, kept), 0.0)
    if weight is None:
        target_weight = kept.to(log_probs.dtype)
        losses = F.neg(picked)
    else:
        per_class = weight.detach().to(log_probs.dtype)
        target_weight = _C.where(kept, _C.index_select(per_class, 0, _C.where(kept, target, 0).reshape(-1))
                                 .reshape(*target.shape), 0.0)
        losses = F.neg(F.mul(picked, target_weight))
    return _reduce(losses, reduction, _C.sum(target_weight)), target_weight


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean"):
    """The negative log-likelihood of the target classes; input holds log-probabilities."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    _check_tensors("nll_loss_nd", input, target)
    batched_input, batched_target, unbatched = _batched(input, target)
    num_classes = batched_input.shape[1]
    _check_index_target(target, num_classes, ignore_index)
    _check_weight(weight, num_classes)
    loss, _ = _nll(batched_input, batched_target, weight, ignore_index, reduction)
    return loss.squeeze(0) if unbatched and reduction == "none" else loss


def _probability_cross_entropy(input, target, weight, reduction: str, label_smoothing: float):
    class_dim = 0 if input.ndim == 1 else 1
    num_classes = input.shape[class_dim]
    _check_weight(weight, num_classes)
    log_probs = F.log_softmax(input, class_dim)
    if label_smoothing > 0:
        target = F.add(F.mul(target, 1 - label_smoothing), label_smoothing / num_classes)
    terms = F.mul(log_probs, target)
    if weight is not None:
        terms = F.mul(terms, _along_class_dim(weight, max(input.ndim, 2)) if class_dim else weight)
    losses = F.neg(F.sum(terms, class_dim))
    return _reduce(losses, reduction, input.numel() // num_classes)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0):
    """nll_loss(log_softmax(input, class dim), target), with optional label smoothing; target may
    also be class probabilities of input's shape."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    _check_tensors("cross_entropy_loss", input, target)
    if tuple(input.shape) == tuple(target.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class probabilities, got "
                               f"{torch_scalar_type(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _probability_cross_entropy(input, target, weight, reduction, label_smoothing)
    batched_input, batched_target, unbatched = _batched(input, target)
    num_classes = batched_input.shape[1]
    _check_index_target(target, num_classes, ignore_index)
    _check_weight(weight, num_classes)
    log_probs = F.log_softmax(batched_input, 1)
    loss, target_weight = _nll(log_probs, batched_target, weight, ignore_index, reduction)
    if label_smoothing > 0:
        # torch: every class gets label_smoothing / C of the target mass, weighted like nll's terms
        terms = log_probs if weight is None else F.mul(log_probs, _along_class_dim(weight, log_probs.ndim))
        smooth = F.where(_C.eq(batched_target, ignore_index), 0.0, F.neg(F.sum(terms, 1)))
        smooth = _reduce(smooth, reduction, _C.sum(target_weight))
        loss = F.add(F.mul(loss, 1 - label_smoothing), F.mul(smooth, label_smoothing / num_classes))
    return loss.squeeze(0) if unbatched and reduction == "none" else loss


__all__ = ["cross_entropy", "nll_loss"]
