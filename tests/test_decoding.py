"""Decoding solver start times into per-device orders (placer.schedule.solution_from_starts).

The regression: a zero-length op starting together with a longer one on its device was
ordered after it, delaying its successors (CBC said optimal 0.244 ms, the answer was a
feasible 0.366 ms), and solver tolerances could order an op before its own predecessor.
"""
from __future__ import annotations

import pytest

from placer.bounds import lower_bound_ms
from placer.engine import PlaceOptions, place
from placer.model import Problem, build_problem
from placer.schedule import retime, solution_from_starts
from placer.schema import parse_graph, parse_hardware
from tests.conftest import EXACT, fully_connected, graph

# found by tests/test_properties.py: the optimum is 0.244 (op0 alone; op2's transfer
# and op3, op5 fit beside it), CBC's optimal MILP solution decoded to 0.366
ZERO_LENGTH_TIES = {
    "ops": [{"id": "op0", "time_ms": 0.244, "memory_bytes": 3}, {"id": "op1", "time_ms": 0.0, "memory_bytes": 2},
            {"id": "op2", "time_ms": 0.0, "memory_bytes": 2}, {"id": "op3", "time_ms": 0.061, "memory_bytes": 2},
            {"id": "op4", "time_ms": 0.0, "memory_bytes": 0}, {"id": "op5", "time_ms": 0.061, "memory_bytes": 2}],
    "edges": [{"src": "op1", "dst": "op5", "bytes": 0}, {"src": "op2", "dst": "op3", "bytes": 765}],
}


def _problem(doc: dict, n_devices: int = 2) -> Problem:
    return build_problem(parse_graph(doc), parse_hardware(fully_connected(n_devices, bandwidth_gb_per_s=1.0)))


@pytest.mark.parametrize("solver", EXACT)
def test_zero_length_ties_are_optimal_on_every_back_end(solver: str) -> None:
    hw = fully_connected(2, bandwidth_gb_per_s=1.0)
    r = place(parse_graph(ZERO_LENGTH_TIES), parse_hardware(hw), PlaceOptions(solver=solver, time_limit_s=20, threads=1))
    assert r.status == "optimal" and r.makespan_ms == pytest.approx(0.244, abs=1e-9), (r.status, r.makespan_ms)


@pytest.mark.parametrize("backend", [s for s in EXACT if s != "cpsat"])
@pytest.mark.parametrize("routing", ["shortest", "flow"])
def test_the_milp_solution_decodes_to_its_objective(backend: str, routing: str) -> None:
    """Solved without a warm start (so no heuristic hides the decoding), an optimal MILP
    solution re-times to its own objective."""
    from placer.formulations.milp import build_milp
    from solvers.pulp_milp import solve_milp

    p = _problem(ZERO_LENGTH_TIES)
    f = build_milp(p, routing, None, lower_bound_ms(p))
    run = solve_milp(f.prob, backend, 20.0)
    assert run.status.value == "optimal" and run.objective == pytest.approx(0.244, abs=1e-6)
    assert retime(p, f.decode(p)).makespan_ms == pytest.approx(0.244, abs=1e-6)


@pytest.mark.skipif("cpsat" not in EXACT, reason="no CP-SAT")
def test_the_cpsat_solution_decodes_to_its_objective() -> None:
    from placer.formulations.cpsat_model import build_cpsat
    from solvers.cpsat import solve_cpsat

    p = _problem(ZERO_LENGTH_TIES)
    f = build_cpsat(p, None, lower_bound_ms(p))
    run, solver = solve_cpsat(f.model, 20.0)
    assert run.status.value == "optimal"
    assert retime(p, f.decode(solver.value, p)).makespan_ms <= 0.244 + f.rounding_slack_ms + 1e-9


@pytest.mark.skipif("cpsat" not in EXACT, reason="no CP-SAT")
def test_a_complete_hint_gives_every_variable_a_feasible_value() -> None:
    """`complete_hint` hints the symmetry-breaking helpers (two interchangeable GPUs) and the
    ends of ops whose duration depends on the device (a third, faster GPU) too; the hint
    is a solution at the incumbent's makespan. (CP-SAT takes such a hint as its first
    solution at once: what big models solved without presolve need.)"""
    from ortools.sat.python import cp_model

    from placer.formulations.cpsat_model import build_cpsat
    from placer.heuristics import heft

    doc = {"format": "placer.graph/v1", "name": "mixed",
           "ops": [{"id": f"op{i}", "flops": 1e9 * (1 + i % 4), "memory_bytes": 0} for i in range(12)],
           "edges": [{"src": f"op{i}", "dst": f"op{j}", "bytes": 10**6}
                     for i in range(12) for j in (i + 1, i + 3) if j < 12]}
    hw = fully_connected(3, bandwidth_gb_per_s=10.0, peak_tflops=1.0)
    hw["devices"][2]["peak_tflops"] = 2.0
    p = build_problem(parse_graph(doc), parse_hardware(hw))
    incumbent = heft(p)
    partial = build_cpsat(p, incumbent, lower_bound_ms(p))
    f = build_cpsat(p, incumbent, lower_bound_ms(p), complete_hint=True)
    n_vars = len(f.model.proto.variables)
    assert len(set(partial.model.proto.solution_hint.vars)) < n_vars
    assert sorted(f.model.proto.solution_hint.vars) == list(range(n_vars))
    solver = cp_model.CpSolver()
    solver.parameters.fix_variables_to_their_hinted_value = True
    solver.parameters.num_workers = 1
    assert solver.status_name(solver.solve(f.model)) == "OPTIMAL"
    assert solver.objective_value == f.horizon_ticks


