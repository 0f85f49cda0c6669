"""A small Inception-style CNN for the README's PyTorch path: import, solve, export, run, measure.

`build()` returns the model in training mode and one batch of example inputs, as
`placer import torch`, `placer export torch` and `placer measure` expect.
"""
import torch
from torch import nn


class Block(nn.Module):
    """Three parallel branches (1x1, 3x3, 5x5) concatenated, then batch norm and ReLU."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.one = nn.Conv2d(channels, channels, 1)
        self.three = nn.Conv2d(channels, channels, 3, padding=1)
        self.five = nn.Conv2d(channels, channels, 5, padding=2)
        self.mix = nn.Conv2d(3 * channels, channels, 1)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        branches = torch.cat([self.one(x), self.three(x), self.five(x)], dim=1)
        return torch.relu(self.bn(self.mix(branches))) + x


class BranchyCNN(nn.Module):
    def __init__(self, channels: int = 64, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.blocks = nn.Sequential(Block(channels), Block(channels))
        self.head = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.blocks(torch.relu(self.stem(x)))
        return self.head(h.mean(dim=(2, 3)))


def build():
    torch.manual_seed(0)
    return BranchyCNN().train(), (torch.randn(32, 3, 16, 16),)
