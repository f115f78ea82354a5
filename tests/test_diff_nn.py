"""Building and training small graphs, against torch: requires_grad= on the factories,
state_dict / load_state_dict of modules and optimizers, deepcopy and pickling, nn.Dropout /
LayerNorm / Embedding / ModuleList, register_buffer, optim.AdamW, autograd.grad, retain_grad and
no_grad as a decorator. Module weights are copied from one library to the other, so both start
from the same numbers."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import minitensor as mt
from differential import Input, check, compare, random

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "randn", "rand", "full", "arange", "tensor",
                                     "zeros_like", "ones_like", "full_like", "empty_like"])
def test_factories_take_requires_grad(factory):
    def program(lib):
        like = lib.ones(2, 3)
        t = {"zeros": lambda: lib.zeros(2, 3, requires_grad=True), "ones": lambda: lib.ones(2, requires_grad=True),
             "empty": lambda: lib.empty(2, requires_grad=True), "randn": lambda: lib.randn(2, requires_grad=True),
             "rand": lambda: lib.rand(2, 2, requires_grad=True), "full": lambda: lib.full((2,), 1.5, requires_grad=True),
             "arange": lambda: lib.arange(3.0, requires_grad=True),
             "tensor": lambda: lib.tensor([1.0, 2.0], requires_grad=True),
             "zeros_like": lambda: lib.zeros_like(like, requires_grad=True),
             "ones_like": lambda: lib.ones_like(like, requires_grad=True),
             "full_like": lambda: lib.full_like(like, 2.0, requires_grad=True),
             "empty_like": lambda: lib.empty_like(like, requires_grad=True)}[factory]()
        return t.requires_grad, t.is_leaf, t.shape, t.dtype

    check(program)
    check(lambda lib: lib.zeros(2, dtype=lib.int64, requires_grad=True))  # ints cannot require grad


def _copy_weights(mt_module, torch_module):
    """torch_module's parameters and buffers, written into mt_module (same structure, same names)."""
    state = {k: mt.tensor(v.detach().numpy()) for k, v in torch_module.state_dict().items()}
    mt_module.load_state_dict(state)


def _model(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.LayerNorm(8), lib.nn.ReLU(), lib.nn.Dropout(0.0),
                             lib.nn.Linear(8, 3))


def test_state_dict_keys_order_and_values():
    torch_model, ours = _model(torch), _model(mt)
    _copy_weights(ours, torch_model)
    theirs = torch_model.state_dict()
    mine = ours.state_dict()
    assert list(mine) == list(theirs)
    for key in theirs:
        np.testing.assert_array_equal(mine[key].numpy(), theirs[key].numpy())
        assert not mine[key].requires_grad
    assert all(v.requires_grad for v in ours.state_dict(keep_vars=True).values())


def test_load_state_dict_errors_match_torch():
    def program(lib):
        layer = lib.nn.Linear(2, 3)
        layer.load_state_dict({"weight": lib.zeros(2, 2), "extra": lib.zeros(1)})

    error = check(program)
    theirs = None
    try:
        program(torch)
    except RuntimeError as e:
        theirs = str(e)
    assert str(error) == theirs

    def non_strict(lib):
        layer = lib.nn.Linear(2, 3)
        result = layer.load_state_dict({"weight": lib.ones(3, 2), "extra": lib.zeros(1)}, strict=False)
        return result.missing_keys, result.unexpected_keys, layer.weight.detach()

    check(non_strict)


def test_load_state_dict_copies_in_place_keeping_parameter_objects():
    layer = mt.nn.Linear(2, 2)
    weight = layer.weight
    layer.load_state_dict({"weight": mt.ones(2, 2), "bias": mt.zeros(2)})
    assert layer.weight is weight and weight.tolist() == [[1.0, 1.0], [1.0, 1.0]] and weight.requires_grad


def test_buffers_are_in_state_dict_and_move_with_the_module():
    def program(lib):
        module = lib.nn.Module()
        module.register_buffer("running", lib.ones(3))
        module.register_buffer("scratch", lib.zeros(2), persistent=False)
        module.scale = lib.nn.Parameter(lib.ones(1))
        module.double()
        return list(module.state_dict()), [n for n, _ in module.named_buffers()], module.running.dtype, \
            module.scale.dtype, len(list(module.parameters()))

    check(program)

    def errors(lib):
        module = lib.nn.Module()
        module.weight = lib.nn.Parameter(lib.ones(1))
        module.register_buffer("weight", lib.ones(1))

    check(errors)


def test_deepcopy_and_pickle_of_tensors_and_modules(rng):
    model = _model(mt)
    model(mt.randn(2, 4)).sum().backward()
    for clone in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        for (name, p), (_, q) in zip(model.named_parameters(), clone.named_parameters()):
            assert p is not q and type(q) is mt.nn.Parameter and q.requires_grad, name
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
        x = mt.tensor(random(rng, 3, 4), dtype=mt.float32)
        np.testing.assert_array_equal(model(x).detach().numpy(), clone(x).detach().numpy())
    shared = mt.nn.Linear(2, 2)
    pair = copy.deepcopy(mt.nn.Sequential(shared, shared))
    assert pair[0].weight is pair[1].weight  # shared stays shared, as in torch

    def tensors(lib):
        a = lib.tensor([[1.5, -2.0]], dtype=lib.bfloat16, requires_grad=True)
        b = pickle.loads(pickle.dumps(a))
        c = copy.deepcopy(lib.arange(4))
        return b, b.dtype, b.requires_grad, c

    check(tensors)

    def non_leaf(lib):
        copy.deepcopy(lib.ones(2, requires_grad=True) * 2)

    check(non_leaf)