def test_a_zero_length_op_goes_before_a_longer_op_starting_with_it() -> None:
    """a (2 ms) and z (0 ms) both start at 0 on one device; z feeds b on the other."""
    p = _problem(graph([("a", 2.0), ("z", 0.0), ("b", 1.0)], [("z", "b", 0)]))
    sol = solution_from_starts(p, [0, 0, 1], [0.0, 0.0, 0.0])
    assert sol.order == [[1, 0], [2]]
    assert retime(p, sol).makespan_ms == pytest.approx(2.0)


def test_exact_starts_give_the_solver_order() -> None:
    """On one device: c (0 ms) at 0, b (0 ms) and a (1 ms) at 1, e (0 ms) and d (2 ms) at 2."""
    p = _problem(graph([("a", 1.0), ("b", 0.0), ("c", 0.0), ("d", 2.0), ("e", 0.0)]), n_devices=1)
    sol = solution_from_starts(p, [0] * 5, [1.0, 1.0, 0.0, 2.0, 2.0])
    assert sol.order == [[2, 1, 0, 4, 3]]


def test_starts_in_ticks() -> None:
    """CP-SAT's starts are ticks: the durations are converted to them."""
    p = _problem(graph([("a", 0.002), ("z", 0.0)]), n_devices=1)
    assert solution_from_starts(p, [0, 0], [0, 2], time_unit_ms=0.001).order == [[0, 1]]
    assert solution_from_starts(p, [0, 0], [1, 0], time_unit_ms=0.001).order == [[1, 0]]


@pytest.mark.parametrize("noise", [-1e-7, 1e-7])
def test_noise_keeps_a_zero_length_op_at_its_side_of_a_longer_op(noise: float) -> None:
    """z (0 ms) starts with a (1 ms), w (0 ms) where a ends, each give or take `noise`:
    z must go first (it feeds b on the other device) and w after a."""
    doc = graph([("a", 1.0), ("z", 0.0), ("w", 0.0), ("b", 1.0)], [("z", "b", 0)])
    p = _problem(doc)
    sol = solution_from_starts(p, [0, 0, 0, 1], [0.0, noise, 1.0 + noise, noise])
    assert sol.order == [[1, 0, 2], [3]]
    assert retime(p, sol).makespan_ms == pytest.approx(1.0)


def test_tolerance_noise_never_puts_an_op_before_its_predecessor() -> None:
    """A MILP start 1e-9 early: v seems to start before u, its zero-length predecessor."""
    p = _problem(graph([("u", 0.0), ("v", 1.0), ("w", 1.0)], [("u", "v", 0)]), n_devices=1)
    noisy = [1e-9, 0.0, 1.0 - 1e-7]
    sol = solution_from_starts(p, [0, 0, 0], noisy)
    assert sol.order == [[0, 1, 2]]
    assert retime(p, sol).makespan_ms == pytest.approx(2.0)


def test_noise_across_devices_keeps_one_consistent_order() -> None:
    """Chains a -> b (devices 0, 1) and c -> d (devices 1, 0) with noisy ties: the two
    device orders must not wait on each other in a cycle."""
    doc = graph([("a", 0.0), ("c", 0.0), ("b", 1.0), ("d", 1.0)], [("a", "b", 0), ("c", "d", 0)])
    p = _problem(doc)
    ia, ib, ic, id_ = (p.op_index[o] for o in "abcd")
    device, start = [0] * 4, [0.0] * 4
    device[ia], device[ib], device[ic], device[id_] = 0, 1, 1, 0
    start[ia], start[ib], start[ic], start[id_] = 2e-9, 1e-9, 2e-9, 1e-9  # successors look earlier
    sol = solution_from_starts(p, device, start)
    assert retime(p, sol).makespan_ms == pytest.approx(1.0)
