"""minitensor.nn: Module, Parameter, layers and losses, with PyTorch's names."""

from . import functional, init
from .layers import (Dropout, Embedding, LayerNorm, Linear, LogSoftmax, ModuleList, ReLU, Sequential, Sigmoid,
                     Softmax, Tanh)
from .losses import CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module
from .parameter import Parameter

__all__ = ["CrossEntropyLoss", "Dropout", "Embedding", "LayerNorm", "Linear", "ModuleList", "LogSoftmax", "MSELoss", "Module", "NLLLoss", "Parameter", "ReLU",
           "Sequential", "Sigmoid", "Softmax", "Tanh", "functional", "init"]