def test_modules_forward_and_backward_like_torch(rng):
    torch.manual_seed(0)
    torch_model, ours = _model(torch), _model(mt)
    _copy_weights(ours, torch_model)
    x = random(rng, 5, 4)
    tx, mx = torch.tensor(x, dtype=torch.float32), mt.tensor(x, dtype=mt.float32)
    torch_model(tx).square().sum().backward()
    out = ours(mx)
    (out * out).sum().backward()
    for (name, p), (_, q) in zip(torch_model.named_parameters(), ours.named_parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("shape,normalized", [((4, 6), 6), ((2, 3, 4), (3, 4)), ((5,), [5])])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_layer_norm(rng, shape, normalized, dtype):
    norm_shape = (normalized,) if isinstance(normalized, int) else tuple(normalized)

    def program(lib, x, w, b):
        out = lib.nn.functional.layer_norm(x, normalized, w, b, eps=1e-5)
        (out * out).sum().backward()
        return out, x.grad, w.grad, b.grad

    check(program, Input(random(rng, *shape), dtype, requires_grad=True),
          Input(random(rng, *norm_shape), dtype, requires_grad=True),
          Input(random(rng, *norm_shape), dtype, requires_grad=True), rtol_scale=4.0)
    check(lambda lib, x: lib.nn.functional.layer_norm(x, (3,)), random(rng, 2, 4))


def test_layer_norm_module_defaults():
    check(lambda lib: (list(lib.nn.LayerNorm(4).state_dict()), lib.nn.LayerNorm(4).weight.detach(),
                       lib.nn.LayerNorm((2, 3), elementwise_affine=False).weight))


def test_embedding(rng):
    def program(lib, weight, idx):
        out = lib.nn.functional.embedding(idx, weight, padding_idx=1)
        (out * out).sum().backward()
        return out, weight.grad

    check(program, Input(random(rng, 6, 3), requires_grad=True), np.array([[0, 1, 5], [5, 5, 2]]))
    check(lambda lib, w, i: lib.nn.functional.embedding(i, w), random(rng, 4, 2), np.array([0.0, 1.0]))
    check(lambda lib, w, i: lib.nn.functional.embedding(i, w), random(rng, 4, 2), np.array([0, 4]))

    def module(lib):
        e = lib.nn.Embedding(5, 3, padding_idx=2)
        return e.weight.shape, e.weight.detach()[2], list(e.state_dict()), e.weight.requires_grad

    check(module)


def test_dropout(rng):
    def program(lib, x):
        layer = lib.nn.Dropout(0.25)
        train = layer(x)
        kept = train != 0
        scale_ok = bool(((train[kept] - x[kept] / 0.75).abs() < 1e-5).all())
        layer.eval()
        return scale_ok, layer(x) is x, lib.nn.functional.dropout(x, 1.0), lib.nn.functional.dropout(x, 0.0)

    check(program, random(rng, 50, 40, low=0.5, high=1.0))
    check(lambda lib, x: lib.nn.functional.dropout(x, 1.5), random(rng, 3))
    mt.manual_seed(3)
    kept = (mt.nn.functional.dropout(mt.ones(200, 200), 0.3) != 0).float().mean().item()
    assert abs(kept - 0.7) < 0.01


def test_module_list():
    def program(lib):
        layers = lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)])
        layers.append(lib.nn.ReLU())
        layers.insert(0, lib.nn.Tanh())
        layers += [lib.nn.Sigmoid()]
        del layers[1]
        return len(layers), [type(m).__name__ for m in layers], list(layers.state_dict()), \
            type(layers[-1]).__name__, len(layers[1:3])

    check(program)
    check(lambda lib: lib.nn.ModuleList([lib.nn.ReLU()])[3])


@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "AdamW"])
def test_optimizers_and_their_state_dicts(rng, optimizer):
    x, y = random(rng, 8, 4), rng.integers(0, 3, 8)
    torch_model, ours = _model(torch), _model(mt)
    _copy_weights(ours, torch_model)
    kwargs = {"SGD": dict(lr=0.1, momentum=0.9, weight_decay=0.01), "Adam": dict(lr=0.01, weight_decay=0.01),
              "AdamW": dict(lr=0.01, weight_decay=0.1)}[optimizer]
    results = []
    for lib, model in ((torch, torch_model), (mt, ours)):
        opt = getattr(lib.optim, optimizer)(model.parameters(), **kwargs)
        data, target = lib.tensor(x, dtype=lib.float32), lib.tensor(y)
        for step in range(4):
            if step == 2:  # a fresh optimizer resumed from the saved state continues identically
                saved = opt.state_dict()
                opt = getattr(lib.optim, optimizer)(model.parameters(), **kwargs)
                opt.load_state_dict(saved)
            opt.zero_grad()
            lib.nn.functional.cross_entropy(model(data), target).backward()
            opt.step()
        results.append([p.detach().numpy().copy() for p in model.parameters()])
        results.append(sorted(k for k in opt.state_dict()["param_groups"][0] if k != "params"))
    for theirs, mine in zip(results[0], results[2]):
        np.testing.assert_allclose(mine, theirs, rtol=2e-4, atol=2e-5)
    assert set(results[3]) <= set(results[1])


