"""backward() and grad(): walk the graph from the outputs to the leaves in topological order."""

from __future__ import annotations

from .. import _C
from .function import AccumulateGrad
from .grad_mode import no_grad


def _topological_order(roots) -> list:
    """Every node before the nodes it feeds gradients to (iterative DFS; graphs can be deep)."""
    order, visited = [], set()
    for root in roots:
        if root in visited:
            continue
        visited.add(root)
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


def _run(roots_and_grads, retain_graph, on_leaf, on_node=None) -> None:
    """Propagates the seeds; on_leaf(AccumulateGrad, grad) gets what reaches each leaf edge and
    on_node(node, grad) what reaches each node before it runs (backward() fills .grad of tensors
    that asked for retain_grad() there; grad() collects its inputs' gradients)."""
    pending = {}  # node -> sum of the gradients that reached it so far
    for root, grad in roots_and_grads:
        pending[root] = grad if root not in pending else _C.add(pending[root], grad)
    for node in _topological_order([root for root, _ in roots_and_grads]):
        grad = pending.pop(node, None)
        if grad is None:
            continue  # no gradient flows here (e.g. every path to it returned None)
        if isinstance(node, AccumulateGrad):
            on_leaf(node, grad)
            continue
        if on_node is not None:
            on_node(node, grad)
        input_grads = node.apply(grad)
        if not retain_graph:
            node.release()
        for edge, input_grad in zip(node.next_functions, input_grads):
            if edge is None or input_grad is None:
                continue
            previous = pending.get(edge)
            pending[edge] = input_grad if previous is None else _C.add(previous, input_grad)


def _fill_retained_grad(node, grad) -> None:
    if node.retained is not None:  # t.retain_grad() on the tensor this node made
        AccumulateGrad(node.retained).accumulate(grad)


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
        _run([(root, gradient)], retain_graph, lambda edge, grad: edge.accumulate(grad), _fill_retained_grad)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool | None = None, materialize_grads: bool = False) -> tuple:
    """The gradients of outputs with respect to inputs (a tuple, one per input), as
    torch.autograd.grad: nothing is accumulated into any .grad."""
    if create_graph:
        raise NotImplementedError("minitensor autograd does not build graphs of gradients (create_graph=True)")
    outputs = [outputs] if isinstance(outputs, _C.Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, _C.Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, _C.Tensor):
        grad_outputs = [grad_outputs] * len(outputs) if grad_outputs is None else [grad_outputs]
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grad_outputs)} for "
                           f"{len(outputs)} outputs")
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    wanted = {id(t): i for i, t in enumerate(inputs)}
    by_node = {t.grad_fn: i for i, t in enumerate(inputs) if t.grad_fn is not None}
    results = [None] * len(inputs)

    def collect(i, g):
        results[i] = g if results[i] is None else _C.add(results[i], g)

    def on_leaf(edge, g):
        i = wanted.get(id(edge.variable))
        if i is not None:
            collect(i, g)

    def on_node(node, g):
        i = by_node.get(node)
        if i is not None:
            collect(i, g)

    with no_grad():
        seeds = []
        for out, seed in zip(outputs, grad_outputs):
            if not out.requires_grad:
                raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
            seed = _initial_gradient(out, seed)
            if out.grad_fn is None:
                on_leaf(AccumulateGrad(out), seed)
            else:
                seeds.append((out.grad_fn, seed))
        if seeds:
            _run(seeds, retain_graph, on_leaf, on_node)
    for i, (t, g) in enumerate(zip(inputs, results)):
        if g is None:
            if materialize_grads:
                results[i] = _C.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
        elif tuple(g.shape) != tuple(t.shape) or g.dtype != t.dtype:
            results[i] = _C.sum_to_shape(g, t.shape).to(t.dtype) if tuple(g.shape) != tuple(t.shape) else g.to(t.dtype)
    return tuple(results)
