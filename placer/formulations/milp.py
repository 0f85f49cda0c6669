"""The DLPlacer MILP (paper Section 6, eq. 7-13) as a PuLP model, for CBC and HiGHS.

    P[g, n]    binary      group g runs on device n (ops of a group share P)          eq. 7
    T[k]       continuous  start of op k (ms); Delta(k) = sum_n dur[k, n] P[g(k), n]
    C[e, a]    binary      edge e uses directed arc a (routing = "flow")              eq. 8-9
               flow out - flow in = P[g(src), x] - P[g(dst), x] at device x, 0 at switches
    D[e]       continuous  delay of edge e: sum_a C[e, a] (bytes / B(a) + L(a))        eq. 11
               (routing = "shortest": D[e] >= delay(a, b) (P[g(src), a] + P[g(dst), b] - 1))
    T[dst] >= T[src] + Delta(src) + D[e]                                              eq. 10
    O[i, j]    binary      i before j, for pairs not ordered by reachability that may share a device:
               T[j] >= T[i] + Delta(i) - M (1 - O) - M (1 - S),  T[i] >= T[j] + Delta(j) - M O - M (1 - S),
               S[i, j] >= P[g(i), n] + P[g(j), n] - 1 for every device n               eq. 12
    sum_g mem[g] P[g, n] <= Mem(n)  (written divided by Mem(n))                      eq. 13
    Cmax >= T[k] + Delta(k) for sinks; minimise Cmax.

M is the horizon: the best heuristic's makespan, which also caps Cmax.

Times are in a unit of `time_unit_ms` (a power of ten, see `_time_unit_ms`) so that no
time coefficient is tiny: CBC's probing treats small coefficients as zero, and with 1e-4 ms
ops its cuts removed the optimum (0.0001 ms too long). The objective stays Cmax in that
unit (a cost of 1e-7 per unit would fall under the solvers' dual tolerance);
`prob.objective_unit` tells solvers.pulp_milp to report objective and bound in ms.
"""
from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from placer.errors import SolutionCheckError
from placer.model import Problem
from placer.schedule import Schedule, Solution, solution_from_starts

__all__ = ["MilpFormulation", "build_milp"]


@dataclass
class MilpFormulation:
    prob: Any
    routing: str
    P: list[dict[int, Any]]
    T: list[Any]
    C: dict[int, dict[tuple[str, str], Any]]
    stats: dict[str, int] = field(default_factory=dict)
    time_unit_ms: float = 1.0
    big_m_ms: float = 0.0  # the big-M (the horizon): a solver's answer holds its rows only to its
                           # integrality tolerance times this, so the objective may undercut by as much

    def decode(self, problem: Problem) -> Solution:
        device = [0] * problem.n_ops
        for g, lits in enumerate(self.P):
            d = max(lits, key=lambda n: lits[n].varValue or 0.0)
            for k in problem.groups[g]:
                device[k] = d
        sol = solution_from_starts(problem, device, [t.varValue or 0.0 for t in self.T], self.time_unit_ms)
        for i, arcs in self.C.items():
            e = problem.edges[i]
            a, b = problem.devices[device[e.src]], problem.devices[device[e.dst]]
            if a != b:
                sol.routes[i] = _trace(arcs, a, b, problem.ops[e.src], problem.ops[e.dst])
        return sol


def _trace(arcs: dict[tuple[str, str], Any], a: str, b: str, src: str, dst: str) -> tuple[str, ...]:
    """A fewest-hop path from a to b over the arcs the flow uses.

    A time-limited incumbent may carry extra cycles or side branches of flow; they only add
    delay the model already charged, so any path inside the used arcs is no slower than D[e].
    """
    used: dict[str, list[str]] = {}
    for (u, v), var in sorted(arcs.items()):
        if (var.varValue or 0.0) > 0.5:
            used.setdefault(u, []).append(v)
    parent: dict[str, str | None] = {a: None}
    queue = deque([a])
    while queue and b not in parent:
        u = queue.popleft()
        for v in used.get(u, ()):
            if v not in parent:
                parent[v] = u
                queue.append(v)
    if b not in parent:
        raise SolutionCheckError(f"edge {src} -> {dst}: the MILP's routing flow has no path {a} -> {b}")
    path = [b]
    while (prev := parent[path[-1]]) is not None:
        path.append(prev)
    return tuple(reversed(path))


