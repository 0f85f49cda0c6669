"""A plan applied to a captured PyTorch model: a torch.fx GraphModule that runs it.

Built from the same capture the importer uses (placer.importers.torch_capture), so the plan's
op ids name the nodes it runs. The placed graph:

- runs every call node on a device: its op's planned device; a node the importer folded away
  (views, getitem, shape arithmetic, buffer updates) runs where its first activation input
  lives, or where the weight it reads lives, or else where its first consumer runs;
- keeps each parameter and buffer on the device of the op that owns it (its first reader, as
  the importer charges its memory) and copies it to any other device that reads it;
- inserts `tensor.to(device)` wherever a tensor crosses devices: the plan's transfers (one copy
  per tensor and destination device, shared by every consumer there);
- runs a split op as its tasks (placer.export.torch_split: sample, channel, input_channel and
  heads); each task runs on its device and the outputs are combined on the first task's device.

Training: the module is the forward pass; autograd runs the backward of each op on the device
of that op's tensors, which is where the plan puts its `.bwd` twin (the importer colocates
them in one group), and the gradient of a copied tensor flows back over the same copy. Weight
gradients therefore accumulate on the owner's device, where the plan's `.update` op runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from placer.errors import InputError
from placer.export.plan import ExportPlan
from placer.export.torch_split import SplitNotExported, emit_split, split_rule
from placer.importers.torch_capture import TorchCapture

__all__ = ["DEVICE_ATTR", "PlacedGraph", "PlanExportError", "place_graph", "placed_module"]

DEVICE_ATTR = "placer_device_{index}"  # module attribute holding the torch.device of plan device `index`


class PlanExportError(InputError):
    """The plan cannot be applied to this model: unknown ops, or a split the exporter cannot run."""

    code = "plan_not_exportable"


@dataclass(frozen=True)
class PlacedGraph:
    """The placed torch.fx graph and what a module running it must hold.

    `weights`: attribute target (the model's qualified name) -> (placeholder name, plan device);
    `devices`: the plan's devices, in the order of their `placer_device_<i>` attributes.
    """

    graph: Any
    weights: dict[str, tuple[str, str]]
    devices: tuple[str, ...]


def _is_tensor(node: Any) -> bool:
    value = node.meta.get("val") if hasattr(node, "meta") else None
    return hasattr(value, "shape") and hasattr(value, "device")


class _Devices:
    """Which plan device each node of the captured graph runs on."""

    def __init__(self, capture: TorchCapture, plan: ExportPlan) -> None:
        self.capture = capture
        self.plan = plan
        self.nodes = {n.name: n for n in capture.graph.nodes}
        self.memo: dict[str, str] = {}

    def planned(self, node: Any) -> str | None:
        op = self.capture.op_ids.get(node.name)
        return self.plan.placement.get(op) if op is not None else None

    def weight(self, name: str) -> str:
        owner = self.capture.owners.get(name)
        if owner is None:
            return self.plan.devices[0]
        return self.of(self.nodes[owner], skip_weight=name)

    def of(self, node: Any, skip_weight: str | None = None) -> str:
        if node.name in self.memo:
            return self.memo[node.name]
        device = self.planned(node)
        if device is None:
            device = self._inherited(node, skip_weight)
        self.memo[node.name] = device
        return device

    def _inherited(self, node: Any, skip_weight: str | None) -> str:
        inputs = node.all_input_nodes
        activations = [a for a in inputs if a.op == "call_function" or
                       (a.op == "placeholder" and a.name not in self.capture.weights)]
        for a in activations:
            if a.op == "call_function":
                return self.of(a)
        for a in inputs:
            if a.name in self.capture.weights and a.name != skip_weight and \
                    self.capture.owners.get(a.name) != node.name:
                return self.weight(a.name)
        return self._downstream(node)

    def _downstream(self, node: Any) -> str:
        """Where the nearest planned consumer runs (a factory op such as zeros, or a lone input)."""
        seen, todo = set(), list(node.users)
        while todo:
            user = todo.pop(0)
            if user.name in seen or user.op != "call_function":
                continue
            seen.add(user.name)
            device = self.planned(user)
            if device is not None:
                return device
            todo.extend(user.users)
        return self.plan.devices[0]


def _check_ops(capture: TorchCapture, plan: ExportPlan) -> None:
    known = set(capture.op_ids.values())
    stray = []
    for op in plan.placement:
        base = op
        for suffix in (".bwd", ".update"):
            if op.endswith(suffix):
                base = op[: -len(suffix)]
        if base not in known:
            stray.append(op)
    if stray:
        listed = ", ".join(map(repr, sorted(stray)[:5]))
        raise PlanExportError(
            f"plan: op(s) {listed}{' ...' if len(stray) > 5 else ''} are not ops of this model "
            f"(was the plan made from `placer import torch` of the same source?)")
    placed = [op for op in capture.op_ids.values() if op in plan.placement]
    if not placed:
        raise PlanExportError("plan: it places none of this model's ops")


def place_graph(capture: TorchCapture, plan: ExportPlan) -> PlacedGraph:
    """The captured graph with devices, copies and split tasks per the plan."""
    import torch
    from torch import fx

    _check_ops(capture, plan)
    devices = _Devices(capture, plan)
    index = {d: i for i, d in enumerate(plan.devices)}
    graph = fx.Graph()
    env: dict[str, Any] = {}  # captured node name -> node of the placed graph
    where: dict[str, str] = {}  # captured node name -> plan device of its value
    device_nodes: dict[str, Any] = {}
    moves: dict[tuple[str, str], Any] = {}
    weights: dict[str, tuple[str, str]] = {}
    split_of = {node: plan.splits[op] for node, op in capture.op_ids.items() if op in plan.splits}

    def device_node(device: str) -> Any:
        if device not in device_nodes:
            device_nodes[device] = graph.get_attr(DEVICE_ATTR.format(index=index[device]))
        return device_nodes[device]

    def on(arg: Any, device: str | None) -> Any:
        """arg's value on `device`: itself, or one shared copy made there (None: where it is)."""
        if not isinstance(arg, fx.Node) or not _is_tensor(arg) or device in (None, where[arg.name]):
            return env[arg.name] if isinstance(arg, fx.Node) else arg
        key = (arg.name, device)
        if key not in moves:
            moves[key] = graph.call_method("to", (env[arg.name], device_node(device)))
        return moves[key]

    def args_on(node: Any, device: str) -> tuple[Any, dict[str, Any]]:
        args = fx.node.map_arg(node.args, lambda a: on(a, device))
        kwargs = fx.node.map_arg(node.kwargs, lambda a: on(a, device))
        if isinstance(kwargs.get("device"), torch.device):
            kwargs = {**kwargs, "device": device_node(device)}
        return args, kwargs

    for node in capture.graph.nodes:
        if node.op == "placeholder":
            if node.name in capture.weights:
                target = capture.weights[node.name]
                device = devices.weight(node.name)
                weights[target] = (node.name, device)
                env[node.name] = graph.get_attr(target)
            elif node.name in capture.inputs:
                device = devices.of(node) if node.users else plan.devices[0]
                env[node.name] = graph.placeholder(node.name)
                if _is_tensor(node):  # wherever the caller's tensor is, to its first consumer's device
                    env[node.name] = graph.call_method("to", (env[node.name], device_node(device)))
            else:
                continue  # an unused twin of a tied weight
            where[node.name] = device
        elif node.op == "call_function":
            if node.name in split_of:
                split = split_of[node.name]
                try:
                    rule = split_rule(node, split, capture)
                    env[node.name] = emit_split(graph, node, split, rule, where, on, device_node)
                except SplitNotExported as exc:
                    raise PlanExportError(f"splits.{capture.op_ids[node.name]}: {exc}") from None
                where[node.name] = split.devices[0]
                continue
            device = devices.of(node)
            args, kwargs = args_on(node, device)
            new = graph.call_function(node.target, args, kwargs)
            new.name = node.name
            new.meta["val"] = node.meta.get("val")
            env[node.name] = new
            where[node.name] = device
        elif node.op == "output":
            graph.output(_outputs(capture, node, env))
    graph.lint()
    return PlacedGraph(graph=graph, weights=weights, devices=plan.devices)


def _outputs(capture: TorchCapture, node: Any, env: dict[str, Any]) -> Any:
    """The user outputs in the model's own structure (tuple, list, dict or a single tensor)."""
    from torch import fx
    from torch.export.graph_signature import OutputKind

    specs = capture.exported.graph_signature.output_specs
    flat = list(node.args[0])
    leaves = []
    for spec, value in zip(specs, flat):
        if spec.kind == OutputKind.USER_OUTPUT:
            leaves.append(fx.node.map_arg(value, lambda a: env[a.name]))
        elif spec.kind not in (OutputKind.BUFFER_MUTATION,):
            raise PlanExportError(f"the captured model has a {spec.kind.name.lower()} output, "
                                  "which the exporter does not write back")
        elif isinstance(value, fx.Node):  # in-place training IR keeps these rare
            raise PlanExportError(f"the captured model mutates buffer {spec.target!r} functionally, "
                                  "which the exporter does not write back")
    return _unflatten(capture.exported.call_spec.out_spec, iter(leaves))


def _unflatten(spec: Any, leaves: Any) -> Any:
    if spec.is_leaf():
        return next(leaves)
    kids = spec.children() if hasattr(spec, "children") else spec.children_specs
    children = [_unflatten(child, leaves) for child in kids]
    if spec.type is list:
        return children
    if spec.type is dict or (isinstance(spec.type, type) and issubclass(spec.type, dict)):
        return dict(zip(spec.context, children))
    return tuple(children)


def placed_module(capture: TorchCapture, plan: ExportPlan, devices: dict[str, str] | None = None,
                  model: Any = None) -> Any:
    """The plan applied to the captured model, in process: a torch.fx GraphModule.

    `devices` maps plan device ids to torch devices (default: all 'cpu'); the module holds
    copies of `model`'s parameters and buffers (default: the captured model's), each on the
    device of the op that owns it.
    """
    import torch

    from placer.export.plan import device_map

    mapping = device_map(plan.devices, devices)
    placed = place_graph(capture, plan)
    source = capture.model if model is None else model
    state = dict(getattr(capture.exported, "constants", {}) or {})  # tensors made in forward
    state.update(source.named_parameters(remove_duplicate=False))
    state.update(source.named_buffers(remove_duplicate=False))
    root: dict[str, Any] = {}
    for target, (_, device) in placed.weights.items():
        if target not in state:
            raise PlanExportError(f"the model has no parameter or buffer {target!r}")
        value = state[target].detach().to(mapping[device], copy=True)
        is_param = isinstance(state[target], torch.nn.Parameter)
        root[target] = torch.nn.Parameter(value, requires_grad=state[target].requires_grad) if is_param else value
    for i, device in enumerate(placed.devices):
        root[DEVICE_ATTR.format(index=i)] = torch.device(mapping[device])
    return torch.fx.GraphModule(root, placed.graph, class_name="PlacedModule")
