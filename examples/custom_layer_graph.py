"""A custom layer graph: a residual MLP block followed by a small attention-like softmax layer,
trained for a few steps with Adam to map each row of a sequence to the row-sum of its neighbours.

    python examples/custom_layer_graph.py
"""

from __future__ import annotations

import math

import minitensor as mt
from minitensor import nn
from minitensor.nn import functional as F


class ResidualBlock(nn.Module):
    """x + W2 relu(W1 x): the identity path lets gradients skip the block."""

    def __init__(self, width: int, hidden: int) -> None:
        super().__init__()
        self.expand = nn.Linear(width, hidden)
        self.project = nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.project(self.expand(x).relu())


class SoftmaxAttention(nn.Module):
    """softmax(q k^T / sqrt(d)) v over the rows of one sequence (batched with matmul)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.query, self.key, self.value = nn.Linear(width, width), nn.Linear(width, width), nn.Linear(width, width)
        self.scale = 1.0 / math.sqrt(width)

    def forward(self, x):  # x: (batch, rows, width)
        scores = self.query(x) @ self.key(x).transpose(1, 2) * self.scale
        return scores.softmax(-1) @ self.value(x)


class Model(nn.Module):
    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.embed = nn.Linear(1, width)
        self.block = ResidualBlock(width, 4 * width)
        self.attention = SoftmaxAttention(width)
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        h = self.block(self.embed(x))
        return self.head(h + self.attention(h))


def main() -> None:
    mt.manual_seed(0)
    device = "cuda" if mt.cuda.is_available() else "cpu"
    model = Model().to(device)
    print(model)
    optimizer = mt.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(1, 201):
        x = mt.randn(16, 6, 1, device=device)          # 16 sequences of 6 numbers
        target = x.sum(1, keepdim=True).expand(16, 6, 1)  # every row should predict the sequence sum
        loss = F.mse_loss(model(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step == 1 or step % 50 == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