_MAX_HORIZON_UNITS = 1e5  # big-M in time units stays below this (tolerances are absolute)


def _time_unit_ms(problem: Problem, routing: str, horizon_ms: float) -> float:
    """The model's unit of time: the power of ten at or below the smallest positive duration
    or delay (at most 1 ms, so ordinary graphs keep ms), unless the horizon would then
    exceed _MAX_HORIZON_UNITS units."""
    values = [problem.time_ms[k][d] for k in range(problem.n_ops) for d in problem.allowed[problem.group[k]]]
    for e in problem.edges:
        gu, gv = problem.group[e.src], problem.group[e.dst]
        if gu == gv:
            continue
        if routing == "flow":
            values += [link.delay_ms(e.size_bytes) for link in problem.router.links.values()]
        else:
            values += [problem.delay_ms(e, a, b) for a in problem.allowed[gu] for b in problem.allowed[gv]]
    smallest = min((v for v in values if v > 0), default=1.0)
    unit = min(1.0, 10.0 ** math.floor(math.log10(smallest)))
    coarsest = 10.0 ** math.ceil(math.log10(max(horizon_ms, 1e-12) / _MAX_HORIZON_UNITS))
    return max(unit, coarsest)


def build_milp(problem: Problem, routing: str, incumbent: Schedule | None, lower_bound_ms: float,
               deadline: float | None = None) -> MilpFormulation | None:
    """Build the model; `incumbent` gives the big-M horizon and the warm start.

    None when `deadline` (time.perf_counter) passes first: the model of a big graph takes
    PuLP seconds to build (zoo Inception-V3 on 4 GPUs: about 15 s), which no time limit
    could otherwise cut.
    """
    import pulp

    def late() -> bool:
        return deadline is not None and time.perf_counter() > deadline

    if routing not in ("flow", "shortest"):
        raise ValueError(f"routing must be 'flow' or 'shortest', not {routing!r}")
    n_ops, devices = problem.n_ops, problem.devices
    if incumbent is not None:
        horizon = incumbent.makespan_ms * (1 + 1e-6)  # room for the solvers' tolerances (CBC, flow: seed 32593)
    else:
        horizon = sum(max(row) for row in problem.time_ms) + sum(
            max((problem.delay_ms(e, a, b) for a in range(len(devices)) for b in range(len(devices))), default=0.0)
            for e in problem.edges
        )
    unit = _time_unit_ms(problem, routing, horizon)
    horizon /= unit
    big_m = max(horizon, 1e-6)
    prob = pulp.LpProblem("dlplacer", pulp.LpMinimize)
    var = prob.add_variable

    P = [{d: var(f"P_{g}_{d}", cat="Binary") for d in allowed} for g, allowed in enumerate(problem.allowed)]
    for g, lits in enumerate(P):
        prob += pulp.lpSum(lits.values()) == 1, f"place_{g}"

    def delta(k: int) -> Any:
        lits = P[problem.group[k]]
        return pulp.lpSum(problem.time_ms[k][d] / unit * lits[d] for d in lits)

    T = [var(f"T_{k}", lowBound=0, upBound=horizon) for k in range(n_ops)]
    cmax = var("Cmax", lowBound=lower_bound_ms / unit, upBound=max(horizon, lower_bound_ms / unit))

    arcs = [(link.a, link.b) for link in problem.hardware.links] + [(link.b, link.a) for link in problem.hardware.links]
    nodes = list(problem.router.adjacent)
    C: dict[int, dict[tuple[str, str], Any]] = {}
    D: dict[int, Any] = {}
    for i, e in enumerate(problem.edges):
        if i % 64 == 0 and late():
            return None
        gu, gv = problem.group[e.src], problem.group[e.dst]
        if gu == gv:
            prob += T[e.dst] >= T[e.src] + delta(e.src), f"prec_{i}"
            continue
        D[i] = var(f"D_{i}", lowBound=0)
        prob += T[e.dst] >= T[e.src] + delta(e.src) + D[i], f"prec_{i}"
        if routing == "flow":
            C[i] = {(a, b): var(f"C_{i}_{j}", cat="Binary") for j, (a, b) in enumerate(arcs)}
            for x in nodes:
                out_flow = pulp.lpSum(C[i][a] for a in C[i] if a[0] == x)
                in_flow = pulp.lpSum(C[i][a] for a in C[i] if a[1] == x)
                d = problem.device_index.get(x)
                supply = 0
                if d is not None:
                    supply = P[gu].get(d, 0) - P[gv].get(d, 0)
                prob += out_flow - in_flow == supply, f"flow_{i}_{nodes.index(x)}"
            prob += D[i] == pulp.lpSum(
                problem.router.link(a, b).delay_ms(e.size_bytes) / unit * c for (a, b), c in C[i].items()
            ), f"delay_{i}"
        else:
            for a in P[gu]:
                for b in P[gv]:
                    if a != b:
                        prob += D[i] >= problem.delay_ms(e, a, b) / unit * (P[gu][a] + P[gv][b] - 1), \
                            f"delay_{i}_{a}_{b}"

    O: dict[tuple[int, int], Any] = {}
    S: dict[tuple[int, int], Any] = {}
    for i in range(n_ops):
        if late():
            return None
        for j in range(i + 1, n_ops):
            gi, gj = problem.group[i], problem.group[j]
            common = set(P[gi]) & set(P[gj])
            if not common or problem.ordered(i, j):
                continue
            O[i, j] = o = var(f"O_{i}_{j}", cat="Binary")
            if gi == gj:
                same: Any = 1
            else:
                S[i, j] = same = var(f"S_{i}_{j}", lowBound=0, upBound=1)
                for d in common:
                    prob += same >= P[gi][d] + P[gj][d] - 1, f"same_{i}_{j}_{d}"
            prob += T[j] >= T[i] + delta(i) - big_m * (1 - o) - big_m * (1 - same), f"order_{i}_{j}_a"
            prob += T[i] >= T[j] + delta(j) - big_m * o - big_m * (1 - same), f"order_{i}_{j}_b"

    for d, cap in enumerate(problem.capacity_bytes):
        demand = {g: problem.group_memory_bytes(g) for g, lits in enumerate(P) if d in lits}
        if cap is None or sum(demand.values()) <= cap:
            continue
        if cap == 0:  # a device without memory takes only ops that need none
            for g, mem in demand.items():
                if mem:
                    prob += P[g][d] == 0, f"memory_{d}_{g}"
            continue
        # in units of the capacity: byte-sized coefficients break the solvers' tolerances
        prob += pulp.lpSum(mem / cap * P[g][d] for g, mem in demand.items() if mem) <= 1, f"memory_{d}"

    for k in range(n_ops):
        if not problem.succs[k]:
            prob += cmax >= T[k] + delta(k), f"makespan_{k}"
    prob += cmax
    prob.objective_unit = unit  # solvers.pulp_milp reports objective and bound times this

    if late():
        return None
    if incumbent is not None:
        _warm_start(problem, incumbent, unit, P, T, cmax, C, D, O, S)
    return MilpFormulation(
        prob=prob, routing=routing, P=P, T=T, C=C, time_unit_ms=unit, big_m_ms=big_m * unit,
        stats={"variables": prob.numVariables(), "constraints": prob.numConstraints(), "disjunctions": len(O)},
    )


