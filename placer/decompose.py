"""Series decomposition: exact bounds, and often exact answers, for graphs with time cuts.

A training step of a CNN or a transformer passes through ops that every other op comes
before or after (a concat ending an Inception block, a residual add, their gradients).
Such a *time cut* splits the schedule: whatever runs between two consecutive cuts (a
*segment*) runs after the first ends and before the second starts, so

    makespan = sum over cuts of their durations + sum over segments of their spans,

where a segment's span runs from the end of its entry cut to the start of its exit cut.
Segments interact only through colocation groups (a layer's forward and backward ops
share a device) and through the devices of their boundary cuts. Segments that share
groups form a *component*; each component is solved on its own by CP-SAT, minimising the
sum of its segments' spans. Then:

- bound: sum of the cut durations + sum of the components' proven bounds. Memory
  between components, edges that jump over a cut and small dangling sinks (weight
  updates) are dropped, which only relaxes the problem, so the bound is valid;
- answer: when the hardware has automorphisms that map each component's boundary
  devices onto those already chosen, the components' answers are relabelled and stitched,
  the dangling ops are inserted into idle gaps, and the whole is re-timed on the full
  graph. On vertex-transitive machines (fully connected, NVSwitch, a DGX-1 quad) this
  often meets the bound: an optimality proof in seconds where the monolithic model stalls.
"""
from __future__ import annotations

import itertools
import math
import time
from bisect import bisect_right
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import Any

from placer.bounds import longest_path
from placer.budget import WORK_PER_SECOND, Budget
from placer.chain_loads import ChainLoads, chain_loads, component_groups, latest_cut
from placer.formulations.cpsat_model import (
    _ticks,
    add_energy,
    add_memory,
    add_no_overlap,
    add_op,
    add_placement,
    add_precedence,
    add_symmetry_breaking,
    pair_delays,
    pick_tick,
)
from placer.errors import SolutionCheckError
from placer.heuristics import resequence
from placer.model import Problem
from placer.parallel import SubSolvePool
from placer.relax import symmetric_relaxation
from placer.repair import memory_overflow
from placer.schedule import Schedule, Solution, retime
from placer.stats import SolveStats

__all__ = ["Decomposition", "decompose", "solve_decomposed"]

FIRST_PASS_SHARE = 0.25  # of the component time; the rest goes to the largest remaining gaps
CHAIN_LOADS_SHARE = 0.1  # of the decomposition's limit, at most, for the bound of placer.chain_loads: BERT-base
                         # needs 0.2-0.5 s of 55, zoo ResNet-50 on the DGX-1 2-3 s (one spread solve 1.2 s)
RELAXED_QUICK_SHARE = 0.25  # of a relaxation round, for CP-SAT's default search before its lower-bound
                            # tree search (default proves small components at once, the tree search
                            # far more on large ones: benchmarks/reports/2026-12-03-bound-search)
BRIDGE_STRETCH = 10.0  # an op is a bridge when the path it spans lasts this many times its duration ...
BRIDGE_MAX_WORK = 0.1  # ... and the bridges hold at most this share of the work (see `_bridges`)
_RELABEL_WORK = 150_000  # ops x stitches the relabelling search may evaluate (a stitch resequenced
                         # costs 15-70 us per op, 2-10 s: per-head BERT-12, 2,066 ops, 72 stitches in
                         # 10 s); separated Inception-V3 (808 ops) converges in 135-170 stitches
RELABEL_SHARE = 0.75  # of the time left after the stitch, at most, for the relabelling search while
                      # a component's gap is open: on the clock its Python (no CP-SAT work) took all
                      # of it and left the proofs none (per-head BERT-12 on a DGX-1: 10 s, bound 28.14
                      # ms where one relaxation round of 0.7 s proves 33.75); half was too little for
                      # a bad stitch of GPT-16 per head (42.49 ms relabelled to 40.87, not 40.03)


@dataclass
class Decomposition:
    """Cuts in time order; segments between them; components of coupled segments."""

    dangling: list[int]
    dangling_sources: frozenset[int]    # the dangling ops that run before the rest (the others: after) ...
    cuts: list[int]
    segments: list[list[int]]           # segments[j]: ops after cuts[j-1] and before cuts[j]
    components: list[list[int]]         # segment indices, in time order
    bridges: frozenset[int] = frozenset()  # ... or between (`_bridges`)
    switches: dict[int, int] = field(default_factory=dict)  # empty segment -> the component that prices it

    def boundary(self, j: int) -> tuple[int | None, int | None]:
        entry = self.cuts[j - 1] if j >= 1 else None
        exit_ = self.cuts[j] if j < len(self.cuts) else None
        return entry, exit_

    @cached_property
    def component_of_segment(self) -> dict[int, int]:
        """Segment -> its component (segments in no component are left out)."""
        return {j: c for c, comp in enumerate(self.components) for j in comp}


def _head_lengths(problem: Problem) -> tuple[list[float], float]:
    finish = [0.0] * problem.n_ops
    for k in range(problem.n_ops):
        ready = max((finish[problem.edges[i].src] for i in problem.preds[k]), default=0.0)
        finish[k] = ready + problem.min_time_ms(k)
    return finish, max(finish, default=0.0)


def _tail_lengths(problem: Problem) -> list[float]:
    """Per op, the longest path from its start to the end at the fastest durations."""
    tail = [0.0] * problem.n_ops
    for k in reversed(range(problem.n_ops)):
        after = max((tail[problem.edges[i].dst] for i in problem.succs[k]), default=0.0)
        tail[k] = problem.min_time_ms(k) + after
    return tail


def _dangling(problem: Problem) -> tuple[list[int], frozenset[int]]:
    """Ops off every longest path whose successors are all dangling (weight updates and the
    weight gradients feeding only them), or whose predecessors are all dangling (weights,
    and their transposes); and the second kind, the sources. The two kinds never meet by an
    edge from the first to the second, which is why sinks go after and sources before the
    rest of their device's order."""
    n = problem.n_ops
    finish, length = _head_lengths(problem)
    tail = _tail_lengths(problem)

    def slack(k: int) -> bool:
        return finish[k] - problem.min_time_ms(k) + tail[k] < length * (1 - 1e-9)

    sink_side = [False] * n
    for k in reversed(range(n)):
        sink_side[k] = bool(problem.preds[k]) and slack(k) and all(
            sink_side[problem.edges[i].dst] for i in problem.succs[k])
    source_side = [False] * n
    for k in range(n):
        source_side[k] = not sink_side[k] and bool(problem.succs[k]) and slack(k) and all(
            source_side[problem.edges[i].src] for i in problem.preds[k])
    return [k for k in range(n) if sink_side[k] or source_side[k]], frozenset(k for k in range(n) if source_side[k])


def _bridges(problem: Problem, is_out: list[bool]) -> list[int]:
    """Ops that bridge a long stretch of the graph and block the time cuts inside it: what
    a training graph saves in its forward pass for its backward pass when it lists it as
    an op of its own (a layer norm's saved mean, a dropout mask, a transposed activation:
    msr-fiddle's graphs). Each runs any time between its inputs and its consumer, far
    later; left in, no op in between is a time cut (msr BERT-12: 12 cuts, 581 without).

    On a longest path P through the ops not out, every time cut lies on P, and an op off P
    blocks exactly the ops of P strictly between the last one it descends from and the
    first one it precedes. A bridge is an op off P whose stretch of P lasts at least
    BRIDGE_STRETCH times its own duration. Taken out (as dangling ops: the bound drops
    them, which only relaxes it; the stitch slots them in), they must at least double the
    time cuts while holding at most BRIDGE_MAX_WORK of the work; then only those blocking
    a new time cut are taken out. Otherwise none (an Inception block's branches are not
    bridges: taking them out gains no cut and drops a third of the work)."""
    path = longest_path(problem, [problem.min_time_ms(k) for k in range(problem.n_ops)], skip=is_out, by_count=True)
    on_path = {k: i for i, k in enumerate(path)}
    after = [-1] * problem.n_ops           # last op of P each op descends from (position)
    before = [len(path)] * problem.n_ops   # first op of P each op precedes (position)
    for k in range(problem.n_ops):
        if not is_out[k]:
            after[k] = on_path.get(k, max((after[problem.edges[i].src] for i in problem.preds[k]
                                           if not is_out[problem.edges[i].src]), default=-1))
    for k in reversed(range(problem.n_ops)):
        if not is_out[k]:
            before[k] = on_path.get(k, min((before[problem.edges[i].dst] for i in problem.succs[k]
                                            if not is_out[problem.edges[i].dst]), default=len(path)))
    starts = [0.0]
    for k in path:
        starts.append(starts[-1] + problem.min_time_ms(k))
    off = [k for k in range(problem.n_ops) if not is_out[k] and k not in on_path]

    def stretch_ms(k: int) -> float:
        return starts[before[k]] - starts[after[k] + 1]

    def cuts_without(taken: set[int]) -> list[int]:
        blocked = [0] * (len(path) + 1)
        for k in off:
            if k not in taken:
                blocked[after[k] + 1] += 1
                blocked[before[k]] -= 1
        running, cuts = 0, []
        for i in range(len(path)):
            running += blocked[i]
            if running == 0:
                cuts.append(i)
        return cuts

    candidates = {k for k in off if stretch_ms(k) > 0 and stretch_ms(k) >= BRIDGE_STRETCH * problem.min_time_ms(k)}
    work = sum(problem.min_time_ms(k) for k in range(problem.n_ops) if not is_out[k])
    if not candidates or sum(problem.min_time_ms(k) for k in candidates) > BRIDGE_MAX_WORK * work:
        return []
    cuts = cuts_without(candidates)
    if len(cuts) < 2 * max(1, len(cuts_without(set()))):
        return []
    new_cut = [0] * (len(path) + 1)  # prefix counts of the cuts, by position on P
    for i in cuts:
        new_cut[i + 1] = 1
    for i in range(len(path)):
        new_cut[i + 1] += new_cut[i]
    return sorted(k for k in candidates if new_cut[before[k]] > new_cut[after[k] + 1])


