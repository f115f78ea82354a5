"""backward(): walk the graph from an output to the leaves in topological order."""

from __future__ import annotations

from .. import _C
from .function import AccumulateGrad
from .grad_mode import no_grad


def _topological_order(root) -> list:
    """Every node before the nodes it feeds gradients to (iterative DFS; graphs can be deep)."""
    order, visited = [], {root}
    stack = [(root, iter(root.next_functions))]
    while stack:
        node, children = stack[-1]
        for child in children:
            if child is not None and child not in visited:
                visited.add(child)
                stack.append((child, iter(child.next_functions)))
                break
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order


def _initial_gradient(tensor, gradient):
    if gradient is None:
        if tensor.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        return _C.ones_like(tensor)
    if not isinstance(gradient, _C.Tensor):
        gradient = _C.full_like(tensor, float(gradient))
    if tuple(gradient.shape) != tuple(tensor.shape):
        raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {list(gradient.shape)} and "
                           f"output[0] has a shape of {list(tensor.shape)}.")
    return gradient.detach()


def backward(tensor, gradient=None, retain_graph: bool | None = None, create_graph: bool = False) -> None:
    """Accumulates d(tensor)/d(leaf) (times `gradient`) into .grad of every leaf that requires grad."""
    if create_graph:
        raise NotImplementedError("minitensor autograd does not build graphs of gradients (create_graph=True)")
    if not tensor.requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    gradient = _initial_gradient(tensor, gradient)
    with no_grad():
        root = tensor.grad_fn
        if root is None:  # backward on a leaf: its gradient is the seed itself
            AccumulateGrad(tensor).accumulate(gradient)
            return
        pending = {root: gradient}  # node -> sum of the gradients that reached it so far
        for node in _topological_order(root):
            grad = pending.pop(node, None)
            if grad is None:
                continue  # no gradient flows here (e.g. every path to it returned None)
            if isinstance(node, AccumulateGrad):
                node.accumulate(grad)
                continue
            input_grads = node.apply(grad)
            if not retain_graph:
                node.release()
            for edge, input_grad in zip(node.next_functions, input_grads):
                if edge is None or input_grad is None:
                    continue
                previous = pending.get(edge)
                pending[edge] = input_grad if previous is None else _C.add(previous, input_grad)
