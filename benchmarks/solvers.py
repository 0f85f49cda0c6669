"""Solver benchmark: every back end on synthetic families, the model zoo and imported graphs.

    python -m benchmarks.solvers --quick                      # a few minutes, 5 s per solve
    nice -n 10 python -m benchmarks.solvers --time-limit 60   # the full report (about 80 minutes)
    placer bench --quick --solvers cpsat heft --families layered
    nice -n 10 python -m benchmarks.solvers --families real hard --time-limit 60   # issue 10 (about 2 h)

Each solve runs in a forked child in its own process group with a hard wall-clock deadline
(time limit + grace): a solver that hangs or overruns (CBC in presolve) is killed with its
whole group and recorded as `killed`, and a child that leaves processes behind has them
killed and counted. Rows are appended to `results.jsonl` as they finish, so an interrupted
run keeps what it measured; `benchmarks.report` turns the directory into report.md + PNGs.
See benchmarks/README.md for the columns.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks import graphs
from solvers.processes import group_alive, kill_group

__all__ = [
    "BACKENDS",
    "MILP_MAX_OPS",
    "Backend",
    "Case",
    "ChildOutcome",
    "MODES",
    "busy_competitor",
    "add_arguments",
    "build_cases",
    "disjunction_count",
    "machine_info",
    "main",
    "run_benchmark",
    "run_isolated",
    "skip_reason",
]

EXACT = ("cpsat", "cbc", "highs")
HEURISTIC = ("heft", "critical_path", "single_device")
STATUSES = ("optimal", "feasible", "infeasible", "no_solution")
GRACE_S = 30.0  # the hard deadline is the time limit plus this
# The DLPlacer MILP orders every pair of ops not ordered by the graph with a big-M disjunction
# (up to n^2 / 2 of them) whose LP relaxation is no better than the trivial bound: CBC did not
# prove a 16-op layered graph on 2 GPUs optimal in 20 s, and neither CBC nor HiGHS proved
# anything beyond about 50 ops in 60 s (/work/shared/ENVIRONMENT.md). Beyond these sizes a run
# only burns its time limit. Flow routing adds a binary per cross-device edge and directed link.
MILP_MAX_OPS = {"shortest": 30, "flow": 20}

# Full-run families (--quick uses the QUICK_* ones).
LAYERED_SIZES = (20, 30, 40, 60, 100, 200, 400)
SMALL_SIZES = (10, 13, 16, 20)  # where the MILP can still prove optimality: layered and random
CHAIN_SIZES = (20, 400)
FORK_JOIN_SIZES = (20, 100, 400)
RANDOM_SIZES = (30, 100)
CCRS = (0.1, 1.0, 10.0)
DEVICE_COUNTS = (2, 4, 8)
ZOO_PRESETS = ("dgx1_v100_quad", "dgx1_v100", "dgx_a100")
TARGET_LAYERED_SEEDS = (0, 1, 2, 3, 4)
REPORTS = Path(__file__).resolve().parent / "reports"
FAMILIES = ("small", "layered", "chain", "fork_join", "random", "zoo", "targets", "real", "hard", "import")
# How each solve runs: `idle` as is; `loaded` with one competing busy process (a pure-Python spin
# loop at nice 0) for the duration of the solve; `deterministic` with PlaceOptions(deterministic=True).
MODES = ("idle", "loaded", "deterministic")
# Deterministic CP-SAT counts work, not seconds: its wall time stretches with the load (2-5x the
# limit at a load of 4 on 2 cores), so its hard deadline is this many limits plus the grace.
DETERMINISTIC_DEADLINE_FACTOR = 4.0  # (the service allows placer.budget.DETERMINISTIC_STRETCH)
MODE_FAMILIES = ("real", "hard")  # the families that run every mode by default (the others: idle)
# Without --families: everything but real and hard (about two hours in three modes: name them)
DEFAULT_FAMILIES = tuple(f for f in FAMILIES if f not in MODE_FAMILIES + ("import",))
# Third-party training graphs (PipeDream profiles, msr-fiddle dnn-partitioning inputs), shared
# next to the checkout: <root>/shared/data/real-graphs with the repository at <root>/main.
REAL_GRAPHS = Path(__file__).resolve().parents[2] / "shared" / "data" / "real-graphs"
REAL_PRESETS = ("dgx1_v100",)  # plus graphs.v100_nvlink(4), the machine the profiles come from
HARD_PRESET = "dgx1_v100"  # 8 GPUs; 4 GPUs: graphs.v100_nvlink(4)


@dataclass(frozen=True)
class Backend:
    """A solver with, for the MILP, its routing model."""

    solver: str
    routing: str = "shortest"

    @property
    def label(self) -> str:
        return f"{self.solver}/{self.routing}" if self.solver in ("cbc", "highs") else self.solver

    @property
    def is_milp(self) -> bool:
        return self.solver in ("cbc", "highs")


BACKENDS = (
    Backend("cpsat"),
    Backend("cbc", "shortest"), Backend("cbc", "flow"),
    Backend("highs", "shortest"), Backend("highs", "flow"),
    Backend("heft"), Backend("critical_path"), Backend("single_device"),
)


@dataclass(frozen=True)
class Case:
    """One graph on one machine; `tags` mark the runs a target of issue 6 is read from."""

    family: str
    graph: dict[str, Any]
    hardware: dict[str, Any]
    tags: tuple[str, ...] = ()
    backends: tuple[str, ...] | None = None  # labels; None = every selected back end
    memory_tight: bool = False  # hardware from graphs.memory_tight: the graph barely fits
    modes: tuple[str, ...] = ("idle",)  # exact back ends run once per mode, heuristics in the first

    @property
    def name(self) -> str:
        return f"{self.graph['name']} @ {self.hardware['name']}"


# --------------------------------------------------------------------------- cases


def _fc(n: int) -> dict[str, Any]:
    return graphs.fully_connected_hardware(n)


def _preset(name: str) -> dict[str, Any]:
    import hardware_graphs

    return hardware_graphs.load_preset_document(name)


def _two_gpu_quad() -> dict[str, Any]:
    """Two GPUs of the DGX-1 quad joined by their single NVLink (25 GB/s), with the PCIe path."""
    return graphs.device_subset(_preset("dgx1_v100_quad"), ["gpu0", "gpu1"], name="dgx1_v100_quad-2gpu")


def _synthetic(quick: bool, families: set[str]) -> list[Case]:
    cases: list[Case] = []
    if quick:
        plan = {
            "small": [(13, 2), (16, 4)],
            "layered": [(n, d) for n in (20, 40) for d in (2, 4)],
            "chain": [(20, 2)], "fork_join": [(20, 4)], "random": [(20, 2), (20, 4)],
        }
        ccrs: tuple[float, ...] = (0.1, 10.0)
    else:
        plan = {
            "small": [(n, d) for n in SMALL_SIZES for d in (2, 4)],
            "layered": [(n, d) for n in LAYERED_SIZES for d in DEVICE_COUNTS],
            "chain": [(n, d) for n in CHAIN_SIZES for d in DEVICE_COUNTS],
            "fork_join": [(n, d) for n in FORK_JOIN_SIZES for d in DEVICE_COUNTS],
            "random": [(n, d) for n in RANDOM_SIZES for d in DEVICE_COUNTS],
        }
        ccrs = CCRS
    build = {"small": graphs.layered, "layered": graphs.layered, "chain": graphs.chain, "fork_join": graphs.fork_join}
    for family, sizes in plan.items():
        if family not in families:
            continue
        for i, (n, d) in enumerate(sizes):
            if family == "random":
                # quick: one CCR per case, alternating; full: every CCR on every size and machine
                for ccr in ((ccrs[i % len(ccrs)],) if quick else ccrs):
                    cases.append(Case(family, graphs.random_dag(n, ccr=ccr), _fc(d)))
            elif family != "small" or "layered" not in families or (n, d) not in plan["layered"]:
                cases.append(Case(family, build[family](n), _fc(d)))  # (no layered graph twice)
            if family == "small":
                cases.append(Case(family, graphs.random_dag(n, ccr=1.0), _fc(d)))
    return cases


def _zoo(quick: bool) -> list[Case]:
    from placer.zoo import build, list_models

    if quick:
        return [Case("zoo", build("alexnet"), _preset("dgx1_v100_quad"))]
    return [Case("zoo", build(model), _preset(preset)) for model in list_models() for preset in ZOO_PRESETS]


def _targets(quick: bool) -> list[Case]:
    """The graphs issue 6 item 3 states its targets on (exact back ends beyond CP-SAT are skipped
    by the MILP cutoff anyway; HEFT is every run's baseline)."""
    from placer.zoo import build

    inception = build("inception_v3")
    only = ("cpsat", "heft")
    cases = [
        Case("targets", inception, _preset("dgx1_v100_quad"), ("inception_4gpu",), only),
        Case("targets", inception, _two_gpu_quad(), ("inception_2gpu",), only),
        Case("targets", graphs.bert_per_head(), _preset("dgx1_v100_quad"), ("bert_2k",), only),
    ]
    if not quick:
        cases.append(Case("targets", graphs.bert_per_head(), _preset("dgx1_v100"), ("bert_2k",), only))
    for seed in (TARGET_LAYERED_SEEDS[:1] if quick else TARGET_LAYERED_SEEDS):
        cases.append(Case("targets", graphs.layered(100, seed=seed), _fc(2), ("layered100_2gpu",), only))
    return cases


def _imported(specs: Sequence[str]) -> list[Case]:
    from placer.errors import InputError
    from placer.importers import KINDS, import_graph

    cases = []
    for spec in specs:
        kind, sep, path = spec.partition(":")
        if not sep or kind not in KINDS:
            raise InputError(f"--import {spec!r}: expected KIND:PATH with KIND one of {', '.join(KINDS)}")
        document = import_graph(kind, path).document
        cases += [Case(f"import:{kind}", document, _preset(preset)) for preset in ZOO_PRESETS]
    return cases


def real_graph_files(directory: Path | None = None) -> list[tuple[str, Path]]:
    """(importer kind, path) of every real graph under `directory` (default REAL_GRAPHS):
    PipeDream profiles `pipedream/*/graph.txt` and dnn-partitioning inputs
    `msr-dnn-partitioning/**/*.json`, sorted by path. Empty when the directory is missing."""
    root = REAL_GRAPHS if directory is None else Path(directory)
    if not root.is_dir():
        return []
    found = [("pipedream", p) for p in sorted(root.glob("pipedream/*/graph.txt"))]
    found += [("msr", p) for p in sorted(root.glob("msr-dnn-partitioning/**/*.json"))]
    return found


def import_real(kind: str, path: Path) -> dict[str, Any]:
    """A real graph as placer.graph/v1, imported the way its README says: PipeDream profiles with
    the Input layer's (data loading) time dropped, msr graphs with the msr importer."""
    if kind == "pipedream":
        from placer.importers.pipedream import import_pipedream

        return import_pipedream(path, name=f"pipedream-{path.parent.name}", zero_input_time=True).document
    from placer.importers.msr import import_msr

    return import_msr(path, name=f"msr-{path.stem}").document


def _real(quick: bool, directory: Path | None = None) -> list[Case]:
    """Every real graph on the 4 V100-32GB NVLink machine and the DGX-1 (8 x 16 GB); quick: the
    smallest graph of each kind, on the 4 GPUs. Nothing (and a message) when the data is missing."""
    root = REAL_GRAPHS if directory is None else Path(directory)
    files = real_graph_files(root)
    if not files:
        print(f"benchmarks.solvers: family 'real' skipped: no real graphs in {root} "
              "(expected pipedream/*/graph.txt and msr-dnn-partitioning/**/*.json)", file=sys.stderr)
        return []
    only = ("cpsat", "heft")
    documents = [(kind, import_real(kind, path)) for kind, path in files]
    if quick:
        smallest = {}
        for kind, doc in sorted(documents, key=lambda kd: len(kd[1]["ops"])):
            smallest.setdefault(kind, doc)
        return [Case("real", doc, graphs.v100_nvlink(4), (), only)
                for doc in sorted(smallest.values(), key=lambda d: len(d["ops"]))]
    machines = [graphs.v100_nvlink(4)] + [_preset(name) for name in REAL_PRESETS]
    return [Case("real", doc, hw, (), only) for _, doc in documents for hw in machines]


def hard_graphs(quick: bool) -> list[dict[str, Any]]:
    """The hard family's generated graphs (benchmarks/graphs.py), smallest first in quick runs."""
    from placer.zoo import build

    if quick:
        return [graphs.unet(depth=4, convs_per_level=2), graphs.nasnet_cells(cells_per_stage=1)]
    return [
        graphs.separated_training(build("inception_v3")),
        graphs.msr_form_training(build("gnmt")),
        graphs.unet(depth=6, convs_per_level=9),
        graphs.gpt_per_head(),
        graphs.bert_per_head(),
        graphs.nasnet_cells(),
    ]


def _hard(quick: bool) -> list[Case]:
    """Every hard graph on 4 NVLinked V100-32GB and on the DGX-1, each also memory-tight; and the
    zoo's Inception-V3 on the DGX-1 quad (its loaded-mode gap is a target). Quick: the small
    graphs on the 4 GPUs (U-Net both ways, NASNet tight) and the Inception-V3 quad case."""
    from placer.zoo import build

    only = ("cpsat", "heft")
    cases = []
    machines = [graphs.v100_nvlink(4)] if quick else [graphs.v100_nvlink(4), _preset(HARD_PRESET)]
    for i, graph in enumerate(hard_graphs(quick)):
        for hw in machines:
            if not (quick and i > 0):
                cases.append(Case("hard", graph, hw, (), only))
            cases.append(Case("hard", graph, graphs.memory_tight(hw, graph), (), only, memory_tight=True))
    cases.append(Case("hard", build("inception_v3"), _preset("dgx1_v100_quad"), ("inception_quad_loaded",), only))
    return cases


def build_cases(quick: bool, families: Iterable[str], imports: Sequence[str] = (), *,
                modes: Sequence[str] | None = None, real_graphs: Path | None = None) -> list[Case]:
    """Every case of the run, in the order they are solved. `modes`: the modes of every case
    (default: all of MODES for the real and hard families, idle for the others)."""
    chosen = set(families)
    cases = _synthetic(quick, chosen)
    if "zoo" in chosen:
        cases += _zoo(quick)
    if "targets" in chosen:
        cases += _targets(quick)
    if "real" in chosen:
        cases += _real(quick, real_graphs)
    if "hard" in chosen:
        cases += _hard(quick)
    if imports:
        cases += _imported(imports)
    return [replace(c, modes=tuple(modes) if modes else (MODES if c.family in MODE_FAMILIES else ("idle",)))
            for c in cases]


def select_cases(cases: Sequence[Case], match: Sequence[str] = (), limit: int | None = None) -> list[Case]:
    """Cases whose `graph @ hardware` name contains one of `match` (all when empty), at most
    `limit` per family, in order."""
    kept, per_family = [], Counter()
    for case in cases:
        if match and not any(m in case.name for m in match):
            continue
        if limit is not None and per_family[case.family] >= limit:
            continue
        per_family[case.family] += 1
        kept.append(case)
    return kept


# --------------------------------------------------------------------------- skips


def disjunction_count(graph: dict[str, Any]) -> int:
    """Pairs of ops that no path orders: the MILP needs a big-M disjunction for each."""
    index = {op["id"]: k for k, op in enumerate(graph["ops"])}
    succs: list[list[int]] = [[] for _ in index]
    indegree = [0] * len(index)
    for e in graph.get("edges", []):
        succs[index[e["src"]]].append(index[e["dst"]])
        indegree[index[e["dst"]]] += 1
    ancestors = [0] * len(index)  # bitsets
    ready = [k for k, deg in enumerate(indegree) if deg == 0]
    while ready:
        k = ready.pop()
        for v in succs[k]:
            ancestors[v] |= ancestors[k] | (1 << k)
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)
    n = len(index)
    return n * (n - 1) // 2 - sum(a.bit_count() for a in ancestors)


