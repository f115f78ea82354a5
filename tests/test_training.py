"""End to end: the demo's MLP trains on the spiral (loss falls, accuracy rises)."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import demo


def test_spiral_data_shape_and_balance():
    points, labels = demo.make_spiral(50)
    assert points.shape == (150, 2) and points.dtype == np.float32
    assert np.bincount(labels).tolist() == [50, 50, 50]


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64], ids=["float32", "float64"])
def test_mlp_loss_falls(device, dtype):
    mt.manual_seed(0)
    points, labels = demo.make_spiral(60)
    x = mt.tensor(points, dtype=dtype, device=device)
    y = mt.tensor(labels, device=device)
    model = mt.nn.Sequential(mt.nn.Linear(2, 32), mt.nn.ReLU(), mt.nn.Linear(32, 3)).to(device).to(dtype)
    optimizer = mt.optim.Adam(model.parameters(), lr=0.03)
    losses = []
    for _ in range(60):
        loss = mt.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]
    assert all(p.dtype == dtype for p in model.parameters())


def test_demo_training_reaches_95_percent_on_cpu():
    result = demo.train_spiral(steps=300, device="cpu", quiet=True)
    assert result["accuracy"] >= 0.95
    assert result["losses"][-1] < result["losses"][0] / 5


@pytest.mark.cuda
@pytest.mark.unsanitized  # 300 training steps: over 6 minutes under racecheck; the op tests cover its kernels
def test_demo_training_on_cuda():
    result = demo.train_spiral(steps=300, device="cuda", quiet=True)
    assert result["accuracy"] >= 0.95


def test_demo_main_accepts_argv(capsys):
    assert demo.main(["--steps", "300", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "training accuracy" in out and "softmax checks: all match NumPy" in out
