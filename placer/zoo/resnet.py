"""ResNet-50 as torchvision builds it (v1.5: the stride sits on the 3x3 convolution of the
bottleneck), 224 x 224, 1000 classes: 25,557,032 parameters, 4.09 GMACs forward."""
from __future__ import annotations

from placer.zoo.layers import (
    add,
    batchnorm,
    conv2d,
    global_avg_pool,
    linear,
    max_pool,
    relu,
    softmax_cross_entropy,
)
from placer.zoo.network import Network, Tensor

__all__ = ["resnet50"]

IMAGE_SIZE = 224
CLASSES = 1000
STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))  # (width, blocks, first stride)
EXPANSION = 4


def _bottleneck(net: Network, name: str, x: Tensor, width: int, stride: int) -> Tensor:
    y = relu(net, f"{name}.relu1", batchnorm(net, f"{name}.bn1", conv2d(net, f"{name}.conv1", x, width, 1)))
    y = conv2d(net, f"{name}.conv2", y, width, 3, stride, 1)
    y = relu(net, f"{name}.relu2", batchnorm(net, f"{name}.bn2", y))
    y = batchnorm(net, f"{name}.bn3", conv2d(net, f"{name}.conv3", y, width * EXPANSION, 1))
    shortcut = x
    if stride != 1 or x.shape[0] != width * EXPANSION:
        shortcut = conv2d(net, f"{name}.downsample.conv", x, width * EXPANSION, 1, stride)
        shortcut = batchnorm(net, f"{name}.downsample.bn", shortcut)
    return relu(net, f"{name}.relu3", add(net, f"{name}.add", y, shortcut))


def resnet50() -> Network:
    """torchvision.models.resnet50."""
    net = Network("resnet50", "ResNet-50 (torchvision, v1.5), 224x224, 1000 classes")
    x = net.input("images", (3, IMAGE_SIZE, IMAGE_SIZE))
    x = relu(net, "relu", batchnorm(net, "bn1", conv2d(net, "conv1", x, 64, 7, 2, 3)))
    x = max_pool(net, "maxpool", x, 3, 2, 1)
    for stage, (width, blocks, stride) in enumerate(STAGES, start=1):
        for block in range(blocks):
            x = _bottleneck(net, f"layer{stage}.{block}", x, width, stride if block == 0 else 1)
    x = global_avg_pool(net, "avgpool", x)
    softmax_cross_entropy(net, "loss", [linear(net, "fc", x, CLASSES)])
    return net