def _is_tree(hardware: dict[str, Any]) -> bool:
    """One simple path between any two nodes: flow routing can only pick the shortest route."""
    nodes = len(hardware["devices"]) + len(hardware.get("switches", []))
    pairs = {frozenset((link["a"], link["b"])) for link in hardware["links"]}
    return len(pairs) == nodes - 1


def skip_reason(case: Case, backend: Backend, milp_max_ops: dict[str, int] | None = None) -> str | None:
    """Why running `backend` on `case` is pointless (None: run it)."""
    limits = MILP_MAX_OPS if milp_max_ops is None else milp_max_ops
    if case.backends is not None and backend.label not in case.backends and backend.solver not in case.backends:
        return "skipped: not part of this target's runs"
    if not backend.is_milp:
        return None
    n_ops = len(case.graph["ops"])
    if n_ops > limits[backend.routing]:
        return (f"skipped: too large for the MILP ({disjunction_count(case.graph)} disjunctions; "
                f"cutoff {limits[backend.routing]} ops with {backend.routing} routing)")
    if backend.routing == "flow" and _is_tree(case.hardware):
        return "skipped: one route between any two devices, flow routing = shortest"
    return None


# --------------------------------------------------------------------------- isolation


@dataclass
class ChildOutcome:
    """What a child reported (JSON objects, in order), how it ended, and its wall time."""

    messages: list[dict[str, Any]]
    killed: bool
    exit_code: int | None
    wall_s: float
    leftovers_killed: bool = False


