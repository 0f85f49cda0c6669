"""One capture of a PyTorch model, shared by the importer, the profiler and the exporter.

`capture_torch` loads `FILE.py:callable` (or takes a `(model, inputs)` tuple), runs
`torch.export.export(..., strict=False)` once and names every call node with the op id the
importer gives it: the node's module path and its aten name (`layers.0.self_attn/linear`).
Because import, profile and export all read op ids from here, a plan's op ids name the same
nodes that the exported module runs. It also decides which op owns each parameter and buffer:
its first reader, except that an in-place buffer update reading nothing but weights (BatchNorm's
`num_batches_tracked += 1`) is folded into the module that owns the buffer instead of
becoming an op of its own. Needs torch (`pip install 'placer[torch]'`).
"""
from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from placer.errors import InputError
from placer.importers.forward import unique_id

__all__ = ["TorchCapture", "capture_torch", "load_source", "require_torch"]


def require_torch() -> Any:
    """The torch module, or an InputError naming the extra to install."""
    try:
        import torch
    except ImportError:
        raise InputError("this needs PyTorch, which is not installed: pip install 'placer[torch]'") from None
    return torch


@dataclass(frozen=True)
class TorchCapture:
    """A model, its example inputs and its torch.export capture, with placer's names for it.

    `op_ids` maps every call_function node name to its op id; `owners` maps every weight
    placeholder (parameter, buffer, lifted constant) to the node name of the op that holds it;
    `weights` maps those placeholders to their fully qualified names in the model
    (`layers.0.linear1.weight`) and `trainable` lists the parameters among them;
    `buffer_updates` are the nodes folded into their buffer's owner (they cost nothing);
    `inputs` are the placeholders of the user's inputs, in call order (args, then kwargs).
    """

    model: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    exported: Any
    name: str
    op_ids: dict[str, str]
    owners: dict[str, str]
    weights: dict[str, str]
    trainable: frozenset[str]
    buffer_updates: frozenset[str]
    inputs: tuple[str, ...] = ()

    @property
    def graph(self) -> Any:
        """The captured torch.fx Graph."""
        return self.exported.graph


def load_source(spec: str) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """Call `module:callable` or `file.py:callable` and normalise what it returns."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"torch source {spec!r}: expected MODULE:CALLABLE or FILE.py:CALLABLE")
    try:
        if module_name.endswith(".py") or Path(module_name).is_file():
            path = Path(module_name)
            if not path.is_file():
                raise InputError(f"torch source {spec!r}: no such file {path}")
            unique = f"_placer_import_{abs(hash(str(path.resolve())))}"
            module_spec = importlib.util.spec_from_file_location(unique, path)
            if module_spec is None or module_spec.loader is None:
                raise InputError(f"torch source {spec!r}: cannot load {path} as a module")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[unique] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(
            f"torch source {spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
        ) from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise InputError(f"torch source {spec!r}: {module_name} has no callable {attr!r}")
    try:
        made = factory()
    except Exception as exc:
        raise InputError(f"torch source {spec!r}: {attr}() failed: {type(exc).__name__}: {exc}") from None
    return normalise(made, spec)


def normalise(made: Any, what: str) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """(model, args, kwargs) from (model, inputs) or (model, args, kwargs)."""
    if not isinstance(made, (tuple, list)) or len(made) not in (2, 3):
        raise InputError(f"torch source {what!r}: expected (model, example_inputs) or (model, args, kwargs)")
    model = made[0]
    if len(made) == 3:
        return model, tuple(made[1]), dict(made[2])
    inputs = made[1]
    if isinstance(inputs, dict):
        return model, (), dict(inputs)
    if isinstance(inputs, (tuple, list)):
        return model, tuple(inputs), {}
    return model, (inputs,), {}


def module_path(node: Any) -> str:
    """The fully qualified name of the innermost module that called this node ('' at the top)."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    return str(list(stack.values())[-1][0])


