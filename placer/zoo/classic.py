"""AlexNet and VGG-16 as torchvision builds them (ImageNet, 224 x 224, 1000 classes).

AlexNet is torchvision's single-tower variant (64-192-384-256-256 channels, 61,100,840
parameters), not the original two-GPU network of Krizhevsky et al. (60,965,224 parameters).
Dropout is left out (its cost is negligible and it has no parameters); the adaptive average
pools are identities at 224 x 224 and are left out too.
"""
from __future__ import annotations

from placer.zoo.layers import conv2d, linear, max_pool, relu, softmax_cross_entropy
from placer.zoo.network import Network, Tensor

__all__ = ["alexnet", "vgg16"]

IMAGE_SIZE = 224
CLASSES = 1000
VGG16_CONFIG = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")


def _classifier(net: Network, x: Tensor, widths: tuple[int, ...]) -> Tensor:
    for i, width in enumerate(widths):
        x = linear(net, f"classifier.fc{i + 1}", x, width)
        if i + 1 < len(widths):
            x = relu(net, f"classifier.relu{i + 1}", x)
    return softmax_cross_entropy(net, "loss", [x])


def alexnet() -> Network:
    """torchvision.models.alexnet."""
    net = Network("alexnet", "AlexNet (torchvision variant), 224x224, 1000 classes")
    x = net.input("images", (3, IMAGE_SIZE, IMAGE_SIZE))
    specs = [  # (channels, kernel, stride, padding, pool after)
        (64, 11, 4, 2, True),
        (192, 5, 1, 2, True),
        (384, 3, 1, 1, False),
        (256, 3, 1, 1, False),
        (256, 3, 1, 1, True),
    ]
    for i, (channels, kernel, stride, padding, pool) in enumerate(specs, start=1):
        x = conv2d(net, f"features.conv{i}", x, channels, kernel, stride, padding, bias=True)
        x = relu(net, f"features.relu{i}", x)
        if pool:
            x = max_pool(net, f"features.pool{i}", x, 3, 2)
    x = x.view(x.elements)  # flatten 256 x 6 x 6
    _classifier(net, x, (4096, 4096, CLASSES))
    return net


def vgg16() -> Network:
    """torchvision.models.vgg16 (configuration D, no batch norm)."""
    net = Network("vgg16", "VGG-16 (configuration D), 224x224, 1000 classes")
    x = net.input("images", (3, IMAGE_SIZE, IMAGE_SIZE))
    block, index = 1, 1
    for item in VGG16_CONFIG:
        if item == "M":
            x = max_pool(net, f"features.block{block}.pool", x, 2, 2)
            block, index = block + 1, 1
            continue
        x = conv2d(net, f"features.block{block}.conv{index}", x, item, 3, 1, 1, bias=True)
        x = relu(net, f"features.block{block}.relu{index}", x)
        index += 1
    x = x.view(x.elements)  # flatten 512 x 7 x 7
    _classifier(net, x, (4096, 4096, CLASSES))
    return net
