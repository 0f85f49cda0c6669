"""`SolveStats`: how a result was found (the `stats` of placer.result/v1).

One typed record per `place` call, owned by the engine's run and filled field by field as
the strategies run; a field a run never reached stays None and is left out of the JSON,
so a result carries the keys of the strategies that ran (as before this was typed).
Benchmarks and tests read these names: rename none of them.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

__all__ = ["SolveStats"]


class SolveStats(BaseModel):
    """What a solve did. Times in seconds unless named `_ms`; counts are plain integers."""

    # documents written by older versions may carry keys not declared here: keep them
    model_config = ConfigDict(extra="allow", validate_assignment=True)

    # the problem
    ops: int | None = Field(None, description="ops of the graph")
    edges: int | None = Field(None, description="edges of the graph")
    devices: int | None = Field(None, description="devices of the machine")
    groups: int | None = Field(None, description="colocation groups (an op without a group is its own)")
    bounds_ms: dict[str, float] | None = Field(None, description="each lower bound on the makespan, by name")
    tight_bound: str | None = Field(None, description="which bound (or solver) gave `lower_bound_ms`")
    best_from: str | None = Field(None, description="the strategy that found the returned placement")
    proof: str | None = Field(None, description="why the answer is optimal when no exact solver proved it")
    # the time budget (placer.budget)
    mode: Literal["wall_clock", "deterministic"] | None = Field(None, description="how time limits are measured")
    cpsat_work: float | None = Field(None, description="CP-SAT deterministic work spent")
    cpsat_calls: int | None = Field(None, description="CP-SAT solves made (components, neighbourhoods, whole)")
    # candidates the engine repaired or rejected, by the strategy that offered them
    repaired_candidates: dict[str, int] | None = Field(None, description="candidates whose memory overflow "
                                                       "was repaired by moving groups")
    rejected_candidates: dict[str, int] | None = Field(None, description="invalid candidates discarded "
                                                       "(a bug in that strategy; logged with a reproducer)")
    unrepaired_candidates: dict[str, int] | None = Field(
        None, description="candidates built to overflow memory on purpose (left to the repair) that the "
        "repair could not fit: discarded, not a bug")
    # the exact model
    variables: int | None = Field(None, description="variables of the exact model")
    constraints: int | None = Field(None, description="constraints of the exact model")
    disjunctions: int | None = Field(None, description="MILP: op pairs that may share a device")
    enforced_precedences: int | None = Field(None, description="CP-SAT: precedences enforced per device")
    symmetry_constraints: int | None = Field(None, description="CP-SAT: constraints breaking device symmetry")
    interchangeable_devices: int | None = Field(None, description="CP-SAT: devices in symmetry classes")
    tick_ms: float | None = Field(None, description="CP-SAT: the integer time grid")
    exact_ticks: bool | None = Field(None, description="CP-SAT: every duration is a whole number of ticks")
    rounding_slack_ms: float | None = Field(None, description="CP-SAT: what rounding to ticks may add")
    build_s: float | None = Field(None, description="building the exact model")
    solver_status: str | None = Field(None, description="the exact back end's own status")
    solver_reason: str | None = Field(None, description="why the exact back end stopped")
    solver_wall_s: float | None = Field(None, description="wall time of the exact back end")
    milp_skipped: str | None = Field(None, description="why the MILP was not solved (no time left after the "
                                     "heuristics, or to build it)")
    cpsat_skipped: str | None = Field(None, description="why the monolithic CP-SAT model was not solved "
                                      "(no time left)")
    cpsat_productive: bool | None = Field(None, description="the monolithic CP-SAT solve shortened its hint by "
                                          "Strategy.cpsat_productive_gain (with one worker: ..._one_worker; else the polish "
                                          "went on with kicks)")
    cpsat_coarse_stopped: bool | None = Field(None, description="the coarse model's CP-SAT solve stopped after "
                                              "Strategy.coarse_probe_share of its time: it had not shortened the incumbent")
    leftover_s: float | None = Field(None, description="time (s) the bounds at the end left, given to the window "
                                     "search from the final incumbent")
    cpsat_again_s: float | None = Field(None, description="limit (s) of the second monolithic CP-SAT solve, from "
                                        "the polished incumbent with the time the polish left")
    # portfolio members of the whole model on a pool (placer.portfolio; --workers, --ray)
    portfolio_members: int | None = Field(None, description="CP-SAT solves of the whole model run at once, "
                                          "one seed each")
    portfolio_answered: int | None = Field(None, description="members that came back (the others were lost)")
    # coarsening (placer.coarsen)
    original_ops: int | None = None
    coarse_ops: int | None = None
    original_edges: int | None = None
    coarse_edges: int | None = None
    coarse_groups: int | None = None
    coarsen_guided: bool | None = Field(None, description="the contraction followed an incumbent")
    coarsen_s: float | None = None
    # series decomposition (placer.decompose)
    decomposition_cuts: int | None = Field(None, description="ops every path passes through")
    decomposition_components: int | None = None
    decomposition_distinct_components: int | None = Field(None, description="components solved (copies reuse)")
    decomposition_largest_component_ops: int | None = None
    decomposition_dangling_ops: int | None = None
    decomposition_bridges: int | None = Field(None, description="of the dangling ops, those set aside between time "
                                              "cuts (saved activations listed as ops)")
    decomposition_components_optimal: int | None = None
    decomposition_bound_ms: float | None = None
    decomposition_parts_ms: float | None = Field(None, description="cuts plus the components' makespans")
    decomposition_stitched_ms: float | None = Field(None, description="makespan of the stitched placement")
    decomposition_resequenced_ms: float | None = Field(
        None, description="makespan of the stitched placement re-sequenced by one list schedule (the shorter is used)")
    decomposition_relabelled_ms: float | None = Field(
        None, description="makespan after components moved to other devices (relabelled by hardware "
        "automorphisms), where that shortened the stitched schedule")
    decomposition_refitted_components: int | None = None
    decomposition_refits_reused: int | None = Field(
        None, description="components stitched with the answer re-fitted for an earlier one of their shape")
    decomposition_chain_loads_ms: float | None = Field(
        None, description="bound of the components coupled through device loads (placer.chain_loads): the "
        "dangling ops colocated with the chain add work to its devices")
    decomposition_failed: str | None = None
    decomposition_skipped: str | None = Field(None, description="not tried: too many components for the "
                                              "time (wall-clock mode)")
    decomposition_s: float | None = None
    decomposition_workers: int | None = Field(None, description="component solves run at once (placer.parallel); "
                                              "None: one after another in the solve's process")
    decomposition_places: int | None = Field(None, description="distinct processes or Ray nodes the component "
                                             "solves ran on")
    decomposition_first_pass_s: list[float] | None = Field(None, description="wall-clock seconds of each distinct "
                                                          "component's first solve (the scale-out estimate's input)")
    # heads and tails raised by the loads of ancestors (placer.ancestral_loads)
    ancestral_raised: int | None = Field(None, description="heads and tails the ancestors' loads raised")
    ancestral_visits: int | None = Field(None, description="ancestors (descendants) looked at, summed over ops")
    ancestral_stopped_by: str | None = Field(None, description="done, visits or time")
    # heads and tails raised by sub-solves over cones (placer.cone_bounds)
    cone_solves: int | None = Field(None, description="CP-SAT sub-solves over cones of the graph")
    cone_raised: int | None = Field(None, description="joins whose head or tail the sub-solves raised")
    cone_stopped_by: str | None = Field(None, description="done, time, solves or no gain (the last cone pass)")
    cone_passes: int | None = Field(None, description="cone passes run (placer.engine's cones_extend_gain)")
    # makespans refuted by sub-models of a few groups (placer.refutation)
    refute_tests: int | None = Field(None, description="makespans tested by group sub-models")
    refute_refuted: int | None = Field(None, description="tested makespans proven impossible")
    # group moves (placer.local_search) and neighbourhood search (placer.neighbourhood)
    moves_evaluations: int | None = None
    moves_moves: int | None = None
    moves_run_moves: int | None = Field(None, description="group moves of several groups next to each other "
                                        "on the critical path")
    moves_chain_moves: int | None = Field(None, description="moves of a whole chain of groups (each touching two "
                                          "others) that holds or touches the critical path")
    moves_kicks: int | None = Field(None, description="random changes the polish's iterated local search "
                                    "climbed from")
    moves_kicks_improved: int | None = Field(None, description="kicks whose climb ended below the best")
    moves_resequenced: int | None = Field(None, description="group moves found once each move was also resequenced")
    moves_justified: int | None = Field(None, description="group moves found once each move was also double-justified")
    neighbourhood_steps: int | None = None
    neighbourhood_improved: int | None = None
    neighbourhood_closed: int | None = None
    neighbourhood_no_answer: int | None = None
    # window search (placer.window_search)
    windows_passes: int | None = Field(None, description="window search passes (one follows each that gained)")
    windows_restarts: int | None = Field(None, description="window searches from other seeds in the time left at "
                                         "the end")
    windows_steps: int | None = Field(None, description="windows of the incumbent's timeline re-optimised")
    windows_improved: int | None = Field(None, description="windows that shortened the incumbent")
    windows_closed: int | None = Field(None, description="windows CP-SAT solved to optimality")
    windows_no_answer: int | None = Field(None, description="windows without an answer in their limit")
    # split operators (placer.split)
    split_units: int | None = Field(None, description="units (colocation groups) choosing a configuration")
    split_configs: int | None = Field(None, description="configurations over all units")
    split_precedence_terms: int | None = Field(None, description="CP-SAT: delay terms of the precedences")
    split_ops: int | None = Field(None, description="ops of the answer cut into tasks")
    collective_ms: float | None = Field(None, description="time in all-reduces, summed over them")

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: SerializerFunctionWrapHandler):
        """Leave out what the run never reached, as the untyped stats did. (No return
        annotation: with one, pydantic would describe `stats` in OpenAPI by it, not by the fields.)"""
        return {k: v for k, v in handler(self).items() if v is not None}

    def record(self, **fields: Any) -> None:
        """Set declared fields (validated); an undeclared name is a bug, not a new key."""
        for name, value in fields.items():
            if name not in type(self).model_fields:
                raise AttributeError(f"SolveStats has no field {name!r}")
            setattr(self, name, value)

    def count(self, field: Literal["repaired_candidates", "rejected_candidates", "unrepaired_candidates"],
              source: str) -> None:
        """One more repaired, rejected or unrepaired candidate from `source`."""
        counts = dict(getattr(self, field) or {})
        counts[source] = counts.get(source, 0) + 1
        setattr(self, field, counts)
