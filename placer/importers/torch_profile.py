"""Profiled op times for an imported PyTorch model (DLPlacer's profiled mode).

`profile_torch` runs the captured model once on a real device to get every node's inputs,
then times each op of the imported graph on its own: its forward call, its backward
(`torch.autograd.grad` of its outputs with respect to its floating-point inputs) for `.bwd`
ops, and one optimizer step over its parameters for `.update` ops. Each time is the median
of `repeat` runs after two warm-up runs, with the device synchronised around every run. The
op gets `time_ms` (the placer uses it instead of the analytic estimate) and keeps its
`flops` and `bytes_accessed`. Ops the importer folded away (views, shape arithmetic) are not
timed: they move no data. `ratios` compares the profiled times with the analytic roofline on
a reference device, per op kind.
"""
from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from placer.errors import InputError
from placer.export.plan import ExportPlan
from placer.export.timing import synchroniser, timed_runs_ms
from placer.export.torch_module import placed_module
from placer.importers.forward import Optimizer
from placer.importers.torch_capture import TorchCapture, require_torch
from placer.schema import DeviceSpec, OpSpec

__all__ = ["WARMUP_RUNS", "KindProfile", "profile_torch"]

WARMUP_RUNS = 2


@dataclass(frozen=True)
class KindProfile:
    """Profiled against analytic time for the ops of one kind (None without a reference device)."""

    kind: str
    ops: int
    profiled_ms: float
    analytic_ms: float | None

    @property
    def ratio(self) -> float | None:
        """profiled / analytic: above 1 the roofline is optimistic for this kind."""
        if not self.analytic_ms:
            return None
        return self.profiled_ms / self.analytic_ms


def _timer(torch: Any, device: Any, repeat: int) -> Callable[[Callable[[], Any]], float]:
    sync = synchroniser(torch, [str(device)])

    def median_ms(fn: Callable[[], Any]) -> float:
        return float(statistics.median(timed_runs_ms(fn, runs=repeat, warmup=WARMUP_RUNS, sync=sync)))

    return median_ms


def _node_values(capture: TorchCapture, device: str) -> dict[str, Any]:
    """Every call node's output from one run of the model on `device`, by node name."""
    import torch

    plan = ExportPlan(placement={op: "profile" for op in capture.op_ids.values()}, splits={},
                      devices=("profile",))
    module = placed_module(capture, plan, {"profile": device})
    values: dict[str, Any] = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n: Any) -> Any:
            out = super().run_node(n)
            values[n.name] = out
            return out

    inputs = [a.to(device) if isinstance(a, torch.Tensor) else a for a in capture.args]
    kwargs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in capture.kwargs.items()}
    flat = inputs + [kwargs[k] for k in capture.inputs[len(inputs):]]
    with torch.no_grad():
        Recorder(module).run(*flat)
    for node in module.graph.nodes:  # weights by their capture placeholder name
        if node.op == "get_attr":
            values.setdefault(node.target, values.get(node.name))
    return values


def profile_torch(
    capture: TorchCapture,
    document: dict[str, Any],
    *,
    device: str = "cpu",
    repeat: int = 5,
    optimizer: Optimizer = "adam",
    reference: DeviceSpec | None = None,
) -> list[KindProfile]:
    """Set `time_ms` on every op of `document` (from `import_torch(capture)`), in place.

    Returns, per op kind, the profiled time and the analytic time on `reference` (if given).
    """
    torch = require_torch()
    if repeat < 1:
        raise InputError(f"--repeat: expected at least 1 run, got {repeat}")
    try:
        target = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise InputError(f"--device {device!r}: not a torch device ({exc})") from None
    if target.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"--device {device!r}: CUDA is not available on this machine")
    values = _node_values(capture, device)
    median_ms = _timer(torch, target, repeat)
    nodes = {capture.op_ids[n.name]: n for n in capture.graph.nodes if n.op == "call_function"}
    ops = {op["id"]: op for op in document["ops"]}
    for op_id, op in ops.items():
        base, _, role = op_id.rpartition(".") if op_id.endswith((".bwd", ".update")) else (op_id, "", "")
        if role == "update":
            elements = _update_elements(op, optimizer)
            op["time_ms"] = _time_update(torch, target, median_ms, elements, optimizer)
            continue
        node = nodes.get(base)
        if node is None:
            raise InputError(f"op {op_id!r} is not a node of the captured model")
        if role == "bwd":
            args, kwargs = _arguments(torch, node, values, capture, differentiable=True)
            op["time_ms"] = _time_backward(torch, node, args, kwargs, median_ms)
        else:
            args, kwargs = _arguments(torch, node, values, capture)
            op["time_ms"] = median_ms(lambda f=node.target, a=args, k=kwargs: f(*a, **k))
    return _by_kind(document, reference)