def decompose(problem: Problem, min_cuts: int = 2) -> Decomposition | None:
    """Find the time cuts of the graph without its dangling ops (None if fewer than min_cuts).

    Dangling ops are sinks off the critical path (weight updates), sources off it
    (weights and constants that operator-level graphs list as ops feeding both the forward
    and the backward pass) and bridges (`_bridges`): left in, every one of them would run
    beside everything and no op would be a cut."""
    n = problem.n_ops
    dangling, sources = _dangling(problem)
    is_dangling = [False] * n
    for k in dangling:
        is_dangling[k] = True
    bridges = _bridges(problem, is_dangling)
    for k in bridges:
        is_dangling[k] = True
    dangling = sorted(dangling + bridges)
    core = [k for k in range(n) if not is_dangling[k]]
    # ancestors and descendants among core ops, as bitsets
    desc = [0] * n
    for k in reversed(core):
        bits = 0
        for i in problem.succs[k]:
            v = problem.edges[i].dst
            if not is_dangling[v]:
                bits |= desc[v] | (1 << v)
        desc[k] = bits
    anc = [0] * n
    for k in core:
        bits = 0
        for i in problem.preds[k]:
            u = problem.edges[i].src
            if not is_dangling[u]:
                bits |= anc[u] | (1 << u)
        anc[k] = bits
    total = len(core)
    cuts = [k for k in core if (anc[k] | desc[k]).bit_count() == total - 1]
    if len(cuts) < min_cuts:
        return None
    cut_index = {c: j for j, c in enumerate(cuts)}
    segments: list[list[int]] = [[] for _ in range(len(cuts) + 1)]
    cut_bits = 0
    for c in cuts:
        cut_bits |= 1 << c
    for k in core:
        if k not in cut_index:
            segments[(anc[k] & cut_bits).bit_count()].append(k)
    # components: segments that share a colocation group
    parent = list(range(len(segments)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    seg_of_group: dict[int, int] = {}
    for j, ops in enumerate(segments):
        for k in ops:
            g = problem.group[k]
            if g in seg_of_group:
                parent[find(j)] = find(seg_of_group[g])
            else:
                seg_of_group[g] = j
    comps: dict[int, list[int]] = defaultdict(list)
    for j, ops in enumerate(segments):
        if ops:
            comps[find(j)].append(j)
    components = sorted(comps.values(), key=lambda c: c[0])
    return Decomposition(dangling=dangling, dangling_sources=sources, cuts=cuts, segments=segments,
                         components=components, bridges=frozenset(bridges),
                         switches=_switches(problem, cuts, segments, components))


def _switches(problem: Problem, cuts: list[int], segments: list[list[int]],
              components: list[list[int]]) -> dict[int, int]:
    """Empty segments a component prices (`_solve_component`): consecutive time cuts joined by
    an edge, in different groups that are both the component's. Placed apart, the second
    waits for the first's tensors, a cost of the chain the segments' spans do not see (msr
    BERT-12's layers put a matmul and the division after it on different GPUs 24 times: 41 ms).
    Each empty segment is priced by one component at most (the first holding both groups),
    so the bound counts it once."""
    held = [set(component_groups(problem, cuts, segments, comp)[0]) for comp in components]
    owner: dict[int, int] = {}
    for j in range(1, len(cuts)):
        a, b = cuts[j - 1], cuts[j]
        ga, gb = problem.group[a], problem.group[b]
        if segments[j] or ga == gb or not problem.edges_between(a, b):
            continue
        c = next((c for c, groups in enumerate(held) if ga in groups and gb in groups), None)
        if c is not None:
            owner[j] = c
    return owner


@dataclass
class _ComponentAnswer:
    device_of_group: dict[int, int]
    local_start_ms: dict[tuple[int, int], float]   # (segment, op) -> start within the segment
    bound_ms: float
    objective_ms: float
    optimal: bool
    status: str


@dataclass
class DecomposedAnswer:
    bound_ms: float
    schedule: Schedule | None
    # where memory binds: the same components stitched with the time cuts kept on their
    # chain's device (memory left to placer.repair), which beats moving a cut whose
    # tensors are big (GPT's logits: 16 ms each way)
    alternative: Schedule | None = None
    stats: SolveStats = field(default_factory=SolveStats)  # its decomposition_* fields
    chain_loads_ms: float | None = None   # the components coupled through device loads (placer.chain_loads)
    stitch_error: str | None = None       # why the stitch failed its own checks (a bug; the bound stands)


def _local_segments(dec: Decomposition, comp: list[int]) -> list[tuple[int, list[int], int | None, int | None]]:
    """(segment, its ops with its entry and exit cuts, entry, exit) for each segment of a component."""
    local = []
    for j in comp:
        entry, exit_ = dec.boundary(j)
        ops = ([entry] if entry is not None else []) + dec.segments[j] + ([exit_] if exit_ is not None else [])
        local.append((j, ops, entry, exit_))
    return local


def _shape(problem: Problem, dec: Decomposition, comp: list[int]) -> tuple:
    """A key equal for components whose CP-SAT models are equal up to renaming ops and groups.

    Training graphs repeat their blocks (Inception-B four times, BERT's layers twelve times):
    such components are solved once and the answer is copied (see `_copy_answer`).
    """
    local = _local_segments(dec, comp)
    local_group: dict[int, int] = {}
    for _, ops, _, _ in local:
        for k in ops:
            local_group.setdefault(problem.group[k], len(local_group))
    segments = []
    for _, ops, entry, exit_ in local:
        position = {k: i for i, k in enumerate(ops)}
        edges = sorted((position[k], position[problem.edges[i].dst], problem.edges[i].size_bytes)
                       for k in ops for i in problem.succs[k] if problem.edges[i].dst in position)
        op_keys = tuple((tuple(problem.time_ms[k]), local_group[problem.group[k]]) for k in ops)
        segments.append((entry is not None, exit_ is not None, op_keys, tuple(edges)))
    groups = tuple((tuple(problem.allowed[g]), problem.group_memory_bytes(g)) for g in local_group)
    switches = tuple((local_group[problem.group[a]], local_group[problem.group[b]],
                      tuple(sorted(problem.edges[i].size_bytes for i in problem.edges_between(a, b))))
                     for a, b in _priced_switches(dec, comp))
    return tuple(segments), groups, switches


def _copy_answer(problem: Problem, dec: Decomposition, answer: _ComponentAnswer, source: list[int],
                 target: list[int]) -> _ComponentAnswer:
    """`answer` for component `source`, renamed op by op onto the same-shaped `target`."""
    group_map: dict[int, int] = {}
    starts: dict[tuple[int, int], float] = {}
    for (js, ops_s, _, _), (jt, ops_t, _, _) in zip(_local_segments(dec, source), _local_segments(dec, target)):
        for ks, kt in zip(ops_s, ops_t):
            group_map[problem.group[ks]] = problem.group[kt]
            if (js, ks) in answer.local_start_ms:
                starts[jt, kt] = answer.local_start_ms[js, ks]
    return _ComponentAnswer({group_map[g]: d for g, d in answer.device_of_group.items()}, starts,
                            answer.bound_ms, answer.objective_ms, answer.optimal, answer.status)


def _solve_component(problem: Problem, dec: Decomposition, comp: list[int], time_limit_s: float,
                     budget: Budget, hint: Solution | _ComponentAnswer | None,
                     fixed: dict[int, int] | None = None, representatives: list[int] | None = None,
                     apart: list[int] | None = None, good_enough_ms: float | None = None,
                     bound_search: bool = False) -> _ComponentAnswer:
    """Minimise the sum of the spans of the component's segments (see the module docstring).

    `fixed` pins groups (by index) to devices: how a component is fitted to the cut devices
    its neighbours chose when no automorphism of the hardware can relabel it onto them.
    `apart` lists groups that may not all share one device (placer.chain_loads). The search
    stops at the first answer of at most `good_enough_ms` (a re-fit that matches the free answer).
    `bound_search`: CP-SAT's lower-bound tree search, for solves kept only for their bound.
    """
    from ortools.sat.python import cp_model

    local = _local_segments(dec, comp)
    groups = sorted({problem.group[k] for _, ops, _, _ in local for k in ops})

    delays: dict[tuple[int, int, int], float] = {}  # (edge, a, b) -> ms
    edges_of: list[list[int]] = []
    for j, ops, _, _ in local:
        inside = set(ops)
        es = [i for k in ops for i in problem.succs[k] if problem.edges[i].dst in inside]
        edges_of.append(es)
        for i in es:
            e = problem.edges[i]
            gu, gv = problem.group[e.src], problem.group[e.dst]
            if gu != gv:
                for a in problem.allowed[gu]:
                    for b in problem.allowed[gv]:
                        if a != b:
                            delays[i, a, b] = problem.delay_ms(e, a, b)
    values = [problem.time_ms[k][d] for _, ops, _, _ in local for k in ops for d in problem.allowed[problem.group[k]]]
    values += list(delays.values())
    worst_delay: dict[int, float] = defaultdict(float)
    for (i, _, _), x in delays.items():
        worst_delay[i] = max(worst_delay[i], x)
    horizon_ms = sum(max(problem.time_ms[k]) for _, ops, _, _ in local for k in ops)
    horizon_ms += sum(worst_delay[i] for es in edges_of for i in es)
    tick, exact = pick_tick(values, max(horizon_ms, 1e-6))
    horizon = _ticks(horizon_ms, tick) + 1
    delay_ticks = {key: _ticks(x, tick) for key, x in delays.items()}
    worst_rounding: dict[int, float] = defaultdict(float)
    for key, x in delays.items():
        worst_rounding[key[0]] = max(worst_rounding[key[0]], delay_ticks[key] * tick - x)

    m = cp_model.CpModel()
    lit = add_placement(m, problem, groups)
    per_edge: dict[int, dict[tuple[int, int], int]] = defaultdict(dict)
    for (i, a, b), t in delay_ticks.items():
        per_edge[i][a, b] = t
    spans = []
    starts: dict[tuple[int, int], Any] = {}
    slack_ms = 0.0
    for (j, ops, entry, exit_), es in zip(local, edges_of):
        per_device: dict[int, list[Any]] = defaultdict(list)
        st, en = {}, {}
        for k in ops:
            lits = lit[problem.group[k]]
            dur = {d: _ticks(problem.time_ms[k][d], tick) for d in lits}
            if not exact:
                slack_ms += max(dur[d] * tick - problem.time_ms[k][d] for d in lits)
            st[k], en[k] = add_op(m, lits, dur, horizon, f"{j}_{k}", per_device, point_ticks=0)
            starts[j, k] = st[k]
        add_no_overlap(m, per_device.values())
        add_energy(m, [st[k] for k in ops],
                   [min(_ticks(problem.time_ms[k][d], tick) for d in lit[problem.group[k]]) for k in ops],
                   problem.n_devices, str(j))
        for i in es:
            e = problem.edges[i]
            add_precedence(m, st[e.dst], en[e.src], lit[problem.group[e.src]], lit[problem.group[e.dst]],
                           per_edge.get(i, {}) if problem.group[e.src] != problem.group[e.dst] else {})
        if not exact:
            slack_ms += sum(worst_rounding[i] for i in es)
        if entry is not None:
            m.add(st[entry] == 0)
        begin = en[entry] if entry is not None else 0
        if exit_ is not None:
            finish = st[exit_]
        else:
            finish = m.new_int_var(0, horizon * 2, f"end_{j}")
            for k in ops:
                m.add(finish >= en[k])
        spans.append(finish - begin)
    for a, b in _priced_switches(dec, comp):
        # the second cut waits for the first's tensors where their groups are apart
        delay_ms = max(min((problem.delay_ms(problem.edges[i], x, y) for x in lit[problem.group[a]]
                            for y in lit[problem.group[b]] if x != y), default=math.inf)
                       for i in problem.edges_between(a, b))
        if math.isfinite(delay_ms) and math.floor(delay_ms / tick) > 0:
            split = m.new_bool_var(f"switch_{a}_{b}")
            for d, on_a in lit[problem.group[a]].items():
                on_b = lit[problem.group[b]].get(d)
                m.add(split >= on_a - on_b if on_b is not None else split >= on_a)
            spans.append(math.floor(delay_ms / tick) * split)
    add_memory(m, problem, lit)
    for d in range(problem.n_devices) if apart else []:
        on_d = [lit[g][d] for g in apart if d in lit[g]]
        if len(on_d) == len(apart):
            m.add(sum(on_d) <= len(apart) - 1)
    for g, d in (fixed or {}).items():
        if g in lit:
            m.add(lit[g][d] == 1)
    if not fixed:
        first_op = {g: min(problem.groups[g]) for g in groups}
        free = sorted((g for g in groups if len(problem.allowed[g]) == problem.n_devices), key=first_op.__getitem__)
        add_symmetry_breaking(m, problem.interchangeable_devices, free, lit)
        if free and representatives is not None and len(free) == len(groups):
            # an automorphism maps the first group's device to its orbit's representative
            # (not where a group is pinned: its device is then unlike the others)
            m.add_bool_or([lit[free[0]][d] for d in representatives])
    m.minimize(sum(spans))
    if isinstance(hint, _ComponentAnswer) and hint.device_of_group:
        for g in groups:
            for d, v in lit[g].items():
                m.add_hint(v, d == hint.device_of_group.get(g))
        for key, var in starts.items():
            if key in hint.local_start_ms:
                m.add_hint(var, min(horizon, max(0, round(hint.local_start_ms[key] / tick))))
    elif isinstance(hint, Solution):
        for g in groups:
            chosen = hint.device[problem.groups[g][0]]
            for d, v in lit[g].items():
                m.add_hint(v, d == chosen)
    def stop_if_good_enough(found: Any) -> None:
        assert good_enough_ms is not None
        if found.objective_value * tick <= good_enough_ms * (1 + 1e-9):
            found.stop_search()

    run, solver = budget.solve_cpsat(m, time_limit_s, bound_search=bound_search,
                                     on_solution=None if good_enough_ms is None else stop_if_good_enough)
    if not run.has_solution:
        return _ComponentAnswer({}, {}, 0.0, math.inf, False, run.status.value)
    device_of_group = {g: next(d for d, v in lit[g].items() if solver.value(v)) for g in groups}
    local_start = {key: solver.value(s) * tick for key, s in starts.items()}
    bound_ms = max(0.0, math.floor(run.bound + 1e-9) * tick - slack_ms) if run.bound is not None else 0.0
    return _ComponentAnswer(device_of_group, local_start, bound_ms, run.objective * tick,
                            run.status.value == "optimal", run.status.value)


def _priced_switches(dec: Decomposition, comp: list[int]) -> list[tuple[int, int]]:
    """(first cut, second cut) of the empty segments component `comp` prices (`_switches`);
    none for a part of a component solved alone."""
    c = dec.component_of_segment.get(comp[0]) if comp else None
    if c is None or dec.components[c] != comp:
        return []
    return [(dec.cuts[j - 1], dec.cuts[j]) for j, owner in sorted(dec.switches.items()) if owner == c]


def _automorphism(problem: Problem, fixed: dict[int, int], load: list[int] | None = None,
                  room: list[float] | None = None) -> list[int] | None:
    """A permutation of devices preserving durations, memory and route costs, with sigma[a] = b
    for every (a, b) in `fixed`; None when there is none.

    With `load` (memory a component puts on each device) and `room` (memory left per device),
    the heaviest devices are mapped first, each to the device with the most room that keeps
    an automorphism: copies of a repeated block then spread their memory over the machine
    instead of piling it on the same devices."""
    n = problem.n_devices
    prof = problem.router.cost_profile
    names = problem.devices
    sigma = [-1] * n
    used = [False] * n

    def consistent(a: int) -> bool:
        for x in range(n):
            if sigma[x] >= 0 and x != a and prof(names[a], names[x]) != prof(names[sigma[a]], names[sigma[x]]):
                return False
        return True

    for a, b in fixed.items():
        if sigma[a] >= 0 and sigma[a] != b or used[b] and sigma[a] != b:
            return None
        sigma[a], used[b] = b, True
    for a in fixed:
        if not problem.alike(a, sigma[a]) or not consistent(a):
            return None
    free = [a for a in range(n) if sigma[a] < 0]
    targets = list(range(n))
    if load is not None and room is not None:
        free.sort(key=lambda a: (-load[a], a))
        targets.sort(key=lambda b: (-room[b], b))

    def extend(i: int) -> bool:
        if i == len(free):
            return True
        a = free[i]
        for b in targets:
            if not used[b] and problem.alike(a, b):
                sigma[a], used[b] = b, True
                if consistent(a) and extend(i + 1):
                    return True
                sigma[a], used[b] = -1, False
        return False

    return sigma if extend(0) else None


_NEAREST_MAX_FREE = 7  # devices a nearest relabelling permutes at most (7! = 5,040 tries, 0.02 s)


def _nearest_relabelling(problem: Problem, fixed: dict[int, int]) -> list[int] | None:
    """The permutation of devices with sigma[a] = b for every (a, b) in `fixed` that moves the
    fewest devices onto unlike ones (slower or smaller) and then breaks the fewest route costs
    between device pairs (an automorphism does neither); None where more than
    `_NEAREST_MAX_FREE` devices are free. A re-fit's hint: the free answer moved onto the cut
    devices chosen keeps its structure, where the free answer as it is puts its cuts on the
    wrong devices (GPT per head on the DGX-1: re-fit 0.98 -> 0.74 ms a layer)."""
    n = problem.n_devices
    free = [a for a in range(n) if a not in fixed]
    if len(free) > _NEAREST_MAX_FREE or len(set(fixed.values())) < len(fixed):
        return None
    names, cost = problem.devices, problem.router.cost_profile
    prof = [[cost(names[a], names[b]) for b in range(n)] for a in range(n)]
    alike = [[problem.alike(a, b) for b in range(n)] for a in range(n)]
    best: list[int] | None = None
    fewest = (math.inf, math.inf)
    for targets in itertools.permutations([b for b in range(n) if b not in fixed.values()]):
        sigma = [0] * n
        for a, b in [*fixed.items(), *zip(free, targets)]:
            sigma[a] = b
        broken = (sum(not alike[a][sigma[a]] for a in range(n)),
                  sum(prof[a][b] != prof[sigma[a]][sigma[b]] for a, b in itertools.combinations(range(n), 2)))
        if broken < fewest:
            best, fewest = sigma, broken
    return best


def orbit_representatives(problem: Problem) -> list[int]:
    """The smallest device of each orbit of the hardware's automorphism group."""
    reps: list[int] = []
    for d in range(problem.n_devices):
        if not any(_automorphism(problem, {d: r}) is not None for r in reps):
            reps.append(d)
    return reps


def _insert_dangling(problem: Problem, dec: Decomposition, device: list[int], order: list[list[int]]) -> Solution:
    """Place dangling ops with their group (or, for a group of dangling ops only, beside the
    neighbour they exchange the most bytes with) and slot them into idle gaps: a sink after
    its inputs arrive, a source before its first consumer on its device."""
    dangling = set(dec.dangling)
    sources: list[int] = []
    sinks: list[int] = []
    heads: list[list[int]] = [[] for _ in problem.devices]
    used = [0] * problem.n_devices
    for k, d in enumerate(device):
        if d >= 0:
            used[d] += problem.memory_bytes[k]

    def room(d: int) -> float:
        cap = problem.capacity_bytes[d]
        return math.inf if cap is None else cap - used[d]

    for k in dec.dangling:
        g = problem.group[k]
        mates = [x for x in problem.groups[g] if x not in dangling]
        placed = [x for x in problem.groups[g] if x in dangling and device[x] >= 0 and x != k]
        if mates:
            device[k] = device[mates[0]]
        elif placed:
            device[k] = device[placed[0]]
        else:
            links = [(problem.edges[i].size_bytes, problem.edges[i].src) for i in problem.preds[k]]
            links += [(problem.edges[i].size_bytes, problem.edges[i].dst) for i in problem.succs[k]]
            neighbours = [x for _, x in sorted(links, reverse=True) if x not in dangling] or [x for _, x in links]
            device[k] = device[neighbours[0]] if neighbours and device[neighbours[0]] >= 0 else -1
            if device[k] not in problem.allowed[g]:
                device[k] = problem.allowed[g][0]
            device[k] = _nearest_fitting(problem, g, device[k], room)
        used[device[k]] += problem.memory_bytes[k]
        # by the kind `_dangling` found: a source whose successors are all dangling sources
        # too must still come before them (msr-form graphs have such chains)
        (sources if k in dec.dangling_sources else sinks).append(k)
    for k in sources:  # ascending: a source's dangling inputs come first
        heads[device[k]].append(k)
    for k in sinks:
        if k not in dec.bridges:
            order[device[k]].append(k)
    # a bridge goes where its device's order reaches the first time cut it spans: after
    # everything that comes before that cut (its inputs too), before the cut and all after it.
    # Slotted into an earlier gap instead, a chain of bridges over several devices can close
    # a cycle through the devices' orders where ops of no duration tie (bridge_fuzz.py)
    after_cut = latest_cut(problem, dec.cuts)  # a bridge spans the cut after its latest
    for k in sorted(dec.bridges):  # ascending: a bridge's bridge inputs at the same cut go first
        seq = order[device[k]]
        seq.insert(next((j for j, x in enumerate(seq) if after_cut[x] > after_cut[k]), len(seq)), k)
    for d in range(problem.n_devices):
        order[d] = heads[d] + order[d]
    sol = Solution(device=device, order=order)
    sched = retime(problem, sol)
    for k in sorted(set(dec.dangling) - dec.bridges):
        d = device[k]
        seq = [x for x in order[d] if x != k]
        limit = _first_descendant(problem, k, seq)
        ready = max((sched.end_ms[problem.edges[i].src] + problem.delay_ms(problem.edges[i], device[problem.edges[i].src], d)
                     for i in problem.preds[k]), default=0.0)
        ends = [sched.end_ms[x] for x in seq]
        pos = bisect_right(ends, ready)
        t = ready
        dur = problem.time_ms[k][d]
        while pos < len(seq) and t + dur > sched.start_ms[seq[pos]] + 1e-12:
            t = max(t, sched.end_ms[seq[pos]])
            pos += 1
        if pos > limit:  # no gap before its first consumer: go right before it
            pos = limit
            t = max(ready, sched.end_ms[seq[pos - 1]] if pos > 0 else 0.0)
        seq.insert(pos, k)
        order[d] = seq
        sched.start_ms[k], sched.end_ms[k] = t, t + dur
    return Solution(device=device, order=order)


def _first_descendant(problem: Problem, k: int, seq: list[int]) -> int:
    """The position in `seq` of the first op that descends from k (its length if none)."""
    below = problem.descendants[k]
    return next((j for j, x in enumerate(seq) if below >> x & 1), len(seq))


def _nearest_fitting(problem: Problem, g: int, prev: int, room: Callable[[int], float]) -> int:
    """`prev` when group g fits there (`room(d)`: bytes left on d), else the allowed device
    nearest to `prev` (by the delay of 1 MB) where it fits, the one with most room first;
    `prev` (or g's first allowed device) when it fits nowhere, for placer.repair."""
    allowed = problem.allowed[g]
    need = problem.group_memory_bytes(g)
    if prev in allowed and room(prev) >= need:
        return prev
    fitting = [d for d in allowed if room(d) >= need]
    if not fitting:
        return prev if prev in allowed else allowed[0]
    src = problem.devices[prev]
    return min(fitting, key=lambda d: (problem.router.delay_ms(1_000_000, src, problem.devices[d]), -room(d), d))


class _Assignment(dict):
    """Group -> device while stitching, with the memory each device holds so far.

    Time cuts outside every component (the long chains between repeated blocks) follow
    the previous cut's device while it has room and move to the nearest device with the
    most room when it is full: the chain pays one transfer instead of overloading a
    device. Whatever still overflows is left to placer.repair."""

    def __init__(self, problem: Problem):
        super().__init__()
        self.problem = problem
        self.used = [0] * problem.n_devices

    def __setitem__(self, g: int, d: int) -> None:
        if g in self:
            self.used[self[g]] -= self.problem.group_memory_bytes(g)
        super().__setitem__(g, d)
        self.used[d] += self.problem.group_memory_bytes(g)

    def room(self, d: int) -> float:
        cap = self.problem.capacity_bytes[d]
        return math.inf if cap is None else cap - self.used[d]

    def follow(self, g: int, prev: int, memory_aware: bool = True) -> None:
        if not memory_aware and prev in self.problem.allowed[g]:
            self[g] = prev
        else:
            self[g] = _nearest_fitting(self.problem, g, prev, self.room)


def solve_decomposed(problem: Problem, dec: Decomposition, budget: Budget, time_limit_s: float,
                     hint: Solution | None, on_step: Callable[[str], None] | None = None,
                     pool: SubSolvePool | None = None, bound_to_beat_ms: float = 0.0) -> DecomposedAnswer:
    """Bound and (when the hardware allows stitching) an answer, within about time_limit_s
    of `budget`. `on_step(message)` hears of each component solve before it starts (progress).
    With a `pool` of more than one worker the component solves run there, that many at once
    (`_first_pass_in_pool`, `_close_gaps_in_pool`). The coupled bound (placer.chain_loads)
    runs only where the components' bound reaches `bound_to_beat_ms` (the best known
    elsewhere): only there can it become the tight one; it gets what time the components'
    rounds leave (none while one of them is still open at the deadline).

    On hardware that is not vertex-transitive at least a fifth of the time is kept for
    re-fitting components that no automorphism maps onto the cut devices already chosen.
    """
    began = budget.spent()
    deadline = began + time_limit_s
    representatives = orbit_representatives(problem)
    transitive = len(representatives) == 1
    refit_s = 0.0 if transitive else time_limit_s / 5
    time_limit_s -= refit_s
    cut_ms = sum(problem.min_time_ms(c) for c in dec.cuts)
    # same-shaped components are solved once: source[c] is the first component shaped like c
    first_of_shape: dict[tuple, int] = {}
    source = [first_of_shape.setdefault(_shape(problem, dec, comp), c) for c, comp in enumerate(dec.components)]
    copies = [source.count(c) for c in range(len(source))]
    distinct = [c for c in range(len(source)) if source[c] == c]
    solved: dict[int, _ComponentAnswer] = {}
    sizes = [sum(len(dec.segments[j]) for j in comp) for comp in dec.components]
    total = max(1, sum(sizes[c] for c in distinct))
    first_pass_s = FIRST_PASS_SHARE * time_limit_s
    step = on_step or (lambda message: None)
    took_s: list[float] = []  # each distinct component's first solve, as measured
    relaxed = symmetric_relaxation(problem)
    shared = _Shared(problem, dec, representatives, budget.deterministic, budget.threads, budget.seed, relaxed)
    in_pool = pool is not None and pool.workers > 1
    if in_pool:
        assert pool is not None
        last = _first_pass_in_pool(pool, shared, budget, distinct, sizes, first_pass_s, hint, solved, took_s, step)
    for i, c in enumerate([] if in_pool else distinct):  # in a pool, the first pass ran above
        remaining = first_pass_s - (budget.spent() - began)
        # past the first pass's share (a loaded machine, many components) each component
        # still needs an answer for the stitch, in as little time as CP-SAT takes
        share = max(0.05, remaining * sizes[c] / max(1, total)) if remaining > 0 else 0.01
        total -= sizes[c]
        step(f"component {c + 1} of {len(dec.components)} ({i + 1} of {len(distinct)} distinct, "
             f"{sizes[c]} ops, limit {share:.1f} s)")
        solve_began = time.perf_counter()
        solved[c] = _solve_component(problem, dec, dec.components[c], share, budget, hint,
                                     representatives=representatives)
        took_s.append(time.perf_counter() - solve_began)
    # then, while time is left, the component with the largest absolute gap (times its
    # copies) is solved again from its answer, each time with twice the time it last had:
    # cheap proofs come first, and on a loaded machine the hard components still get time
    if not in_pool:
        last = {c: first_pass_s * sizes[c] / max(1, sum(sizes[x] for x in distinct)) for c in distinct}
    rounds = _Rounds(last, dict(last))
    if relaxed is not None and problem.memory_exceeds_a_device():
        # where memory binds, the stitch's re-fits may take all the time after it: the
        # relaxation's rounds come before it
        rounds.relaxed_open = set(distinct)
    close_gaps = (partial(_close_gaps_in_pool, pool, shared, budget, solved, copies, rounds, step) if in_pool else
                  partial(_close_gaps, shared, budget, solved, copies, rounds, step))
    close_gaps(began + time_limit_s)
    answers = [solved[c] if source[c] == c else
               _copy_answer(problem, dec, solved[source[c]], dec.components[source[c]], comp)
               for c, comp in enumerate(dec.components)]
    stats = SolveStats(  # the bound, the proofs and the time are recorded after the last rounds
        decomposition_cuts=len(dec.cuts), decomposition_components=len(dec.components),
        decomposition_distinct_components=len(distinct), decomposition_largest_component_ops=max(sizes, default=0),
        decomposition_dangling_ops=len(dec.dangling), decomposition_bridges=len(dec.bridges),
        decomposition_parts_ms=cut_ms + sum(a.objective_ms for a in answers),
        decomposition_workers=pool.workers if in_pool and pool is not None else None,
        decomposition_first_pass_s=[round(x, 3) for x in took_s],
    )
    try:
        schedule, alternative = _stitched_answers(problem, dec, answers, source, budget, deadline, stats, step)
        stitch_error = None
    except SolutionCheckError as exc:  # a bug in the stitch: the answer is lost, never the bound
        schedule, alternative, stitch_error = None, None, str(exc)
    if relaxed is not None:
        rounds.relaxed_open = set(distinct)
    # the time kept for re-fits that were not needed proves more (the stitched answer stays),
    # with the symmetric relaxation in every other round
    close_gaps(deadline)
    forced_ms = _forced_moves_ms(problem, dec)
    bound = cut_ms + forced_ms + sum(solved[source[c]].bound_ms for c in range(len(dec.components)))
    stats.decomposition_bound_ms = bound
    stats.decomposition_components_optimal = sum(solved[source[c]].optimal for c in range(len(dec.components)))
    chain_ms = None
    if bound >= bound_to_beat_ms and _dangling_on_the_chain(problem, dec):
        # with the time the components' rounds left: while a gap is open, its proof pays more
        seconds = min(deadline - budget.spent(), CHAIN_LOADS_SHARE * (deadline - began))
        chain_ms = _chain_loads(problem, dec, [solved[source[c]] for c in range(len(dec.components))],
                                source, budget, seconds, representatives, step)
        stats.decomposition_chain_loads_ms = chain_ms
    stats.decomposition_s = budget.spent() - began
    if in_pool and pool is not None:
        stats.decomposition_places = len(pool.places)
    return DecomposedAnswer(bound, schedule, stats=stats, alternative=alternative, chain_loads_ms=chain_ms,
                            stitch_error=stitch_error)


def _forced_moves_ms(problem: Problem, dec: Decomposition) -> float:
    """What the chain of time cuts must spend on transfers because memory parts its cuts.

    A run of consecutive cuts on one device holds all their groups' memory, so where the
    chain fits on no device it switches devices between some cuts; a switch between cuts
    joined directly delays the chain by their tensors' crossing (`_crossing_ms`). A switch
    where ops sit between the cuts is free here (their component's bound prices what it can),
    as is one a component's own bound prices (`dec.switches`); cuts of one group never part.
    The cheapest split of the chain into runs that fit is a shortest path over the cuts
    (GPT per head on a memory-tight DGX-1: the language-model head's group and the loss's fit
    on no GPU together, and the 412 MB of logits between them cross over and back, 16.5 ms;
    PipeDream's ResNet-50 on a memory-tight DGX-1, 274 cuts: 11.3 ms)."""
    cuts = dec.cuts
    if not cuts or not problem.memory_exceeds_a_device():
        return 0.0
    crossing = [0.0] * len(cuts)  # [j]: cuts j - 1 and j on different devices
    for j in range(1, len(cuts)):
        u, v = cuts[j - 1], cuts[j]
        if problem.group[u] == problem.group[v]:
            crossing[j] = math.inf
        elif not dec.segments[j] and j not in dec.switches:
            crossing[j] = _crossing_ms(problem, u, v)
    cheapest = [math.inf] * (len(cuts) + 1)  # [i]: the crossings paid before a run starts at cut i
    cheapest[0] = 0.0
    run = _Run(problem)
    first = 0                                # the run ending at cut j starts at `first` or later
    starts: deque[int] = deque()             # candidate starts, their `cheapest` increasing
    for j, cut in enumerate(cuts):
        run.add(problem.group[cut])
        while starts and cheapest[starts[-1]] >= cheapest[j]:
            starts.pop()
        starts.append(j)
        while first <= j and not run.fits():
            run.remove(problem.group[cuts[first]])
            first += 1
        while starts and starts[0] < first:
            starts.popleft()
        if not starts:
            return 0.0  # one cut's group fits no device: no placement at all
        cheapest[j + 1] = cheapest[starts[0]] + (crossing[j + 1] if j + 1 < len(cuts) else 0.0)
    return cheapest[-1] if math.isfinite(cheapest[-1]) else 0.0


class _Run:
    """The groups of a run of cuts (with multiplicity) and whether one device holds them all:
    `Problem.fit_together` kept up to date as cuts join and leave the run, so the sliding
    window of `_forced_moves_ms` stays linear instead of re-summing each run."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.count: dict[int, int] = defaultdict(int)
        self.need = 0
        self.allowing = [0] * problem.n_devices  # per device, the run's distinct groups that may use it

    def add(self, g: int) -> None:
        if self.count[g] == 0:
            self.need += self.problem.group_memory_bytes(g)
            for d in self.problem.allowed[g]:
                self.allowing[d] += 1
        self.count[g] += 1

    def remove(self, g: int) -> None:
        self.count[g] -= 1
        if self.count[g] == 0:
            del self.count[g]
            self.need -= self.problem.group_memory_bytes(g)
            for d in self.problem.allowed[g]:
                self.allowing[d] -= 1

    def fits(self) -> bool:
        return any(self.allowing[d] == len(self.count) and (cap is None or self.need <= cap)
                   for d, cap in enumerate(self.problem.capacity_bytes))


def _crossing_ms(problem: Problem, u: int, v: int) -> float:
    """The least delay between u's end and v's start when they run on different devices."""
    delays = [pair_delays(problem, problem.edges[i]) for i in problem.edges_between(u, v)]
    pairs = itertools.product(problem.allowed[problem.group[u]], problem.allowed[problem.group[v]])
    return min((max((x.get((a, b), 0.0) for x in delays), default=0.0) for a, b in pairs if a != b),
               default=0.0)


def _stitched_answers(problem: Problem, dec: Decomposition, answers: list[_ComponentAnswer], source: list[int],
                      budget: Budget, deadline: float, stats: SolveStats, step: Callable[[str], None]
                      ) -> tuple[Schedule | None, Schedule | None]:
    """The components' answers stitched (then the best of it resequenced and its components
    moved), and where memory binds the stitch that keeps the time cuts on their chain."""
    memory_binds = problem.memory_exceeds_a_device()
    stitch = _stitch(problem, dec, list(answers), budget, deadline, stats, memory_binds, step, source)
    kept_on_chain = _stitch(problem, dec, list(answers), budget, deadline, stats, memory_binds, step, source,
                            cuts_follow_memory=False) if memory_binds else None
    alternative = kept_on_chain.schedule if kept_on_chain is not None else None
    if stitch is None:
        return None, alternative
    schedule = stitch.schedule
    stats.decomposition_stitched_ms = schedule.makespan_ms
    resequenced = resequence(problem, schedule.solution.device)
    if resequenced is not None:
        stats.decomposition_resequenced_ms = resequenced.makespan_ms
        if resequenced.makespan_ms < schedule.makespan_ms:  # (a list schedule never overflows memory)
            schedule = resequenced
    step("components moved to other devices")
    now = budget.spent()
    relabel_by = now + RELABEL_SHARE * (deadline - now) if any(_is_open(a) for a in answers) else deadline
    relabelled = _relabel_components(problem, dec, stitch, schedule, budget, relabel_by)
    if relabelled is not schedule:
        stats.decomposition_relabelled_ms = relabelled.makespan_ms
        schedule = relabelled
    return schedule, alternative


def _dangling_on_the_chain(problem: Problem, dec: Decomposition) -> bool:
    """Whether some dangling op shares a group with a time cut or a component's op: the work
    that the decomposition bound drops and placer.chain_loads adds back."""
    held = {problem.group[k] for k in dec.cuts} | {problem.group[k] for seg in dec.segments for k in seg}
    return problem.n_devices > 1 and any(problem.group[k] in held and problem.min_time_ms(k) > 0
                                         for k in dec.dangling)


def _chain_loads(problem: Problem, dec: Decomposition, answers: list[_ComponentAnswer], source: list[int],
                 budget: Budget, seconds: float, representatives: list[int],
                 step: Callable[[str], None]) -> float | None:
    """placer.chain_loads' bound within `seconds`: two thirds for the components' bounds spread
    and switched (`coupled_parts`), the rest for the master (it needs 0.2-0.6 s where the parts
    need seconds)."""
    if seconds < 0.2:
        return None
    began = budget.spent()
    step(f"components coupled through device loads (limit {seconds:.1f} s)")
    parts = coupled_parts(problem, dec, answers, source, budget, 2 * seconds / 3, representatives)
    return chain_loads(problem, parts, budget, seconds - (budget.spent() - began))


def coupled_parts(problem: Problem, dec: Decomposition, answers: list[_ComponentAnswer], source: list[int],
                  budget: Budget, seconds: float, representatives: list[int]) -> ChainLoads:
    """The master's inputs: each distinct component (`source[c] == c`) solved spread and
    switched, and each of its segments alone, within `seconds` in all; `answers` give the
    free bounds. Most of these solves prove in a fraction of an even share and a few need
    many times it (zoo ResNet-50 on the DGX-1: a spread solve needs 1.2 s where its share was
    0.3 s, and the master then proved nothing above the components' bound): a first round
    shares half the time by ops, a second gives what is left to the solves not yet proven."""
    distinct = sorted(set(source))
    solves: list[tuple[int, str, list[int], list[int] | None]] = []  # (component, kind, segments, groups apart)
    for c in distinct:
        comp = dec.components[c]
        groups, touching = component_groups(problem, dec.cuts, dec.segments, comp)
        solves += [(c, kind, comp, apart) for kind, apart in (("spread", groups), ("switched", touching))
                   if len(apart) > 1]
        solves += [(c, "alone", [j], None) for j in comp] if len(comp) > 1 else []
    ops = [sum(len(dec.segments[j]) for j in segments) for _, _, segments, _ in solves]
    bound = [0.0] * len(solves)
    pending, start = list(range(len(solves))), budget.spent()
    for share_of_left in (0.5, 1.0):
        began, weight = budget.spent(), sum(ops[i] for i in pending)
        round_s = share_of_left * (seconds - (began - start))
        unproven = []
        for i in pending:
            c, _, segments, apart = solves[i]
            limit = max(0.0, round_s - (budget.spent() - began)) * ops[i] / max(1, weight)
            weight -= ops[i]
            answer = _solve_component(problem, dec, segments, limit, budget, None,
                                      representatives=representatives, apart=apart)
            bound[i] = max(bound[i], answer.bound_ms)
            if not answer.optimal:
                unproven.append(i)
        pending = unproven
    spread = {c: answers[c].bound_ms for c in distinct}
    switched = dict(spread)
    alone = {c: [answers[c].bound_ms] if len(dec.components[c]) == 1 else [] for c in distinct}
    for (c, kind, _, _), ms in zip(solves, bound, strict=True):
        if kind == "alone":
            alone[c].append(ms)  # in the component's segment order
        else:
            into = spread if kind == "spread" else switched
            into[c] = max(into[c], ms)
    segment_bound = [0.0] * len(dec.segments)
    for c, comp in enumerate(dec.components):
        # same-shaped components list their segments in the same order
        for j, ms in zip(comp, alone[source[c]], strict=True):
            segment_bound[j] = ms
    return ChainLoads(dec.cuts, dec.segments, dec.components, [a.bound_ms for a in answers],
                      [spread[source[c]] for c in range(len(dec.components))],
                      [max(spread[source[c]], switched[source[c]]) for c in range(len(dec.components))],
                      segment_bound, frozenset(dec.switches))


@dataclass
class _Rounds:
    """What the next gap round of each component solves, and with how much time.

    A component is solved again from its answer with twice the time it last had. Once
    the answer is stitched (only the bound can still change), where the hardware has a
    symmetric relaxation (placer.relax: every device pair as fast as the fastest, so every
    device interchangeable), rounds alternate between the relaxation (a bound only, often
    proven far sooner from the component's answer as a hint; `_solve_round`) and the
    component, starting with the relaxation, until the relaxation is proven. Before the
    stitch the rounds go to the component itself: they also improve its answer (the
    relaxation in every other round there cost the per-head BERT-12 on a DGX-1 1.5 ms of
    answer).
    """

    last: dict[int, float]              # component -> time its last solve had
    relaxed_last: dict[int, float]      # the same for its relaxation
    relaxed_open: set[int] = field(default_factory=set)  # components whose relaxation may still raise their bound
    relaxed_done: set[int] = field(default_factory=set)  # ... whose last round solved the relaxation

    def next(self, c: int, remaining: float) -> tuple[bool, float]:
        """(solve the relaxation?, time limit) of component c's next round."""
        relaxed = c in self.relaxed_open and c not in self.relaxed_done
        shares = self.relaxed_last if relaxed else self.last
        shares[c] = min(remaining, max(0.5, 2 * shares[c]))
        return relaxed, shares[c]

    def record(self, c: int, relaxed: bool, old: _ComponentAnswer, again: _ComponentAnswer) -> _ComponentAnswer:
        """Component c's answer after a round that gave `again`."""
        if not relaxed:
            self.relaxed_done.discard(c)
            return _better(old, again)
        self.relaxed_done.add(c)
        if again.optimal:
            self.relaxed_open.discard(c)
        # the relaxation's placement may not meet the true delays: only its bound counts
        return _better(old, _ComponentAnswer({}, {}, again.bound_ms, math.inf, False, again.status))


def _round_message(c: int, relaxed: bool, answer: _ComponentAnswer, share: float) -> str:
    what = "relaxed to equal links" if relaxed else "again"
    return f"component {c + 1} {what} (gap {answer.objective_ms - answer.bound_ms:.4g} ms, limit {share:.1f} s)"


def _close_gaps(shared: _Shared, budget: Budget, solved: dict[int, _ComponentAnswer], copies: list[int],
                rounds: _Rounds, step: Callable[[str], None], until: float) -> None:
    """Until `until` (in budget time) or every component is proven, give the component with
    the largest open gap (times its copies) its next round (`_Rounds`)."""
    while True:
        remaining = until - budget.spent()
        open_gaps = _open_gaps(solved, copies)
        if remaining < 0.2 or not open_gaps:
            return
        _, c = open_gaps[-1]
        relaxed, share = rounds.next(c, remaining)
        step(_round_message(c, relaxed, solved[c], share))
        again = _solve_round(shared, c, relaxed, share, budget, solved[c])
        solved[c] = rounds.record(c, relaxed, solved[c], again)


def _solve_round(shared: _Shared, c: int, relaxed: bool, seconds: float, budget: Budget,
                 hint: Solution | _ComponentAnswer | None) -> _ComponentAnswer:
    """Component c's gap round from `hint`; a round of its relaxation (kept for its bound only)
    tries CP-SAT's default search for `RELAXED_QUICK_SHARE` of the time and, unless that
    proves it, its lower-bound tree search for the rest (GPT per head on the DGX-1, a 96-op
    layer's relaxation: in 4.6 work units the default search proves 0.39 of its answer, the
    tree search 0.83 of it)."""
    comp = shared.dec.components[c]
    if not relaxed:
        return _solve_component(shared.problem, shared.dec, comp, seconds, budget, hint,
                                representatives=shared.representatives)
    assert shared.relaxed is not None
    began = budget.spent()
    quick = _solve_component(shared.relaxed, shared.dec, comp, RELAXED_QUICK_SHARE * seconds, budget, hint,
                             representatives=[0])
    left = seconds - (budget.spent() - began)
    if quick.optimal or left < 0.05:  # (too little left for a second solve to prove anything)
        return quick
    deep = _solve_component(shared.relaxed, shared.dec, comp, left, budget, quick if quick.device_of_group else hint,
                            representatives=[0], bound_search=True)
    return _better(quick, deep)


def _open_gaps(solved: dict[int, _ComponentAnswer], copies: list[int]) -> list[tuple[float, int]]:
    """(absolute gap times copies, component) of every component not proven, smallest first."""
    return sorted(((a.objective_ms - a.bound_ms) * copies[c], c) for c, a in solved.items() if _is_open(a))


def _is_open(answer: _ComponentAnswer) -> bool:
    """Whether the component's gap is open: another round may still raise its bound."""
    return not answer.optimal and not _meets_bound(answer)


def _meets_bound(answer: _ComponentAnswer) -> bool:
    return answer.objective_ms - answer.bound_ms <= 1e-9 * max(1.0, answer.objective_ms)


def _better(old: _ComponentAnswer, again: _ComponentAnswer) -> _ComponentAnswer:
    """A component solved again from `old`: the better answer, the better bound."""
    if not again.device_of_group:
        old.bound_ms = max(old.bound_ms, again.bound_ms)
        old.optimal = old.optimal or _meets_bound(old)
        return old
    again.bound_ms = max(again.bound_ms, old.bound_ms)
    if again.objective_ms > old.objective_ms:
        again.device_of_group, again.local_start_ms = old.device_of_group, old.local_start_ms
        again.objective_ms = old.objective_ms
    again.optimal = again.optimal or _meets_bound(again)
    return again


# ---------------------------------------------------------------- component solves in a pool (placer.parallel)


@dataclass(frozen=True)
class _Shared:
    """What every component solve of one decomposition needs (sent to a pool's workers once)."""

    problem: Problem
    dec: Decomposition
    representatives: list[int]
    deterministic: bool
    threads: int
    seed: int
    relaxed: Problem | None = None      # placer.relax.symmetric_relaxation(problem)


@dataclass(frozen=True)
class _Task:
    component: int
    time_limit_s: float
    hint: Solution | _ComponentAnswer | None
    relaxed: bool = False               # solve the component's symmetric relaxation (a bound only)


def _solve_task(shared: _Shared, task: _Task) -> tuple[_ComponentAnswer, float, float]:
    """One component solve in a pool's worker, on a budget of its own: (answer, CP-SAT work,
    wall-clock seconds)."""
    budget = Budget(task.time_limit_s, shared.deterministic, shared.threads, shared.seed)
    answer = _solve_round(shared, task.component, task.relaxed, task.time_limit_s, budget, task.hint)
    return answer, budget.work, budget.elapsed()


def _first_pass_in_pool(pool: SubSolvePool, shared: _Shared, budget: Budget, distinct: list[int], sizes: list[int],
                        first_pass_s: float, hint: Solution | None, solved: dict[int, _ComponentAnswer],
                        took_s: list[float], step: Callable[[str], None]) -> dict[int, float]:
    """Every distinct component at once, each with `pool.workers` times its share of the first
    pass (at most all of it); returns the time each had (`last` of the gap rounds)."""
    total = max(1, sum(sizes[c] for c in distinct))
    last = {c: min(first_pass_s, max(0.05, first_pass_s * pool.workers * sizes[c] / total)) for c in distinct}
    step(f"{len(distinct)} distinct components on {pool.workers} workers (first pass {first_pass_s:.1f} s)")
    solved.update(_run_round(pool, shared, budget, [_Task(c, last[c], hint) for c in distinct], took_s))
    return last


def _close_gaps_in_pool(pool: SubSolvePool, shared: _Shared, budget: Budget, solved: dict[int, _ComponentAnswer],
                        copies: list[int], rounds: _Rounds, step: Callable[[str], None], until: float) -> None:
    """`_close_gaps` with the `pool.workers` largest open gaps given their next round at once.
    Answers are combined in component order."""
    while True:
        remaining = until - budget.spent()
        open_gaps = _open_gaps(solved, copies)
        if remaining < 0.2 or not open_gaps:
            return
        chosen = sorted(c for _, c in open_gaps[-pool.workers:])
        tasks = [_Task(c, share, solved[c], relaxed) for c in chosen for relaxed, share in [rounds.next(c, remaining)]]
        step(f"components {', '.join(str(c + 1) for c in chosen)} again (limit up to "
             f"{max(t.time_limit_s for t in tasks):.1f} s)")
        again = _run_round(pool, shared, budget, tasks)
        for task in tasks:
            solved[task.component] = rounds.record(task.component, task.relaxed, solved[task.component],
                                                   again[task.component])


def _run_round(pool: SubSolvePool, shared: _Shared, budget: Budget, tasks: list[_Task],
               took_s: list[float] | None = None) -> dict[int, _ComponentAnswer]:
    """Run `tasks` in the pool; a task that did not come back found nothing (bound 0: valid).

    The budget is charged the wall clock, or in deterministic mode the round's work as if its
    solves ran `pool.workers` at a time (the longest one, or the total over the workers): the
    same input and worker count give the same answer wherever the solves ran."""
    wait_s = None if shared.deterministic else max(t.time_limit_s for t in tasks) * 2 + 30.0
    results = pool.map(_solve_task, shared, tasks, timeout_s=wait_s)
    answers: dict[int, _ComponentAnswer] = {}
    works = []
    for task, result in zip(tasks, results, strict=True):
        if result is None:
            answers[task.component] = _ComponentAnswer({}, {}, 0.0, math.inf, False, "lost")
            works.append(task.time_limit_s * WORK_PER_SECOND)
            continue
        answers[task.component], work, seconds = result
        works.append(work)
        if took_s is not None:
            took_s.append(seconds)
    budget.work += max(max(works, default=0.0), sum(works) / pool.workers)
    budget.solves += len(tasks)
    return answers


@dataclass
class _Stitch:
    """A stitched schedule and how it was made: each component's answer (after any re-fit)
    and the relabelling of its devices (answer's device d -> sigma[d])."""

    schedule: Schedule
    answers: list[_ComponentAnswer]
    sigmas: list[list[int]]


def _stitch(problem: Problem, dec: Decomposition, answers: list[_ComponentAnswer], budget: Budget,
            deadline: float, stats: SolveStats, balance_memory: bool, step: Callable[[str], None],
            source: list[int], cuts_follow_memory: bool = True) -> _Stitch | None:
    """One schedule of the whole graph from the components' answers, or None (stats say why).

    Walking time order, each component is relabelled onto the cut devices already chosen.
    With `balance_memory` (some device cannot hold the graph) each component is relabelled
    onto the devices with the most room (`_automorphism`); `step` hears of re-fits (progress);
    `source[c]`: the first component of c's shape (c's answer is a copy of its answer);
    `cuts_follow_memory`: see `_Assignment.follow`.

    Where no automorphism maps a component onto the cut devices chosen, the answers re-fitted
    for earlier components of its shape are tried before a re-fit of its own: on a machine
    whose automorphisms do not reach every device (the DGX-1: {0, 1, 4, 5} and {2, 3, 6, 7}),
    an answer whose time cuts end in the other orbit makes every copy after it fail, and one
    re-fit then serves them all (GPT per head, 16 layers: 1 re-fit instead of 15)."""
    if any(not a.device_of_group for a in answers):
        return None
    sigmas: list[list[int]] = [[] for _ in answers]  # [] until the walk meets the component
    refitted: list[int] = []

    def automorphism(ans: _ComponentAnswer, assigned: _Assignment) -> list[int] | None:
        fixed = {ans.device_of_group[g]: assigned[g] for g in ans.device_of_group if g in assigned}
        pinned_here = _pinned_points(problem, ans)
        clash = any(fixed.get(d, d) != d for d in pinned_here)
        fixed.update(pinned_here)
        load = room = None
        if balance_memory:
            load = [0] * problem.n_devices
            for g, d in ans.device_of_group.items():
                if g not in assigned:
                    load[d] += problem.group_memory_bytes(g)
            room = [assigned.room(d) for d in range(problem.n_devices)]
        valid = not clash and len(set(fixed.values())) == len(fixed)
        return _automorphism(problem, fixed, load, room) if valid else None

    def relabel(c: int, assigned: _Assignment) -> list[int] | None:
        ans = answers[c]
        sigma = automorphism(ans, assigned)
        for earlier in [x for x in refitted if source[x] == source[c]] if sigma is None else []:
            copied = _copy_answer(problem, dec, answers[earlier], dec.components[earlier], dec.components[c])
            sigma = automorphism(copied, assigned)
            if sigma is not None:
                answers[c] = copied
                stats.decomposition_refits_reused = (stats.decomposition_refits_reused or 0) + 1
                break
        if sigma is None:
            pinned = {g: assigned[g] for g in ans.device_of_group if g in assigned}
            # the time left (at least refit_s in all), shared by the components still to stitch
            # (a larger share for a re-fit that may serve later copies took the time the
            # proofs after the stitch need: per-head BERT-12 on the DGX-1, bound 33.75 -> 30.60)
            share = max(0.1, (deadline - budget.spent()) / sum(not s for s in sigmas))
            step(f"re-fitting component {c + 1} onto the cut devices chosen (limit {share:.1f} s)")
            nearest = _nearest_relabelling(problem, {ans.device_of_group[g]: d for g, d in pinned.items()})
            hint = ans if nearest is None else replace(
                ans, device_of_group={g: nearest[d] for g, d in ans.device_of_group.items()})
            ans = answers[c] = _solve_component(problem, dec, dec.components[c], share, budget, hint, pinned,
                                                good_enough_ms=ans.objective_ms)
            if not ans.device_of_group:
                stats.decomposition_failed = f"component {c} cannot be fitted: {ans.status}"
                return None
            sigma = list(range(problem.n_devices))
            refitted.append(c)
            stats.decomposition_refitted_components = (stats.decomposition_refitted_components or 0) + 1
        sigmas[c] = sigma
        return sigma

    device = _assign(problem, dec, answers, relabel, cuts_follow_memory)
    if device is None:
        return None
    return _Stitch(_stitched(problem, dec, answers, device), answers, sigmas)


def _relabel_components(problem: Problem, dec: Decomposition, stitch: _Stitch, best: Schedule, budget: Budget,
                        deadline: float) -> Schedule:
    """`best`, or a better schedule with some components moved to other devices.

    Each component keeps its answer up to a relabelling (`_moves`: one per device its
    heaviest device may go to). The stitch chose the relabellings that
    keep the time cuts on their devices, blind to the load the dangling ops add to a
    device: where they are heavy (a forward pass joined to the backward only by colocation
    groups, weight updates) the devices that carry the cut chain overflow, and moving a
    component (paying transfers at its cuts) can spread that load. Coordinate descent:
    each component in turn tries its relabellings, stitched anew and resequenced; a move is
    kept when it shortens the schedule without adding memory overflow. The number of
    stitches is bounded (`_RELABEL_WORK`), so deterministic runs stay deterministic."""
    options = [_moves(problem, ans) for ans in stitch.answers]
    sigmas = list(stitch.sigmas)
    best_overflow = sum(memory_overflow(problem, best.solution.device))
    evaluations, cap = 0, max(20, _RELABEL_WORK // max(1, problem.n_ops))
    improved = True
    while improved:
        improved = False
        for c, found in enumerate(options):
            for sigma in found:
                if sigma == sigmas[c]:
                    continue
                if evaluations >= cap or budget.spent() >= deadline:
                    return best
                evaluations += 1
                trial = sigmas[:c] + [sigma] + sigmas[c + 1:]
                device = _assign(problem, dec, stitch.answers, lambda x, _: trial[x], cuts_follow_memory=True)
                assert device is not None  # (every relabelling is given)
                schedule = _stitched(problem, dec, stitch.answers, device)
                overflow = sum(memory_overflow(problem, schedule.solution.device))
                if overflow > best_overflow:
                    continue
                resequenced = resequence(problem, schedule.solution.device)
                if resequenced is not None and resequenced.makespan_ms < schedule.makespan_ms:
                    schedule = resequenced
                if schedule.makespan_ms < best.makespan_ms * (1 - 1e-9):
                    best, best_overflow, sigmas, improved = schedule, overflow, trial, True
    return best


def _moves(problem: Problem, answer: _ComponentAnswer) -> list[list[int]]:
    """Relabellings of a component's answer (sigma[d]: where device d's groups go), one per
    device its heaviest device may go to: an automorphism of the hardware keeping pinned
    groups in place, else (a DGX-1 quad has one automorphism besides the identity) the swap
    of the two devices where they are alike and unpinned; the answer may then lose inside
    the component, and the stitch is re-timed anyway."""
    n = problem.n_devices
    work = [0.0] * n
    for g, d in answer.device_of_group.items():
        work[d] += sum(problem.time_ms[k][d] for k in problem.groups[g])
    heaviest = max(range(n), key=lambda d: (work[d], -d))
    pinned = _pinned_points(problem, answer)
    found: list[list[int]] = []
    for target in range(n):
        if pinned.get(heaviest, target) != target:
            continue
        sigma = _automorphism(problem, {**pinned, heaviest: target})
        if sigma is None and target not in pinned and problem.alike(heaviest, target):
            sigma = list(range(n))
            sigma[heaviest], sigma[target] = target, heaviest
        if sigma is not None and sigma not in found:
            found.append(sigma)
    return found


def _pinned_points(problem: Problem, answer: _ComponentAnswer) -> dict[int, int]:
    """d -> d for each device of the answer that holds a pinned group: what a relabelling
    must keep in place."""
    return {d: d for g, d in answer.device_of_group.items() if len(problem.allowed[g]) == 1}


def _assign(problem: Problem, dec: Decomposition, answers: list[_ComponentAnswer],
            relabel: Callable[[int, _Assignment], list[int] | None],
            cuts_follow_memory: bool) -> list[int] | None:
    """Devices of the ops outside `dec.dangling` (-1 for those): walking time order, a cut
    outside every component follows the previous cut (`_Assignment.follow`) and component c,
    when first met, puts its groups not yet placed where `relabel(c, assigned)` maps its
    answer's devices (None: give up)."""
    assigned = _Assignment(problem)
    device = [-1] * problem.n_ops
    done: set[int] = set()
    for j in range(len(dec.segments)):
        entry, _ = dec.boundary(j)
        c = dec.component_of_segment.get(j)
        if entry is not None and problem.group[entry] not in assigned:
            i = dec.cuts.index(entry)
            if i > 0:
                prev = device[dec.cuts[i - 1]]
            else:  # the first cut goes where its component's answer has it: elsewhere, on hardware
                # whose automorphisms do not reach every device, that component needs a re-fit
                prev = answers[c].device_of_group.get(problem.group[entry], 0) if c is not None else 0
            assigned.follow(problem.group[entry], prev, cuts_follow_memory)
        if entry is not None:
            device[entry] = assigned[problem.group[entry]]
        if c is None or c in done:
            continue
        done.add(c)
        sigma = relabel(c, assigned)
        if sigma is None:
            return None
        for g, d in answers[c].device_of_group.items():
            if g not in assigned:
                assigned[g] = sigma[d]
    dangling = set(dec.dangling)
    for k in range(problem.n_ops):
        if k not in dangling:
            device[k] = assigned[problem.group[k]]
    return device


def _stitched(problem: Problem, dec: Decomposition, answers: list[_ComponentAnswer],
              device: list[int]) -> Schedule:
    """The schedule of `device` (from `_assign`): per device, segments and cuts in time order,
    a segment's ops by their starts in its component's answer; dangling ops slotted in."""
    order: list[list[int]] = [[] for _ in problem.devices]
    for j, ops in enumerate(dec.segments):
        entry, _ = dec.boundary(j)
        if entry is not None:
            order[device[entry]].append(entry)
        c = dec.component_of_segment.get(j)
        local = answers[c].local_start_ms if c is not None else {}
        # zero-length ops first among equal starts: behind a longer op they would wait for it
        for k in sorted(ops, key=lambda k: (local.get((j, k), 0.0), problem.time_ms[k][device[k]] > 0, k)):
            order[device[k]].append(k)
    solution = _insert_dangling(problem, dec, list(device), order)
    return retime(problem, solution)