def _child(fn: Callable[..., None], args: tuple[Any, ...], out_path: str) -> None:
    os.setsid()  # a process group of our own: the parent kills it, CBC binaries included
    with open(out_path, "w") as out:
        def emit(message: dict[str, Any]) -> None:
            out.write(json.dumps(message) + "\n")
            out.flush()

        try:
            fn(*args, emit)
        except BaseException:  # noqa: BLE001 - reported to the parent, which records "error"
            emit({"kind": "error", "error": traceback.format_exc(limit=8)})
            out.flush()
            os._exit(1)
    os._exit(0)


def run_isolated(fn: Callable[..., None], args: tuple[Any, ...], deadline_s: float) -> ChildOutcome:
    """Run `fn(*args, emit)` in a forked child (own process group); kill the group at `deadline_s`.

    `emit(dict)` streams JSON messages to the parent through a file, so a killed child keeps
    what it reported. Processes the child leaves behind are killed too (and counted).
    """
    context = multiprocessing.get_context("fork")
    with tempfile.TemporaryDirectory(prefix="placer-bench-") as tmp:
        out_path = os.path.join(tmp, "messages.jsonl")
        began = time.perf_counter()
        child = context.Process(target=_child, args=(fn, args, out_path), daemon=False)
        child.start()
        try:
            child.join(deadline_s)
        except BaseException:  # Ctrl-C or a signal turned exception: the child has its own session
            kill_group(child.pid)
            child.kill()
            child.join()
            raise
        killed = child.is_alive()
        if killed:
            kill_group(child.pid)
            child.kill()  # in case it had not reached setsid yet
            child.join()
        wall_s = time.perf_counter() - began
        leftovers = False
        if child.pid is not None and group_alive(child.pid):
            leftovers = True
            kill_group(child.pid)
        messages = []
        if os.path.exists(out_path):
            with open(out_path) as f:
                for line in f:
                    with contextlib.suppress(json.JSONDecodeError):  # a line cut by the kill
                        messages.append(json.loads(line))
    return ChildOutcome(messages, killed, child.exitcode, wall_s, leftovers)