def _warm_start(problem: Problem, inc: Schedule, unit: float, P, T, cmax, C, D, O, S) -> None:  # noqa: ANN001
    """Set every variable to the incumbent's value (a complete MIP start; times in `unit` ms)."""
    sol = inc.solution
    for g, lits in enumerate(P):
        d = sol.device[problem.groups[g][0]]
        for n, lit in lits.items():
            lit.setInitialValue(1 if n == d else 0)
    for k, t in enumerate(T):
        t.setInitialValue(inc.start_ms[k] / unit)
    cmax.setInitialValue(inc.makespan_ms / unit)
    routes = {t.edge: t.route for t in inc.transfers}
    for i, d_var in D.items():
        route = routes.get(i, ())
        hops = set(zip(route, route[1:]))
        if i in C:
            for arc, c in C[i].items():
                c.setInitialValue(1 if arc in hops else 0)
        e = problem.edges[i]
        d_var.setInitialValue(sum(problem.router.link(a, b).delay_ms(e.size_bytes) for a, b in hops) / unit)
    position = {k: n for seq in sol.order for n, k in enumerate(seq)}
    for (i, j), o in O.items():
        o.setInitialValue(1 if position[i] < position[j] else 0)
    for (i, j), s in S.items():
        s.setInitialValue(1 if sol.device[i] == sol.device[j] else 0)