@pytest.mark.parametrize("optimizer", ["Adam", "AdamW"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adam_state_step_is_a_float32_tensor_as_in_torch(rng, optimizer, dtype):
    def program(lib, w):
        p = lib.nn.Parameter(w)
        opt = getattr(lib.optim, optimizer)([p], lr=0.01)
        for _ in range(3):
            p.grad = p * 2
            opt.step()
        step = opt.state_dict()["state"][0]["step"]
        saved = opt.state_dict()
        saved["state"][0]["step"] = 7  # an old-style number comes back as a tensor
        fresh = getattr(lib.optim, optimizer)([p], lr=0.01)
        fresh.load_state_dict(saved)
        loaded = fresh.state_dict()["state"][0]["step"]
        p.grad = p * 2
        fresh.step()
        return step, step.dtype, step.shape, loaded, fresh.state_dict()["state"][0]["step"], p

    check(program, Input(random(rng, 4), dtype))


def test_adamw_decouples_weight_decay():
    p = mt.nn.Parameter(mt.ones(3))
    opt = mt.optim.AdamW([p], lr=0.1, weight_decay=0.5)
    p.grad = mt.zeros(3)
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), np.full(3, 1 - 0.1 * 0.5), rtol=1e-6)


def test_autograd_grad(rng):
    def program(lib, x, w):
        h = x * w
        y = (h * h).sum() + w.sum()
        gx, gw, gh = lib.autograd.grad(y, [x, w, h], retain_graph=True)
        return gx, gw, gh, x.grad, w.grad

    check(program, Input(random(rng, 3), requires_grad=True), Input(random(rng, 3), requires_grad=True))

    def unused(lib, x, w):
        return lib.autograd.grad((x * 2).sum(), [x, w])

    check(unused, Input(random(rng, 3), requires_grad=True), Input(random(rng, 3), requires_grad=True))

    def allowed(lib, x, w):
        return lib.autograd.grad((x * 2).sum(), [x, w], allow_unused=True)[1] is None

    check(allowed, Input(random(rng, 3), requires_grad=True), Input(random(rng, 3), requires_grad=True))

    def seeded(lib, x):
        return lib.autograd.grad([x * 2, x * x], x, grad_outputs=[lib.ones(3), x.detach()])

    check(seeded, Input(random(rng, 3), requires_grad=True))


def test_retain_grad(rng):
    def program(lib, x):
        h = x * 3
        h.retain_grad()
        x.retain_grad()  # a leaf: no-op
        (h * h).sum().backward()
        return h.grad, x.grad, h.retains_grad, x.retains_grad

    check(program, Input(random(rng, 4), requires_grad=True))


def test_no_grad_as_decorator(rng):
    def program(lib, x):
        @lib.no_grad()
        def doubled(t):
            return t * 2

        @lib.enable_grad()
        def tripled(t):
            return t * 3

        @lib.no_grad
        def bare(t):
            return t * 4

        with lib.no_grad():
            inner = tripled(x)
        return doubled(x).requires_grad, inner.requires_grad, bare(x).requires_grad, lib.is_grad_enabled()

    check(program, Input(random(rng, 3), requires_grad=True))


def test_training_a_small_graph_matches_torch(rng):
    """A two-layer net with LayerNorm, Embedding, Dropout(0) and AdamW, 5 steps, same start."""
    tokens, labels = rng.integers(0, 10, (16, 3)), rng.integers(0, 4, 16)
    torch.manual_seed(1)
    nets = {}
    for lib in (torch, mt):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = lib.nn.Embedding(10, 6)
                self.blocks = lib.nn.ModuleList([lib.nn.Linear(18, 12), lib.nn.Linear(12, 4)])
                self.norm = lib.nn.LayerNorm(12)
                self.drop = lib.nn.Dropout(0.0)

            def forward(self, t):
                h = self.embed(t).flatten(1)
                h = self.drop(self.norm(self.blocks[0](h)).relu())
                return self.blocks[1](h)

        nets[lib] = Net()
    _copy_weights(nets[mt], nets[torch])
    losses = {}
    for lib, net in nets.items():
        opt = lib.optim.AdamW(net.parameters(), lr=0.05)
        t, y = lib.tensor(tokens), lib.tensor(labels)
        history = []
        for _ in range(5):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(net(t), y, label_smoothing=0.1)
            loss.backward()
            opt.step()
            history.append(loss.item())
        losses[lib] = history
    np.testing.assert_allclose(losses[mt], losses[torch], rtol=1e-4)
