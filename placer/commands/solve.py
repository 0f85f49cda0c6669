"""`placer solve`: the best placement of a graph on a machine."""
from __future__ import annotations

import argparse
import sys

from placer.commands._common import EXIT_BY_STATUS, add_inputs, add_outputs, write_json, write_pictures
from placer.engine import PlaceOptions, place
from placer.progress import PHASES, Progress, ProgressFn
from placer.replay import replay, replay_plan
from placer.resolve import resolve_graph, resolve_hardware
from placer.summary import format_summary

_PHASE_WIDTH = max(map(len, PHASES))  # the progress lines' phase column


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("solve", help="find the best placement and schedule",
                       description="Place a training step's ops on devices to minimise the step time.")
    add_inputs(p)
    defaults = PlaceOptions()
    p.add_argument("--solver", default=defaults.solver,
                   choices=["cpsat", "cbc", "highs", "heft", "critical_path", "single_device"])
    p.add_argument("--time-limit", type=float, default=defaults.time_limit_s, metavar="SECONDS")
    p.add_argument("--routing", default=defaults.routing, choices=["shortest", "flow"],
                   help="MILP routing: fixed minimum-delay routes, or the paper's per-edge link flow")
    p.add_argument("--contention", action="store_true",
                   help="report simulated utilisation and link times under link contention, and "
                        "replay the answer with it for the trace and Gantt chart")
    p.add_argument("--relative-gap", type=float, default=defaults.relative_gap)
    p.add_argument("--threads", type=int, default=defaults.threads)
    p.add_argument("--seed", type=int, default=defaults.seed)
    p.add_argument("--coarsen", default=defaults.coarsen, choices=["off", "auto", "force"],
                   help="solve big graphs on super-ops (auto: above 600 ops, when no series decomposition applies)")
    p.add_argument("--coarsen-max-ops", type=int, default=defaults.coarsen_max_ops, metavar="N")
    p.add_argument("--deterministic", action="store_true",
                   help="CP-SAT work limits instead of wall time, fixed seeds: the same answer on any load "
                        "(the wall time stretches instead)")
    p.add_argument("--workers", type=int, default=defaults.workers, metavar="N",
                   help="run independent sub-solves (decomposition components) N at a time in local "
                        "processes; with --ray, N Ray tasks at a time (default: the cluster's CPUs / threads)")
    p.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="run the sub-solves as Ray tasks on the cluster at ADDRESS (auto or HOST:PORT; "
                        "needs pip install 'placer[ray]')")
    p.add_argument("--split", action="store_true",
                   help="allow splitting ops into tasks (data and operator parallelism chosen with the "
                        "placement; docs/split.md); cpsat only")
    p.add_argument("-o", "--output", metavar="RESULT.json", help="write the placer.result/v1 document")
    p.add_argument("-q", "--quiet", action="store_true", help="no live progress")
    add_outputs(p)
    p.set_defaults(func=run)


def format_progress(event: Progress) -> str:
    """One line per event: elapsed time, phase, what happens, incumbent and bound. A heartbeat
    (the same state again while a phase runs) ends in "(running)"."""
    inc = f"{event.incumbent_ms:.6g} ms" if event.incumbent_ms is not None else "none"
    bound = f"{event.bound_ms:.6g} ms" if event.bound_ms is not None else "none"
    running = " (running)" if event.heartbeat else ""
    return f"[{event.elapsed_s:6.1f} s] {event.phase:<{_PHASE_WIDTH}} {event.message}: incumbent {inc}, bound {bound}{running}"


def _progress_printer(quiet: bool) -> ProgressFn | None:
    """Every event on stderr (the engine drops repeats and sends a heartbeat while a phase runs)."""
    if quiet:
        return None

    def show(event: Progress) -> None:
        print(format_progress(event), file=sys.stderr, flush=True)

    return show


def run(args: argparse.Namespace) -> int:
    graph = resolve_graph(args.graph)
    hardware = resolve_hardware(args.hardware)
    options = PlaceOptions(
        solver=args.solver, time_limit_s=args.time_limit, routing=args.routing, contention=args.contention,
        relative_gap=args.relative_gap, threads=args.threads, seed=args.seed,
        coarsen=args.coarsen, coarsen_max_ops=args.coarsen_max_ops, deterministic=args.deterministic,
        workers=args.workers, ray_address=args.ray,
        split=args.split,
    )
    result = place(graph, hardware, options, progress=_progress_printer(args.quiet))
    print(format_summary(result, graph, hardware))
    if args.output:
        write_json(args.output, result.model_dump(mode="json"))
    if result.makespan_ms is not None and (args.trace or args.gantt):
        if result.splits is not None:
            from placer.split.report import split_report

            report = split_report(graph, hardware, result)
        else:
            report = replay(graph, hardware, replay_plan(result), contention=args.contention)
        write_pictures(args, report, f"{graph.name} on {hardware.name} ({result.solver})", graph)
    return EXIT_BY_STATUS[result.status]
