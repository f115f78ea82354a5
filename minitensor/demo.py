"""python -m minitensor.demo: softmax and log_softmax over several dims, on the CPU and on CUDA
when available, each checked against a float64 NumPy reference, with a short report; then a
two-layer MLP (2 -> 64 -> 3, ReLU) trained with Adam on a three-class spiral.

    python -m minitensor.demo [--steps 600] [--device cpu] [--plot spiral.png]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import minitensor as mt


def _reference(x: np.ndarray, dim: int, log: bool) -> np.ndarray:
    x = x.astype(np.float64)
    shifted = x - x.max(axis=dim, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
    return shifted - log_sum if log else np.exp(shifted - log_sum)


def _devices() -> list[str]:
    return ["cpu", "cuda"] if mt.cuda.is_available() else ["cpu"]


def run_softmax_checks() -> bool:
    rng = np.random.default_rng()
    cases = [((2, 3), 1), ((2, 3, 4, 5), -3), ((8, 1000), -1), ((4, 128, 7, 7), 1), ((), 0)]
    tolerance = {mt.float32: 1e-6, mt.float64: 1e-12}
    all_ok = True
    print(f"{'device':<7}{'dtype':<20}{'shape':<18}{'dim':>4}  {'op':<12}{'max error':>11}  result")
    for device in _devices():
        for dtype in (mt.float32, mt.float64):
            for shape, dim in cases:
                data = rng.standard_normal(shape) * 3
                x = mt.tensor(data, dtype=dtype, device=device)
                for log in (False, True):
                    op = "log_softmax" if log else "softmax"
                    y = x.log_softmax(dim) if log else x.softmax(dim)
                    expected = _reference(x.double().cpu().numpy(), dim, log)
                    error = float(np.max(np.abs(y.cpu().double().numpy() - expected), initial=0.0))
                    ok = error <= tolerance[dtype] * max(1.0, float(np.max(np.abs(expected), initial=0.0)))
                    all_ok &= ok
                    print(f"{device:<7}{str(dtype):<20}{str(shape):<18}{dim:>4}  {op:<12}{error:>11.2e}  "
                          f"{'ok' if ok else 'MISMATCH'}")
    return all_ok


def make_spiral(points_per_class: int = 300, classes: int = 3, noise: float = 0.2,
                seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Interleaved spiral arms (cs231n's toy set): not linearly separable, easy for a small MLP."""
    rng = np.random.default_rng(seed)
    radius = np.linspace(0.0, 1.0, points_per_class)
    points, labels = [], []
    for c in range(classes):
        angle = np.linspace(c * 4.0, (c + 1) * 4.0, points_per_class) + rng.standard_normal(points_per_class) * noise
        points.append(np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1))
        labels.append(np.full(points_per_class, c))
    return np.concatenate(points).astype(np.float32), np.concatenate(labels).astype(np.int64)