def _op_id(node: Any, taken: set[str]) -> str:
    """`path/name` with the graph-wide counter dropped from the name (`fc2/linear`, not
    `fc2/linear_1`); a second op of that kind in the same module gets `_2`, `_3`, ..."""
    path = module_path(node)
    if not path:
        return unique_id(node.name, taken)
    return unique_id(f"{path}/{re.sub(r'_[0-9]+$', '', node.name)}", taken)


def capture_torch(source: str | tuple[Any, ...], name: str | None = None) -> TorchCapture:
    """Load and export the model once; name its nodes and the owners of its weights."""
    torch = require_torch()
    if isinstance(source, str):
        model, args, kwargs = load_source(source)
        default_name = source.rpartition(":")[2]
    else:
        model, args, kwargs = normalise(source, "(model, inputs)")
        default_name = type(model).__name__
    if not isinstance(model, torch.nn.Module):
        raise InputError(f"torch source: expected a torch.nn.Module, got {type(model).__name__}")
    try:
        with warnings.catch_warnings():  # export's advice to model authors is noise here
            warnings.simplefilter("ignore")
            exported = torch.export.export(model, args, kwargs=kwargs, strict=False)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise InputError(f"torch.export could not capture the model: {type(exc).__name__}: {first}") from None

    signature = exported.graph_signature
    weights: dict[str, str] = dict(signature.inputs_to_parameters)
    weights.update(signature.inputs_to_buffers)
    weights.update(getattr(signature, "inputs_to_lifted_tensor_constants", {}) or {})
    # a tied weight has one placeholder (with one of its names) and unused twins: keep the used
    # ones, under the name the model's own named_parameters() gives that tensor
    used = {n.name for n in exported.graph.nodes if n.op == "placeholder" and n.users}
    canonical = _canonical_names(model)
    weights = {p: canonical.get(fqn, fqn) for p, fqn in weights.items() if p in used}
    taken: set[str] = set()
    op_ids: dict[str, str] = {}
    calls = [n for n in exported.graph.nodes if n.op == "call_function"]
    updates = frozenset(n.name for n in calls if _is_buffer_update(n, weights))
    for node in calls:
        op_ids[node.name] = _op_id(node, taken)
    owners: dict[str, str] = {}
    for node in calls:
        for arg in node.all_input_nodes:
            if arg.name in weights and arg.name not in owners and node.name not in updates:
                owners[arg.name] = node.name
    for node in calls:  # weights read only by buffer updates: the module's next (or last) op
        if node.name not in updates:
            continue
        path = module_path(node)
        same_module = [n for n in calls if n.name not in updates and module_path(n) == path]
        later = [n for n in same_module if calls.index(n) > calls.index(node)]
        heir = (later or same_module or [node])[0]
        for arg in node.all_input_nodes:
            if arg.name in weights and arg.name not in owners:
                owners[arg.name] = heir.name
    return TorchCapture(
        model=model, args=args, kwargs=kwargs, exported=exported, name=name or default_name,
        op_ids=op_ids, owners=owners, weights=weights,
        trainable=frozenset(p for p in signature.inputs_to_parameters if p in weights), buffer_updates=updates,
        inputs=tuple(signature.user_inputs),
    )


def _canonical_names(model: Any) -> dict[str, str]:
    """Every name of a parameter or buffer -> the first name the model lists it under."""
    first: dict[int, str] = {}
    names: dict[str, str] = {}
    tensors = list(model.named_parameters(remove_duplicate=False)) + list(model.named_buffers(remove_duplicate=False))
    for name, tensor in tensors:
        names[name] = first.setdefault(id(tensor), name)
    return names


def _is_buffer_update(node: Any, weights: dict[str, str]) -> bool:
    """An in-place op (name ending in `_`) whose tensor inputs are all weights and buffers."""
    schema = getattr(node.target, "_schema", None)
    mutates = schema is not None and any(
        a.alias_info is not None and a.alias_info.is_write for a in schema.arguments
    )
    inputs = node.all_input_nodes
    return mutates and bool(inputs) and all(a.name in weights for a in inputs)
