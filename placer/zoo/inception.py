"""Inception-V3 as torchvision builds it, 299 x 299, 1000 classes, without the auxiliary head
(which only training uses and torchvision can switch off): 23,834,568 parameters
(torchvision's 27,161,264 minus the auxiliary head's 3,326,696), 5.71 GMACs forward.

Every BasicConv2d is three ops (conv, batchnorm, relu), every pooling and every block's
concatenation one op: 310 forward ops, which the training step turns into 808.
"""
from __future__ import annotations

from placer.zoo.layers import (
    avg_pool,
    concat,
    conv_bn_relu,
    global_avg_pool,
    linear,
    max_pool,
    softmax_cross_entropy,
)
from placer.zoo.network import Network, Tensor

__all__ = ["inception_v3"]

IMAGE_SIZE = 299
CLASSES = 1000


def _block_a(net: Network, name: str, x: Tensor, pool_features: int) -> Tensor:
    b1 = conv_bn_relu(net, f"{name}.branch1x1", x, 64, 1)
    b5 = conv_bn_relu(net, f"{name}.branch5x5_1", x, 48, 1)
    b5 = conv_bn_relu(net, f"{name}.branch5x5_2", b5, 64, 5, padding=2)
    b3 = conv_bn_relu(net, f"{name}.branch3x3dbl_1", x, 64, 1)
    b3 = conv_bn_relu(net, f"{name}.branch3x3dbl_2", b3, 96, 3, padding=1)
    b3 = conv_bn_relu(net, f"{name}.branch3x3dbl_3", b3, 96, 3, padding=1)
    bp = avg_pool(net, f"{name}.avg_pool", x, 3, 1, 1)
    bp = conv_bn_relu(net, f"{name}.branch_pool", bp, pool_features, 1)
    return concat(net, f"{name}.concat", [b1, b5, b3, bp])


def _block_b(net: Network, name: str, x: Tensor) -> Tensor:
    b3 = conv_bn_relu(net, f"{name}.branch3x3", x, 384, 3, stride=2)
    bd = conv_bn_relu(net, f"{name}.branch3x3dbl_1", x, 64, 1)
    bd = conv_bn_relu(net, f"{name}.branch3x3dbl_2", bd, 96, 3, padding=1)
    bd = conv_bn_relu(net, f"{name}.branch3x3dbl_3", bd, 96, 3, stride=2)
    bp = max_pool(net, f"{name}.max_pool", x, 3, 2)
    return concat(net, f"{name}.concat", [b3, bd, bp])


def _block_c(net: Network, name: str, x: Tensor, c7: int) -> Tensor:
    b1 = conv_bn_relu(net, f"{name}.branch1x1", x, 192, 1)
    b7 = conv_bn_relu(net, f"{name}.branch7x7_1", x, c7, 1)
    b7 = conv_bn_relu(net, f"{name}.branch7x7_2", b7, c7, (1, 7), padding=(0, 3))
    b7 = conv_bn_relu(net, f"{name}.branch7x7_3", b7, 192, (7, 1), padding=(3, 0))
    bd = conv_bn_relu(net, f"{name}.branch7x7dbl_1", x, c7, 1)
    bd = conv_bn_relu(net, f"{name}.branch7x7dbl_2", bd, c7, (7, 1), padding=(3, 0))
    bd = conv_bn_relu(net, f"{name}.branch7x7dbl_3", bd, c7, (1, 7), padding=(0, 3))
    bd = conv_bn_relu(net, f"{name}.branch7x7dbl_4", bd, c7, (7, 1), padding=(3, 0))
    bd = conv_bn_relu(net, f"{name}.branch7x7dbl_5", bd, 192, (1, 7), padding=(0, 3))
    bp = avg_pool(net, f"{name}.avg_pool", x, 3, 1, 1)
    bp = conv_bn_relu(net, f"{name}.branch_pool", bp, 192, 1)
    return concat(net, f"{name}.concat", [b1, b7, bd, bp])