class _ProgressBar:
    """tqdm when it is installed, else a one-line bar redrawn with \\r."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.start = total, 0, time.perf_counter()
        try:
            from tqdm import tqdm
            self._tqdm = tqdm(total=total, desc="training", unit="step", leave=True)
        except ImportError:
            self._tqdm = None

    def update(self, steps: int, loss: float) -> None:
        self.done += steps
        if self._tqdm is not None:
            self._tqdm.set_postfix(loss=f"{loss:.4f}", refresh=False)
            self._tqdm.update(steps)
            return
        width = 30
        filled = width * self.done // self.total
        print(f"\rtraining [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
              f"loss {loss:.4f} {time.perf_counter() - self.start:5.1f}s", end="", flush=True)

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()
        else:
            print()


def _save_plot(path: str, model, losses: list[float], points: np.ndarray, labels: np.ndarray, device) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"--plot {path}: matplotlib is not installed (pip install matplotlib), so no plot was saved")
        return
    grid_x, grid_y = np.meshgrid(np.linspace(-1.2, 1.2, 300), np.linspace(-1.2, 1.2, 300))
    grid = np.stack([grid_x.ravel(), grid_y.ravel()], axis=1).astype(np.float32)
    with mt.no_grad():
        regions = model(mt.tensor(grid, device=device)).argmax(1).cpu().numpy().reshape(grid_x.shape)
    fig, (loss_ax, region_ax) = plt.subplots(1, 2, figsize=(11, 4.5))
    loss_ax.plot(losses)
    loss_ax.set(xlabel="step", ylabel="cross-entropy", yscale="log", title="training loss")
    region_ax.contourf(grid_x, grid_y, regions, levels=[-0.5, 0.5, 1.5, 2.5], cmap="Pastel1", alpha=0.8)
    region_ax.scatter(points[:, 0], points[:, 1], c=labels, cmap="Set1", s=8, edgecolors="none")
    region_ax.set(title="decision regions", aspect="equal")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"saved the loss curve and decision regions to {path}")


def train_spiral(steps: int = 600, lr: float = 0.02, hidden: int = 64, points_per_class: int = 300,
                 batch_size: int = 0, device: str | None = None, seed: int = 0, plot: str | None = None,
                 quiet: bool = False) -> dict:
    """Trains Linear(2, hidden) -> ReLU -> Linear(hidden, 3) with Adam on the spiral; returns
    {"accuracy", "losses", "seconds", "device"}. batch_size 0 means full batch."""
    device = device or ("cuda" if mt.cuda.is_available() else "cpu")
    mt.manual_seed(seed)
    points, labels = make_spiral(points_per_class, seed=seed)
    x, y = mt.tensor(points, device=device), mt.tensor(labels, device=device)
    model = mt.nn.Sequential(mt.nn.Linear(2, hidden), mt.nn.ReLU(), mt.nn.Linear(hidden, 3)).to(device)
    optimizer = mt.optim.Adam(model.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    losses: list[float] = []
    bar = None if quiet else _ProgressBar(steps)
    redraw_every = max(1, steps // 50)  # a redraw costs a print: about 50 per run
    start = time.perf_counter()
    for step in range(steps):
        if batch_size and batch_size < len(labels):
            chosen = rng.choice(len(labels), batch_size, replace=False)
            inputs, targets = mt.tensor(points[chosen], device=device), mt.tensor(labels[chosen], device=device)
        else:
            inputs, targets = x, y
        loss = mt.nn.functional.cross_entropy(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())  # a host sync per step: fine for a demo, and it feeds the bar
        if bar is not None and ((step + 1) % redraw_every == 0 or step == steps - 1):
            bar.update(step + 1 - bar.done, losses[-1])
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - start
    with mt.no_grad():
        accuracy = float((model(x).argmax(1) == y).float().mean().item())
    if plot:
        _save_plot(plot, model, losses, points, labels, device)
    return {"accuracy": accuracy, "losses": losses, "seconds": seconds, "device": device, "model": model}


def _parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m minitensor.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=600, help="Adam steps (default 600)")
    parser.add_argument("--lr", type=float, default=0.02, help="learning rate (default 0.02)")
    parser.add_argument("--hidden", type=int, default=64, help="hidden units (default 64)")
    parser.add_argument("--points", type=int, default=300, help="points per class (default 300)")
    parser.add_argument("--batch-size", type=int, default=0, help="minibatch size; 0 = full batch (default)")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", metavar="OUT.png", default=None,
                        help="save the loss curve and decision regions (needs matplotlib)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    print(f"minitensor {mt.__version__}: CUDA built={mt.cuda.is_built()} available={mt.cuda.is_available()}")
    x = mt.Tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    print("x =", x)
    print("x.softmax(dim=1) =", x.softmax(dim=1))
    print()
    start = time.perf_counter()
    ok = run_softmax_checks()
    print(f"\nsoftmax checks: {'all match NumPy' if ok else 'MISMATCHES FOUND'} "
          f"({time.perf_counter() - start:.2f} s)")

    print(f"\nMLP 2 -> {args.hidden} -> 3 (ReLU), Adam lr={args.lr}, on a three-class spiral of "
          f"{3 * args.points} points:")
    result = train_spiral(steps=args.steps, lr=args.lr, hidden=args.hidden, points_per_class=args.points,
                          batch_size=args.batch_size, device=args.device, seed=args.seed, plot=args.plot)
    trained = result["accuracy"] >= 0.95
    print(f"device {result['device']}: final loss {result['losses'][-1]:.4f}, training accuracy "
          f"{100 * result['accuracy']:.1f}% ({'ok' if trained else 'below 95%'}), "
          f"{len(result['losses'])} steps in {result['seconds']:.2f} s")
    return 0 if ok and trained else 1


if __name__ == "__main__":
    raise SystemExit(main())
