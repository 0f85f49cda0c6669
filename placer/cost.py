"""Op durations: profiled, or analytic (roofline) from the op's work and the device's rates.

Analytic mode is DLPlacer's "advertised capability" mode and SMSG's symbolic model:
time = max(flops / (peak * eff), bytes_accessed / (memory bandwidth * eff)). The graph
carries hardware-free quantities and the hardware file the rates, so one graph is
re-targeted to another machine without re-profiling. `efficiency` defaults to 1.0
(the advertised peak); set it per device to derate.
"""
from __future__ import annotations

from placer.errors import InvalidGraphError
from placer.schema import DeviceSpec, OpSpec

__all__ = ["op_time_ms"]


def op_time_ms(op: OpSpec, device: DeviceSpec) -> float:
    """Duration of `op` on `device` in milliseconds.

    >>> from placer.schema import OpSpec, DeviceSpec
    >>> gpu = DeviceSpec(id="g", peak_tflops=10.0, memory_bandwidth_gb_per_s=500.0)
    >>> op_time_ms(OpSpec(id="a", time_ms=1.5), gpu)
    1.5
    >>> op_time_ms(OpSpec(id="mm", flops=2e10), gpu)   # 2e10 / 1e13 s
    2.0
    >>> op_time_ms(OpSpec(id="add", flops=1e6, bytes_accessed=1e9), gpu)  # memory bound: 1e9 / 5e11 s
    2.0
    """
    if op.time_ms is not None:
        return op.time_ms
    assert op.flops is not None  # the schema guarantees time_ms or flops
    if device.peak_tflops is None:
        raise InvalidGraphError(
            f"op {op.id!r} is costed by flops but device {device.id!r} has no peak_tflops"
        )
    compute_s = op.flops / (device.peak_tflops * 1e12 * device.efficiency)
    memory_s = 0.0
    if op.bytes_accessed:
        if device.memory_bandwidth_gb_per_s is None:
            raise InvalidGraphError(
                f"op {op.id!r} gives bytes_accessed but device {device.id!r} has no memory_bandwidth_gb_per_s"
            )
        memory_s = op.bytes_accessed / (device.memory_bandwidth_gb_per_s * 1e9 * device.efficiency)
    return max(compute_s, memory_s) * 1e3
