"""`placer measure`: run a placed model and compare its step time with the plan's prediction.

A step is the forward pass, plus for a training plan the backward pass and, when the plan
has `.update` ops, one optimizer step. The measured step time is the median over `steps`
steps after `warmup` steps, with every CUDA device synchronised before and after each step.
The error is (measured - predicted) / measured, in percent, against the plan's makespan and
against the simulator's replay of it with link contention (when the result has one).
On one machine with one torch device per plan device (several GPUs) this checks the
prediction; with every plan device mapped to the same device (the CPU default) the ops run
one after another, so the measurement is the serial time of the step, not the plan's.
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any

from placer.errors import InputError
from placer.export.plan import ExportPlan, device_map
from placer.export.timing import synchroniser, timed_runs_ms
from placer.export.torch_module import placed_module
from placer.importers.forward import Optimizer
from placer.importers.torch_capture import TorchCapture, require_torch

__all__ = ["Measurement", "measure_plan"]


@dataclass(frozen=True)
class Measurement:
    """Measured against predicted step times, in ms; errors in percent of the measurement."""

    steps: int
    training: bool
    devices: dict[str, str]
    measured_ms: float
    min_ms: float
    max_ms: float
    predicted_ms: float | None
    simulated_ms: float | None
    serial: bool  # several plan devices share one torch device: the ops ran one after another

    @property
    def predicted_error_pct(self) -> float | None:
        return _error(self.predicted_ms, self.measured_ms)

    @property
    def simulated_error_pct(self) -> float | None:
        return _error(self.simulated_ms, self.measured_ms)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "predicted_error_pct": self.predicted_error_pct,
                "simulated_error_pct": self.simulated_error_pct}


def _error(predicted: float | None, measured: float) -> float | None:
    if predicted is None or measured <= 0:
        return None
    return 100.0 * (measured - predicted) / measured


def _optimizer(torch: Any, params: list[Any], optimizer: Optimizer) -> Any:
    if optimizer == "sgd":
        return torch.optim.SGD(params, lr=1e-3)
    if optimizer == "momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    return torch.optim.Adam(params, lr=1e-3)


def measure_plan(
    capture: TorchCapture,
    plan: ExportPlan,
    *,
    devices: dict[str, str] | None = None,
    steps: int = 10,
    warmup: int = 2,
    optimizer: Optimizer = "adam",
    simulated_ms: float | None = None,
) -> Measurement:
    """Run `steps` steps of the placed model on its example inputs and time them."""
    torch = require_torch()
    if steps < 1 or warmup < 0:
        raise InputError(f"--steps {steps}, --warmup {warmup}: expected at least one step and no negative warm-up")
    mapping = device_map(plan.devices, devices)
    for plan_device, torch_device in mapping.items():
        try:
            torch.device(torch_device)
        except (RuntimeError, TypeError) as exc:
            raise InputError(f"devices.{plan_device}: {torch_device!r} is not a torch device ({exc})") from None
        if torch_device.startswith("cuda") and not torch.cuda.is_available():
            raise InputError(f"devices.{plan_device}: {torch_device!r} but CUDA is not available here")
    module = placed_module(capture, plan, mapping)
    training = plan.training
    module.train(capture.model.training)
    first = mapping[next(iter(mapping))]
    args = [a.to(first) if isinstance(a, torch.Tensor) else a for a in capture.args]
    kwargs = {k: v.to(first) if isinstance(v, torch.Tensor) else v for k, v in capture.kwargs.items()}
    updates = training and any(op.endswith(".update") for op in plan.placement)
    opt = _optimizer(torch, [p for p in module.parameters() if p.requires_grad], optimizer) if updates else None
    def step() -> None:
        if not training:
            with torch.no_grad():
                module(*args, **kwargs)
            return
        out = module(*args, **kwargs)
        leaves = [t for t in torch.utils._pytree.tree_leaves(out)
                  if isinstance(t, torch.Tensor) and t.requires_grad]
        if not leaves:
            raise InputError("the model's outputs need no gradient: a training plan cannot be measured on it")
        torch.autograd.backward([t.float().sum() for t in leaves])
        if opt is not None:
            opt.step()
            opt.zero_grad(set_to_none=True)

    runs = timed_runs_ms(step, runs=steps, warmup=warmup, sync=synchroniser(torch, list(mapping.values())))
    serial = len(set(mapping.values())) < len(mapping)
    return Measurement(
        steps=steps, training=training, devices=mapping, measured_ms=float(statistics.median(runs)),
        min_ms=min(runs), max_ms=max(runs), predicted_ms=plan.makespan_ms,
        simulated_ms=simulated_ms if simulated_ms is not None else plan.simulated_ms, serial=serial,
    )
