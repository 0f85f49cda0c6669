"""A forward network described per sample: layers, the tensors between them, and who owns which
parameters. `placer.zoo.training` turns one into a training-step graph for a batch size.

Everything here is per sample (one image, one sentence), so a batch size multiplies
activations and FLOPs and leaves parameters alone. Tensors are FP32 (4 bytes per element);
token ids are int32, also 4 bytes.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["ELEMENT_BYTES", "INPUT_KIND", "Layer", "Network", "Tensor"]

ELEMENT_BYTES = 4  # FP32 activations and weights, int32 token ids
INPUT_KIND = "input"
_RESERVED_SUFFIXES = (".bwd", ".update")


@dataclass(frozen=True)
class Tensor:
    """A tensor produced by layer `producer`, per sample. A consumer may take a slice or a view
    of a layer's output (an LSTM's final state, BERT's [CLS] row): it builds a Tensor with the
    same producer and the shape it really reads, and the edge carries that many bytes."""

    producer: str
    shape: tuple[int, ...]

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    def view(self, *shape: int) -> Tensor:
        """The part of this tensor a consumer reads (same producer, another shape)."""
        return Tensor(self.producer, tuple(shape))


@dataclass(frozen=True)
class Layer:
    """One forward op. FLOPs and activation bytes are per sample; weight figures are per step.

    `weight_elements` is the size of the parameters this layer computes a gradient for (0: none);
    `weight_bytes_read` is what one forward call streams from those parameters (an LSTM reads
    its weights once per time step; an embedding reads only the looked-up rows, which scale with
    the batch and sit in `activation_bytes`).
    """

    name: str
    kind: str
    inputs: tuple[Tensor, ...]
    output: Tensor
    flops: float
    activation_bytes: int
    saved_elements: int
    group: str | None
    weight_elements: int = 0
    weight_bytes_read: int = 0
    backward_flops: float | None = None
    backward_factor: float | None = None

    @property
    def has_weights(self) -> bool:
        return self.weight_elements > 0

    @property
    def has_backward(self) -> bool:
        return self.kind != INPUT_KIND

    @property
    def grad_factor(self) -> float:
        """Backward cost over forward cost: 2 with weights (input gradient + weight gradient),
        1 without, unless the layer says otherwise."""
        if self.backward_factor is not None:
            return self.backward_factor
        return 2.0 if self.has_weights else 1.0

    @property
    def grad_flops(self) -> float:
        """Backward FLOPs per sample."""
        return self.backward_flops if self.backward_flops is not None else self.grad_factor * self.flops


@dataclass
class Network:
    """A forward network under construction, layers kept in creation (topological) order."""

    name: str
    description: str = ""
    layers: dict[str, Layer] = field(default_factory=dict)
    group_parameters: dict[str, int] = field(default_factory=dict)

    # ------------------------------------------------------------------ building

    def input(self, name: str, shape: Sequence[int]) -> Tensor:
        """A data source (images, token ids): no backward, no parameters; it holds the batch."""
        out = Tensor(name, tuple(shape))
        self._add(Layer(name=name, kind=INPUT_KIND, inputs=(), output=out, flops=0.0,
                        activation_bytes=out.elements * ELEMENT_BYTES, saved_elements=out.elements,
                        group=None))
        return out

    def parameters(self, group: str, count: int) -> None:
        """Declare `count` parameters owned by `group` (weights shared by several layers)."""
        if count < 0:
            raise ValueError(f"{self.name}: group {group!r}: negative parameter count")
        self.group_parameters[group] = self.group_parameters.get(group, 0) + count

    def layer(
        self,
        name: str,
        kind: str,
        inputs: Sequence[Tensor],
        out_shape: Sequence[int],
        flops: float,
        *,
        params: int = 0,
        group: str | None = None,
        weights: int | None = None,
        weight_bytes_read: int | None = None,
        activation_bytes: int | None = None,
        saved_elements: int | None = None,
        backward_flops: float | None = None,
        backward_factor: float | None = None,
    ) -> Tensor:
        """Add a forward layer and return its output.

        `params` declares parameters the layer owns (its group defaults to its name); `weights`
        is how many parameter elements it computes gradients for (default `params`; set it for a
        layer that uses a shared group's weights). Activation bytes default to inputs read plus
        output written; saved elements (kept for backward) default to the output.
        """
        group = group or name
        if params:
            self.parameters(group, params)
        weights = params if weights is None else weights
        if weights and self.group_parameters.get(group, 0) == 0:
            raise ValueError(f"{self.name}: layer {name!r} uses weights but group {group!r} owns none")
        out = Tensor(name, tuple(out_shape))
        if activation_bytes is None:
            activation_bytes = (sum(t.elements for t in inputs) + out.elements) * ELEMENT_BYTES
        if weight_bytes_read is None:
            weight_bytes_read = weights * ELEMENT_BYTES
        self._add(Layer(
            name=name, kind=kind, inputs=tuple(inputs), output=out, flops=float(flops),
            activation_bytes=int(activation_bytes),
            saved_elements=out.elements if saved_elements is None else int(saved_elements),
            group=group, weight_elements=int(weights), weight_bytes_read=int(weight_bytes_read),
            backward_flops=backward_flops, backward_factor=backward_factor,
        ))
        return out

    def _add(self, layer: Layer) -> None:
        if layer.name in self.layers:
            raise ValueError(f"{self.name}: duplicate layer name {layer.name!r}")
        if layer.name.endswith(_RESERVED_SUFFIXES):
            raise ValueError(f"{self.name}: layer name {layer.name!r} ends with a reserved suffix")
        for t in layer.inputs:
            if t.producer not in self.layers:
                raise ValueError(f"{self.name}: layer {layer.name!r} reads unknown layer {t.producer!r}")
        self.layers[layer.name] = layer

    # ------------------------------------------------------------------ totals

    @property
    def parameter_count(self) -> int:
        """Trainable parameters, each counted once however many layers share it."""
        return sum(self.group_parameters.values())

    def forward_flops(self, batch: int = 1) -> float:
        """FLOPs of one forward pass over `batch` samples."""
        return batch * sum(layer.flops for layer in self.layers.values())

    def flops_of_kind(self, *kinds: str, batch: int = 1) -> float:
        """Forward FLOPs of the layers of the given kinds."""
        return batch * sum(layer.flops for layer in self.layers.values() if layer.kind in kinds)