# --------------------------------------------------------------------------- the loaded mode


# A pure-Python spin loop at nice 0 that also ends by itself within ~0.1 s once its parent is gone
# (a benchmark killed with SIGKILL cannot stop it otherwise).
_SPIN = """
import os, sys
parent = int(sys.argv[1])
try:
    os.setpriority(os.PRIO_PROCESS, 0, 0)
except OSError:
    pass
n = 0
while True:
    n += 1
    if not n & 0xFFFFF and os.getppid() != parent:
        break
"""


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of `pid` so far (from /proc), None when unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


@contextlib.contextmanager
def busy_competitor() -> Iterator[dict[str, Any]]:
    """One competing CPU-bound process (a Python spin loop at nice 0, or at the benchmark's own
    niceness when it may not lower it) for the duration of the block. It is killed on the way
    out, whatever happens (errors, Ctrl-C), and exits by itself if the benchmark dies. The
    yielded dict holds `competitor_pid`, `competitor_nice` and, after the block, `competitor_cpu_s`."""
    proc = subprocess.Popen([sys.executable, "-c", _SPIN, str(os.getpid())], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    info: dict[str, Any] = {"competitor_pid": proc.pid}
    try:
        time.sleep(0.05)  # let it lower its niceness before the solve starts
        with contextlib.suppress(OSError):
            info["competitor_nice"] = os.getpriority(os.PRIO_PROCESS, proc.pid)
        yield info
    finally:
        info["competitor_cpu_s"] = _cpu_seconds(proc.pid)
        proc.kill()
        proc.wait()


# --------------------------------------------------------------------------- one solve


def _solve(graph_doc: dict[str, Any], hardware_doc: dict[str, Any], options: dict[str, Any],
           emit: Callable[[dict[str, Any]], None]) -> None:
    """In the child: place, stream progress, re-validate, report a summary of the result."""
    from placer.engine import PlaceOptions, place
    from placer.schema import parse_graph, parse_hardware
    from placer.validate import check_result

    graph, hardware = parse_graph(graph_doc), parse_hardware(hardware_doc)

    def progress(event: Any) -> None:
        emit({"kind": "progress", "t": event.elapsed_s, "incumbent_ms": event.incumbent_ms,
              "bound_ms": event.bound_ms, "message": event.message})

    result = place(graph, hardware, PlaceOptions(**options), progress=progress)
    doc = result.model_dump(mode="json")
    emit({
        "kind": "result",
        "status": result.status, "reason": result.reason, "makespan_ms": result.makespan_ms,
        "lower_bound_ms": result.lower_bound_ms, "gap": result.gap,
        "single_device_ms": result.single_device_ms, "speedup": result.speedup,
        "solve_time_s": result.solve_time_s, "baselines": doc.get("baselines") or {},
        "stats": doc.get("stats") or {}, "violations": check_result(graph, hardware, result),
    })


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b not in (None, 0) else None


def _times(events: list[dict[str, Any]], makespan: float | None, solve_time_s: float | None
           ) -> tuple[float | None, float | None]:
    """Time to the first incumbent and to one as good as the final answer (seconds)."""
    if makespan is None:
        return None, None
    found = [e for e in events if e.get("incumbent_ms") is not None]
    first = found[0]["t"] if found else solve_time_s
    best = next((e["t"] for e in found if e["incumbent_ms"] <= makespan * (1 + 1e-6)), solve_time_s)
    return first, best


def _row(case: Case, backend: Backend, time_limit_s: float, mode: str = "idle") -> dict[str, Any]:
    hw_devices = len(case.hardware["devices"])
    capacities = [d["memory_bytes"] for d in case.hardware["devices"] if d.get("memory_bytes") is not None]
    return {
        "family": case.family, "graph": case.graph["name"], "ops": len(case.graph["ops"]),
        "edges": len(case.graph.get("edges", [])), "hardware": case.hardware["name"], "devices": hw_devices,
        "backend": backend.label, "solver": backend.solver,
        "routing": backend.routing if backend.is_milp else None,
        "time_limit_s": time_limit_s, "tags": list(case.tags), "mode": mode, "memory_tight": case.memory_tight,
        "device_memory_bytes": min(capacities) if capacities else None,
        "graph_memory_bytes": sum(int(op.get("memory_bytes", 0)) for op in case.graph["ops"]),
    }


def run_one(case: Case, backend: Backend, time_limit_s: float, threads: int = 2, seed: int = 0,
            grace_s: float = GRACE_S, mode: str = "idle") -> dict[str, Any]:
    """Solve one case with one back end in a child, in `mode` (one of MODES); the benchmark row."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    row = _row(case, backend, time_limit_s, mode)
    options = {"solver": backend.solver, "time_limit_s": time_limit_s, "routing": backend.routing,
               "threads": threads, "seed": seed}
    if mode == "deterministic":
        options["deterministic"] = True
    args = (case.graph, case.hardware, options)
    deadline_s = time_limit_s * (DETERMINISTIC_DEADLINE_FACTOR if mode == "deterministic" else 1.0) + grace_s
    row["deadline_s"] = deadline_s
    if mode == "loaded":
        with busy_competitor() as competitor:
            outcome = run_isolated(_solve, args, deadline_s)
        row.update(competitor)
    else:
        outcome = run_isolated(_solve, args, deadline_s)
    events = [m for m in outcome.messages if m.get("kind") == "progress"]
    final = next((m for m in outcome.messages if m.get("kind") == "result"), None)
    error = next((m for m in outcome.messages if m.get("kind") == "error"), None)
    row.update(wall_s=outcome.wall_s, leftovers_killed=outcome.leftovers_killed,
               events=[[round(e["t"], 3), e["incumbent_ms"], e["bound_ms"]] for e in events[-400:]])
    if outcome.killed:
        last = events[-1] if events else {}
        row.update(status="killed", reason=f"killed at the hard deadline ({deadline_s:g} s)",
                   makespan_ms=last.get("incumbent_ms"), lower_bound_ms=last.get("bound_ms"))
        return row
    if final is None:
        reason = error["error"].strip().splitlines()[-1] if error else f"child exited with {outcome.exit_code}"
        row.update(status="error", reason=reason, traceback=error["error"] if error else None)
        return row
    stats, baselines = final["stats"], final["baselines"]
    makespan = final["makespan_ms"]
    first, best = _times(events, makespan, final["solve_time_s"])
    row.update(
        status=final["status"], reason=final["reason"], makespan_ms=makespan,
        lower_bound_ms=final["lower_bound_ms"], gap=final["gap"],
        heft_ms=baselines.get("heft_ms"), critical_path_ms=baselines.get("critical_path_ms"),
        single_device_ms=final["single_device_ms"] or baselines.get("single_device_ms"),
        speedup_single=_ratio(final["single_device_ms"] or baselines.get("single_device_ms"), makespan),
        speedup_heft=_ratio(baselines.get("heft_ms"), makespan),
        time_to_first_s=first, time_to_best_s=best, solve_time_s=final["solve_time_s"],
        build_s=stats.get("build_s"), variables=stats.get("variables"), constraints=stats.get("constraints"),
        disjunctions=stats.get("disjunctions"), solver_status=stats.get("solver_status"),
        solver_wall_s=stats.get("solver_wall_s"), model_ops=stats.get("ops"), stats=stats,
        violations=final["violations"],
    )
    return row


def _preload() -> None:
    """Import the engine and the solver libraries once, before forking: each child then starts
    in milliseconds instead of seconds. (Importing starts no threads, so forking stays safe.)"""
    import pulp  # noqa: F401
    from ortools.sat.python import cp_model  # noqa: F401

    import placer.engine
    import placer.formulations.cpsat_model
    import placer.formulations.milp
    import placer.validate  # noqa: F401
    import solvers.cpsat
    import solvers.pulp_milp  # noqa: F401


def planned_runs(case: Case, backends: Sequence[Backend]) -> list[tuple[str, Backend]]:
    """(mode, back end) pairs a case runs: exact back ends in every mode of the case, heuristics
    once (in its first mode: their answer does not depend on the load or on determinism)."""
    return [(mode, b) for k, mode in enumerate(case.modes) for b in backends if k == 0 or b.solver in EXACT]


def run_benchmark(cases: Sequence[Case], backends: Sequence[Backend], time_limit_s: float, *,
                  threads: int = 2, seed: int = 0, milp_max_ops: dict[str, int] | None = None,
                  grace_s: float = GRACE_S, sink: Callable[[dict[str, Any]], None] | None = None
                  ) -> list[dict[str, Any]]:
    """Every (case, mode, back end) row, skipped ones included; `sink` sees each row as it finishes."""
    _preload()
    rows = []
    for case in cases:
        for mode, backend in planned_runs(case, backends):
            reason = skip_reason(case, backend, milp_max_ops)
            if reason is not None:
                if reason.startswith("skipped: not part"):
                    continue
                row = {**_row(case, backend, time_limit_s, mode), "status": "skipped", "reason": reason}
            else:
                row = run_one(case, backend, time_limit_s, threads, seed, grace_s, mode)
            rows.append(row)
            if sink is not None:
                sink(row)
    return rows


# --------------------------------------------------------------------------- machine and versions


def machine_info() -> dict[str, Any]:
    """Where the numbers were measured: CPU, cores, memory, load, Python and package versions."""
    from importlib import metadata

    cpu = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    mem_kb = 0
    with contextlib.suppress(OSError, StopIteration, ValueError), open("/proc/meminfo") as f:
        mem_kb = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    versions = {}
    for package in ("placer", "ortools", "pulp", "highspy", "cbcbox", "pydantic", "networkx", "matplotlib"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "cpu_model": cpu, "nproc": len(os.sched_getaffinity(0)), "cpu_count": os.cpu_count(),
        "memory_gb": round(mem_kb / 1e6, 1), "load_average": list(os.getloadavg()),
        "kernel": platform.release(), "python": platform.python_version(),
        "versions": versions, "cbc": _cbc_version(), "commit": _commit(),
    }


def _cbc_version() -> str | None:
    import subprocess

    try:
        from solvers.pulp_milp import cbc_path

        path = cbc_path()
        if path is None:
            return None
        text = subprocess.run([path, "-quit"], check=False, capture_output=True, text=True, timeout=10).stdout
    except Exception:  # noqa: BLE001 - the version is informative only
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    version = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("Version")), None)
    return f"{version or (lines[0] if lines else '?')} ({path})"


def _commit() -> str | None:
    """The checkout's HEAD commit, read from .git (uncommitted changes are not shown)."""
    git = Path(__file__).resolve().parent.parent / ".git"
    with contextlib.suppress(OSError):
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        if (git / ref).exists():
            return (git / ref).read_text().strip()
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    return None


# --------------------------------------------------------------------------- CLI


def _backends(names: Sequence[str] | None) -> list[Backend]:
    from placer.errors import InputError

    if not names:
        return list(BACKENDS)
    chosen = []
    for name in names:
        found = [b for b in BACKENDS if name in (b.label, b.solver)]
        if not found:
            raise InputError(f"--solvers: unknown back end {name!r}; known: "
                             f"{', '.join(b.label for b in BACKENDS)} (cbc and highs mean both routings)")
        chosen += [b for b in found if b not in chosen]
    return chosen


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The benchmark's options (shared by `python -m benchmarks.solvers` and `placer bench`)."""
    parser.add_argument("--quick", action="store_true",
                        help="a small subset with --time-limit 5 by default (a few minutes)")
    parser.add_argument("--time-limit", type=float, default=None, metavar="S",
                        help="per-solve limit in seconds (default 60; 5 with --quick)")
    parser.add_argument("--solvers", nargs="+", metavar="NAME",
                        help="back ends: " + ", ".join(b.label for b in BACKENDS) + " (cbc = both routings)")
    parser.add_argument("--families", nargs="+", metavar="NAME", choices=FAMILIES,
                        help=f"families to run: {', '.join(FAMILIES[:-1])} (default all but real and hard)")
    parser.add_argument("--modes", nargs="+", metavar="MODE", choices=MODES,
                        help="idle, loaded (one competing busy process during each solve), deterministic "
                        "(PlaceOptions.deterministic); default all three for real and hard, idle for the others")
    parser.add_argument("--match", nargs="+", default=[], metavar="TEXT",
                        help="only the cases whose 'graph @ machine' name contains one of these")
    parser.add_argument("--limit", type=int, default=None, metavar="N", help="at most N cases per family")
    parser.add_argument("--real-graphs", metavar="DIR", default=None,
                        help=f"the real graphs' directory (default {REAL_GRAPHS})")
    parser.add_argument("--import", dest="imports", nargs="+", default=[], metavar="KIND:PATH",
                        help="also benchmark imported graphs, e.g. pipedream:profiles/vgg16/graph.txt")
    parser.add_argument("--out", metavar="DIR",
                        help="report directory (default benchmarks/reports/<date>-quick|full)")
    parser.add_argument("--threads", type=int, default=2, help="solver threads (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="solver seed")
    parser.add_argument("--grace", type=float, default=GRACE_S, metavar="S",
                        help=f"hard deadline = time limit + this (default {GRACE_S:g})")
    parser.add_argument("--milp-max-ops", type=int, default=None, metavar="N",
                        help="run the MILP on graphs up to N ops with either routing "
                        f"(default {MILP_MAX_OPS['shortest']} shortest, {MILP_MAX_OPS['flow']} flow)")
    parser.add_argument("--list", action="store_true", help="list the runs (and skips) without solving")
    parser.add_argument("--no-report", action="store_true", help="write results.jsonl only")


@contextlib.contextmanager
def _terminate_cleanly() -> Iterator[None]:
    """SIGTERM raises SystemExit while the benchmark runs, so the running solve's process group and
    the loaded mode's competitor are killed on the way out (as on Ctrl-C)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run(args: argparse.Namespace) -> int:
    """Run the benchmark described by parsed `args`; write results.jsonl, meta.json and the report."""
    time_limit_s = args.time_limit if args.time_limit is not None else (5.0 if args.quick else 60.0)
    families = [f for f in (args.families or DEFAULT_FAMILIES) if f != "import"]
    backends = _backends(args.solvers)
    milp_max_ops = None if args.milp_max_ops is None else dict.fromkeys(MILP_MAX_OPS, args.milp_max_ops)
    cases = build_cases(args.quick, families, args.imports, modes=args.modes,
                        real_graphs=Path(args.real_graphs) if args.real_graphs else None)
    cases = select_cases(cases, args.match, args.limit)
    if args.list:
        for case in cases:
            for mode, backend in planned_runs(case, backends):
                reason = skip_reason(case, backend, milp_max_ops)
                if reason is None or not reason.startswith("skipped: not part"):
                    print(f"{case.family:10} {case.name:50} {len(case.graph['ops']):5} ops  "
                          f"{backend.label:15} {mode:13} {reason or 'run'}")
        return 0
    mode = "quick" if args.quick else "full"
    out = Path(args.out) if args.out else REPORTS / f"{dt.date.today().isoformat()}-{mode}"
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    results.write_text("")
    meta = {
        "mode": mode, "time_limit_s": time_limit_s, "grace_s": args.grace, "threads": args.threads,
        "seed": args.seed, "backends": [b.label for b in backends], "families": families,
        "imports": list(args.imports), "milp_max_ops": milp_max_ops or MILP_MAX_OPS,
        "modes": sorted({m for c in cases for m in c.modes}, key=MODES.index),
        "match": list(args.match), "limit": args.limit,
        "command": " ".join(["placer" if getattr(args, "command", None) == "bench" else "python -m benchmarks.solvers",
                             *sys.argv[1:]]),
        "started": dt.datetime.now().isoformat(timespec="seconds"), "machine": machine_info(),
        "niceness": os.nice(0),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    total = sum(1 for c in cases for _, b in planned_runs(c, backends)
                if not (skip_reason(c, b, milp_max_ops) or "").startswith("skipped: not part"))
    done = {"n": 0}

    def sink(row: dict[str, Any]) -> None:
        done["n"] += 1
        with results.open("a") as f:
            f.write(json.dumps(row) + "\n")
        gap = f"{row['gap']:.2%}" if row.get("gap") is not None else "-"
        ms = f"{row['makespan_ms']:.3f}" if row.get("makespan_ms") is not None else "-"
        took = f"{row['wall_s']:.1f} s" if "wall_s" in row else ""
        print(f"[{done['n']}/{total}] {row['family']:10} {row['graph']:28.28} {row['hardware']:24.24} "
              f"{row['backend']:15} {row.get('mode', 'idle'):13} {row['status']:11} {ms:>10} gap {gap:>7} {took}",
              flush=True)

    began = time.perf_counter()
    with _terminate_cleanly():
        run_benchmark(cases, backends, time_limit_s, threads=args.threads, seed=args.seed,
                      milp_max_ops=milp_max_ops, grace_s=args.grace, sink=sink)
    meta.update(finished=dt.datetime.now().isoformat(timespec="seconds"),
                wall_s=round(time.perf_counter() - began, 1), load_average_end=list(os.getloadavg()))
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    if not args.no_report:
        from benchmarks.report import write_report

        print(f"wrote {write_report(out)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.solvers", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    from placer.errors import InputError

    try:
        return run(args)
    except InputError as exc:
        print(f"benchmarks.solvers: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("benchmarks.solvers: interrupted (the rows so far are in results.jsonl)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