def _block_d(net: Network, name: str, x: Tensor) -> Tensor:
    b3 = conv_bn_relu(net, f"{name}.branch3x3_1", x, 192, 1)
    b3 = conv_bn_relu(net, f"{name}.branch3x3_2", b3, 320, 3, stride=2)
    b7 = conv_bn_relu(net, f"{name}.branch7x7x3_1", x, 192, 1)
    b7 = conv_bn_relu(net, f"{name}.branch7x7x3_2", b7, 192, (1, 7), padding=(0, 3))
    b7 = conv_bn_relu(net, f"{name}.branch7x7x3_3", b7, 192, (7, 1), padding=(3, 0))
    b7 = conv_bn_relu(net, f"{name}.branch7x7x3_4", b7, 192, 3, stride=2)
    bp = max_pool(net, f"{name}.max_pool", x, 3, 2)
    return concat(net, f"{name}.concat", [b3, b7, bp])


def _block_e(net: Network, name: str, x: Tensor) -> Tensor:
    """torchvision concatenates the 1x3 / 3x1 pairs first and then the branches; one concat of
    the six leaves moves the same bytes into the same output."""
    b1 = conv_bn_relu(net, f"{name}.branch1x1", x, 320, 1)
    b3 = conv_bn_relu(net, f"{name}.branch3x3_1", x, 384, 1)
    b3a = conv_bn_relu(net, f"{name}.branch3x3_2a", b3, 384, (1, 3), padding=(0, 1))
    b3b = conv_bn_relu(net, f"{name}.branch3x3_2b", b3, 384, (3, 1), padding=(1, 0))
    bd = conv_bn_relu(net, f"{name}.branch3x3dbl_1", x, 448, 1)
    bd = conv_bn_relu(net, f"{name}.branch3x3dbl_2", bd, 384, 3, padding=1)
    bda = conv_bn_relu(net, f"{name}.branch3x3dbl_3a", bd, 384, (1, 3), padding=(0, 1))
    bdb = conv_bn_relu(net, f"{name}.branch3x3dbl_3b", bd, 384, (3, 1), padding=(1, 0))
    bp = avg_pool(net, f"{name}.avg_pool", x, 3, 1, 1)
    bp = conv_bn_relu(net, f"{name}.branch_pool", bp, 192, 1)
    return concat(net, f"{name}.concat", [b1, b3a, b3b, bda, bdb, bp])


def inception_v3() -> Network:
    """torchvision.models.inception_v3(aux_logits=False, init_weights=False)."""
    net = Network("inception_v3", "Inception-V3 (torchvision, no auxiliary head), 299x299, 1000 classes")
    x = net.input("images", (3, IMAGE_SIZE, IMAGE_SIZE))
    x = conv_bn_relu(net, "Conv2d_1a_3x3", x, 32, 3, stride=2)
    x = conv_bn_relu(net, "Conv2d_2a_3x3", x, 32, 3)
    x = conv_bn_relu(net, "Conv2d_2b_3x3", x, 64, 3, padding=1)
    x = max_pool(net, "maxpool1", x, 3, 2)
    x = conv_bn_relu(net, "Conv2d_3b_1x1", x, 80, 1)
    x = conv_bn_relu(net, "Conv2d_4a_3x3", x, 192, 3)
    x = max_pool(net, "maxpool2", x, 3, 2)
    x = _block_a(net, "Mixed_5b", x, 32)
    x = _block_a(net, "Mixed_5c", x, 64)
    x = _block_a(net, "Mixed_5d", x, 64)
    x = _block_b(net, "Mixed_6a", x)
    for name, c7 in (("Mixed_6b", 128), ("Mixed_6c", 160), ("Mixed_6d", 160), ("Mixed_6e", 192)):
        x = _block_c(net, name, x, c7)
    x = _block_d(net, "Mixed_7a", x)
    x = _block_e(net, "Mixed_7b", x)
    x = _block_e(net, "Mixed_7c", x)
    x = global_avg_pool(net, "avgpool", x)
    softmax_cross_entropy(net, "loss", [linear(net, "fc", x, CLASSES)])
    return net
