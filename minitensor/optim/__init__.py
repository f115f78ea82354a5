"""minitensor.optim: SGD and Adam with PyTorch's update rules; steps update parameters in place."""

from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Adam", "AdamW", "Optimizer", "SGD"]