def _arguments(torch: Any, node: Any, values: dict[str, Any], capture: TorchCapture,
               differentiable: bool = False) -> tuple[Any, Any]:
    """The node's recorded inputs; with `differentiable`, fresh leaves that require grad for its
    floating-point activations and parameters (not buffers: running statistics take none)."""
    def value(arg: Any) -> Any:
        found = values[capture.weights[arg.name]] if arg.name in capture.weights else values[arg.name]
        wants_grad = arg.name not in capture.weights or arg.name in capture.trainable
        if differentiable and wants_grad and isinstance(found, torch.Tensor) and found.is_floating_point():
            return found.detach().clone().requires_grad_(True)
        return found

    args = torch.fx.node.map_arg(node.args, value)
    kwargs = torch.fx.node.map_arg(node.kwargs, value)
    return args, kwargs


def _time_backward(torch: Any, node: Any, args: Any, kwargs: Any, median_ms: Callable[..., float]) -> float:
    leaves = [t for t in torch.utils._pytree.tree_leaves((args, kwargs))
              if isinstance(t, torch.Tensor) and t.requires_grad]
    with torch.enable_grad():
        out = node.target(*args, **kwargs)
    outs = [t for t in torch.utils._pytree.tree_leaves(out)
            if isinstance(t, torch.Tensor) and t.requires_grad]
    if not leaves or not outs:
        return 0.0  # nothing differentiable: its backward does no work
    grads = [torch.ones_like(t) for t in outs]
    return median_ms(lambda: torch.autograd.grad(outs, leaves, grads, retain_graph=True, allow_unused=True))


def _update_elements(op: dict[str, Any], optimizer: Optimizer) -> int:
    from placer.importers.forward import OPTIMIZERS

    flops_per_param = OPTIMIZERS[optimizer][0]
    return max(1, round(float(op.get("flops", 0.0)) / flops_per_param))


def _time_update(torch: Any, device: Any, median_ms: Callable[..., float], elements: int,
                 optimizer: Optimizer) -> float:
    weight = torch.nn.Parameter(torch.zeros(elements, device=device))
    weight.grad = torch.full_like(weight, 1e-3)
    step = {
        "sgd": lambda p: torch.optim.SGD(p, lr=1e-3, foreach=False),
        "momentum": lambda p: torch.optim.SGD(p, lr=1e-3, momentum=0.9, foreach=False),
        "adam": lambda p: torch.optim.Adam(p, lr=1e-3, foreach=False),
    }[optimizer]([weight])
    return median_ms(step.step)


def _by_kind(document: dict[str, Any], reference: DeviceSpec | None) -> list[KindProfile]:
    from placer.cost import op_time_ms

    profiled: dict[str, list[float]] = defaultdict(list)
    analytic: dict[str, float] = defaultdict(float)
    for op in document["ops"]:
        kind = op.get("kind") or "?"
        profiled[kind].append(op["time_ms"])
        if reference is not None:
            estimate = OpSpec(id=op["id"], flops=op.get("flops", 0.0), bytes_accessed=op.get("bytes_accessed"))
            analytic[kind] += op_time_ms(estimate, reference)
    return [
        KindProfile(kind=k, ops=len(v), profiled_ms=sum(v), analytic_ms=analytic[k] if reference else None)
        for k, v in sorted(profiled.items(), key=lambda kv: -sum(kv[1]))
    ]
