"""The benchmark report: report.md and PNG plots from a run directory (meta.json + results.jsonl).

    python -m benchmarks.report benchmarks/reports/2025-01-01-full

Back ends are compared as ratios within the same run (the machines are shared and noisy):
a ratio of two solves of the same graph on the same machine minutes apart means more than
either absolute time. The targets of issue 6 item 3 are evaluated from the tagged runs; the checks of issue 10 item 5
from the `real` and `hard` families (every solve mode: idle, loaded, deterministic).
"""
from __future__ import annotations

import json
import math
import re
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["Target", "evaluate_hard_checks", "evaluate_targets", "load", "ratio_summary", "write_plots",
           "write_report"]

EXACT = ("cpsat", "cbc/shortest", "cbc/flow", "highs/shortest", "highs/flow")
HEURISTIC = ("heft", "critical_path", "single_device")
ORDER = EXACT + HEURISTIC
SOLVED = ("optimal", "feasible")
TARGET_GAP = 0.01
LAYERED_TARGET_S = 10.0
MODES = ("idle", "loaded", "deterministic")
HARD_FAMILIES = ("real", "hard")
# issue 10 item 5: gap <= 1% on graphs up to 1,000 ops, <= 2% up to 2,500 (and above: the
# 2,502-op NASNet-A profile is held to 2% too)
HARD_GAP_STEPS = ((1000, 0.01), (None, 0.02))
_TOL = 1e-9

Row = dict[str, Any]


# --------------------------------------------------------------------------- loading and helpers


def load(directory: str | Path) -> tuple[dict[str, Any], list[Row]]:
    """meta.json and the rows of results.jsonl."""
    directory = Path(directory)
    meta = json.loads((directory / "meta.json").read_text())
    rows = [json.loads(line) for line in (directory / "results.jsonl").read_text().splitlines() if line.strip()]
    return meta, rows


def _f(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def _s(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"


def _geomean(values: Sequence[float]) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _case(row: Row) -> tuple[str, str, str, str]:
    """A (family, graph, machine, mode) case: a graph can appear in two families (a target and the
    zoo), and in several solve modes."""
    return row["family"], row["graph"], row["hardware"], _mode(row)


def _mode(row: Row) -> str:
    return row.get("mode") or "idle"


def _solver_proved(row: Row) -> bool:
    """Optimal by the exact solver's own proof (not because a heuristic met the static bound)."""
    return row.get("status") == "optimal" and row.get("solver_status") == "optimal"


def _ran(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r.get("status") != "skipped"]


# --------------------------------------------------------------------------- targets


class Target:
    """One target of issue 6 item 3: what it asks, what was measured, and whether it is met."""

    def __init__(self, name: str, goal: str, measured: str, met: bool | None) -> None:
        self.name, self.goal, self.measured, self.met = name, goal, measured, met

    @property
    def verdict(self) -> str:
        return {True: "**met**", False: "**missed**", None: "not measured"}[self.met]


def _valid(row: Row) -> bool:
    return (row.get("status") in SOLVED and not row.get("violations")
            and row["lower_bound_ms"] is not None and row["lower_bound_ms"] <= row["makespan_ms"] * (1 + _TOL))


def _not_worse_than_heft(row: Row) -> bool:
    return row.get("heft_ms") is None or row["makespan_ms"] <= row["heft_ms"] * (1 + _TOL)


def _quality_target(rows: list[Row], tag: str, goal: str, limit_s: float) -> Target:
    found = [r for r in rows if tag in r.get("tags", []) and r["backend"] == "cpsat"]
    if not found:
        return Target(tag, goal, "not run", None)
    parts, met = [], True
    for r in found:
        ok = _valid(r) and r["gap"] <= TARGET_GAP + _TOL and _not_worse_than_heft(r)
        met &= ok
        if r.get("status") in SOLVED:
            parts.append(
                f"{r['graph']} ({r['ops']} ops) on {r['hardware']}: {r['status']}, {_f(r['makespan_ms'])} ms, "
                f"gap {_pct(r['gap'])}, HEFT {_f(r.get('heft_ms'))} ms "
                f"(x{_f(r.get('speedup_heft'), 3)}), best found at {_s(r.get('time_to_best_s'))} s, "
                f"stopped at {_s(r.get('solve_time_s'))} s"
            )
        else:
            parts.append(f"{r['graph']} on {r['hardware']}: {r['status']} ({r.get('reason')})")
        for other in _same_problem(rows, r):
            parts.append(f"the same graph and machine in the {other['family']} family of this run: "
                         f"{other['status']}, {_f(other.get('makespan_ms'))} ms, gap {_pct(other.get('gap'))}")
    return Target(tag, goal, "; ".join(parts) + _limit_note(limit_s), met)


def _same_problem(rows: list[Row], row: Row) -> list[Row]:
    """Other CP-SAT runs of `row`'s graph on its machine (CP-SAT with 2 workers is not deterministic)."""
    return [r for r in rows if r is not row and r["backend"] == row["backend"]
            and (r["graph"], r["hardware"]) == (row["graph"], row["hardware"])]


def _limit_note(limit_s: float) -> str:
    return "" if abs(limit_s - 60) < 1e-9 else f" [measured with a {limit_s:g} s limit, not 60 s]"


def _layered_target(rows: list[Row], limit_s: float) -> Target:
    goal = f"layered 100-op graphs on 2 GPUs proven optimal within {LAYERED_TARGET_S:g} s"
    found = [r for r in rows if "layered100_2gpu" in r.get("tags", []) and r["backend"] == "cpsat"]
    if not found:
        return Target("layered100_2gpu", goal, "not run", None)
    times = [r.get("solve_time_s") for r in found]
    proved = [r for r in found if r.get("status") == "optimal"]
    met = len(proved) == len(found) and all(r["solve_time_s"] <= LAYERED_TARGET_S for r in proved)
    detail = ", ".join(
        f"{r['graph']}: {r['status']} in {_s(r.get('solve_time_s'))} s"
        + ("" if r.get("status") == "optimal" else f" (gap {_pct(r.get('gap'))})")
        for r in found
    )
    worst = max((t for t in times if t is not None), default=None)
    return Target("layered100_2gpu", goal,
                  f"{len(proved)}/{len(found)} proven optimal, slowest {_s(worst)} s: {detail}{_limit_note(limit_s)}", met)


def _bert_target(rows: list[Row], limit_s: float) -> Target:
    goal = "a 2,000-op BERT-size training graph: a valid answer with an honest gap, never a hang or a crash"
    found = [r for r in rows if "bert_2k" in r.get("tags", []) and r["backend"] == "cpsat"]
    if not found:
        return Target("bert_2k", goal, "not run", None)
    parts, met = [], True
    for r in found:
        ok = _valid(r) and r.get("solve_time_s", math.inf) <= r["time_limit_s"] + 5
        met &= ok
        if r.get("status") in SOLVED:
            parts.append(
                f"{r['graph']} ({r['ops']} ops, {r['edges']} edges) on {r['hardware']}: {r['status']}, "
                f"{_f(r['makespan_ms'])} ms >= bound {_f(r['lower_bound_ms'])} ms (gap {_pct(r['gap'])}), "
                f"HEFT {_f(r.get('heft_ms'))} ms, {_s(r.get('solve_time_s'))} s"
                + (f", {len(r['violations'])} validator complaints" if r.get("violations") else ", valid")
                + (f", **{_s(r['solve_time_s'] - r['time_limit_s'])} s past its {r['time_limit_s']:g} s limit**"
                   if r["solve_time_s"] > r["time_limit_s"] + 5 else "")
            )
        else:
            parts.append(f"{r['graph']} on {r['hardware']}: {r['status']} ({r.get('reason')})")
    zoo = [r for r in rows if r["family"] == "zoo" and r["graph"].startswith("bert_base") and r["backend"] == "cpsat"
           and r.get("status") in SOLVED]
    if zoo:
        parts.append("zoo bert_base (" + str(zoo[0]["ops"]) + " ops): " + ", ".join(
            f"{r['hardware']} gap {_pct(r['gap'])}" for r in zoo))
    return Target("bert_2k", goal, "; ".join(parts) + _limit_note(limit_s), met)


def _milp_target(rows: list[Row], limit_s: float) -> Target:
    goal = "the DLPlacer MILP on CBC: the largest graphs it proves optimal in 60 s, and CBC vs CP-SAT as ratios"
    cbc = [r for r in rows if r["solver"] == "cbc" and r.get("status") != "skipped"]
    if not cbc:
        return Target("milp_cbc", goal, "not run", None)
    proved = [r for r in cbc if _solver_proved(r)]
    parts = []
    if proved:
        top = max(proved, key=lambda r: (r["ops"], r.get("disjunctions") or 0))
        most = max(proved, key=lambda r: (r.get("disjunctions") or 0, r["ops"]))
        parts.append(f"largest proven by CBC: {top['graph']} ({top['ops']} ops, {top.get('disjunctions')} "
                     f"disjunctions) on {top['hardware']} with {top['routing']} routing in {_s(top['solve_time_s'])} s")
        if most is not top:
            parts.append(f"most disjunctions proven: {most['graph']} ({most['ops']} ops, "
                         f"{most.get('disjunctions')} disjunctions) on {most['hardware']}")
    else:
        parts.append("CBC proved no graph optimal")
    parts.append(f"CBC proved {len(proved)} of {len(cbc)} runs")
    for routing in ("shortest", "flow"):
        s = ratio_summary(rows, f"cbc/{routing}", "cpsat")
        if s["pairs"]:
            parts.append(
                f"cbc/{routing} vs cpsat on {s['pairs']} common graphs: makespan ratio {_f(s['makespan'], 4)} "
                f"(geomean), time ratio {_f(s['time'], 1)} on the {s['both_optimal']} both proved, "
                f"optimal {s['a_optimal']} vs {s['b_optimal']}"
            )
    return Target("milp_cbc", goal, "; ".join(parts) + _limit_note(limit_s), True)


def evaluate_targets(rows: list[Row], limit_s: float) -> list[Target]:
    """Issue 6 item 3, from the tagged target runs and the CBC rows."""
    return [
        _quality_target(rows, "inception_4gpu",
                        "Inception-V3 training graph (600+ ops) on 4 NVLink GPUs (DGX-1 quad): gap <= 1%, never "
                        "worse than HEFT, in 60 s", limit_s),
        _quality_target(rows, "inception_2gpu",
                        "the same on 2 NVLink GPUs (two GPUs of the quad): gap <= 1%, never worse than HEFT, "
                        "in 60 s", limit_s),
        _layered_target(rows, limit_s),
        _bert_target(rows, limit_s),
        _milp_target(rows, limit_s),
    ]


# --------------------------------------------------------------------------- comparisons


def ratio_summary(rows: list[Row], a: str, b: str) -> dict[str, Any]:
    """Back end `a` against `b` on the graphs both solved in this run: geometric means of
    makespan a/b (over both with a solution) and of time a/b (over both proven optimal)."""
    by_case: dict[tuple[str, str, str], dict[str, Row]] = defaultdict(dict)
    for r in rows:
        by_case[_case(r)][r["backend"]] = r
    makespans, times, pairs, both, a_opt, b_opt = [], [], 0, 0, 0, 0
    for runs in by_case.values():
        ra, rb = runs.get(a), runs.get(b)
        if ra is None or rb is None or ra.get("status") == "skipped" or rb.get("status") == "skipped":
            continue
        pairs += 1
        a_opt += ra.get("status") == "optimal"
        b_opt += rb.get("status") == "optimal"
        if ra.get("status") in SOLVED and rb.get("status") in SOLVED:
            makespans.append(ra["makespan_ms"] / rb["makespan_ms"])
        if ra.get("status") == "optimal" and rb.get("status") == "optimal":
            both += 1
            times.append(max(ra["solve_time_s"], 1e-3) / max(rb["solve_time_s"], 1e-3))
    return {"pairs": pairs, "makespan": _geomean(makespans), "makespan_worst": max(makespans, default=None),
            "time": _geomean(times), "both_optimal": both, "a_optimal": a_opt, "b_optimal": b_opt}


_PAIRS = (("cbc/shortest", "cpsat"), ("cbc/flow", "cpsat"), ("highs/shortest", "cpsat"), ("highs/flow", "cpsat"),
          ("cbc/shortest", "highs/shortest"), ("cbc/flow", "cbc/shortest"), ("highs/flow", "highs/shortest"),
          ("cpsat", "heft"))


def _ratios_section(rows: list[Row]) -> str:
    out = []
    for a, b in _PAIRS:
        s = ratio_summary(rows, a, b)
        if s["pairs"]:
            out.append([f"{a} / {b}", s["pairs"], _f(s["makespan"], 4), _f(s["makespan_worst"], 4),
                        s["both_optimal"], _f(s["time"], 2), f"{s['a_optimal']} / {s['b_optimal']}"])
    if not out:
        return "No pair of back ends ran on a common graph.\n"
    return _table(["A / B", "graphs both ran", "makespan A/B (geomean)", "makespan A/B (worst)",
                   "both proved optimal", "time to optimal A/B (geomean)", "proved optimal A / B"], out) + "\n"


def _head_to_head(rows: list[Row], a: str, b: str) -> str:
    by_case: dict[tuple[str, str, str], dict[str, Row]] = defaultdict(dict)
    for r in rows:
        by_case[_case(r)][r["backend"]] = r
    lines = []
    for (_, graph, hw, _mode_), runs in by_case.items():
        ra, rb = runs.get(a), runs.get(b)
        if ra is None or rb is None or "skipped" in (ra.get("status"), rb.get("status")):
            continue
        ms = ra["makespan_ms"] / rb["makespan_ms"] if ra.get("makespan_ms") and rb.get("makespan_ms") else None
        tr = ra["solve_time_s"] / max(rb["solve_time_s"], 1e-3) if ra.get("solve_time_s") and rb.get("solve_time_s") else None
        lines.append([graph, hw, ra["ops"], ra.get("disjunctions") or "-",
                      f"{ra['status']} {_s(ra.get('solve_time_s'))} s", f"{rb['status']} {_s(rb.get('solve_time_s'))} s",
                      _f(ms, 4), _f(tr, 2), _pct(ra.get("gap")), _pct(rb.get("gap"))])
    if not lines:
        return ""
    return _table(["graph", "hardware", "ops", "disjunctions", a, b, "makespan ratio", "time ratio",
                   f"gap {a}", f"gap {b}"], lines) + "\n"


# --------------------------------------------------------------------------- summaries


def _backend_summary(rows: list[Row]) -> str:
    out = []
    for backend in ORDER:
        mine = [r for r in rows if r["backend"] == backend]
        if not mine:
            continue
        counts = Counter(r["status"] for r in mine)
        solved = [r for r in mine if r["status"] in SOLVED]
        proved = [r for r in mine if r["status"] == "optimal"]
        worse = sum(1 for r in solved if not _not_worse_than_heft(r))
        overrun = max((r["solve_time_s"] - r["time_limit_s"] for r in solved if r.get("solve_time_s") is not None),
                      default=None)
        wall_overrun = max((r["wall_s"] - r["time_limit_s"] for r in mine if r.get("wall_s") is not None), default=None)
        out.append([
            backend, len(mine), counts["optimal"], counts["feasible"], counts["no_solution"], counts["infeasible"],
            counts["killed"], counts["error"], counts["skipped"],
            _pct(statistics.median([r["gap"] for r in solved])) if solved else "-",
            _s(statistics.median([r["solve_time_s"] for r in proved])) if proved else "-",
            worse, _over(overrun), _over(wall_overrun), sum(1 for r in mine if r.get("leftovers_killed")),
        ])
    return _table(["back end", "runs", "optimal", "feasible", "no solution", "infeasible", "killed", "error",
                   "skipped", "median gap", "median time to optimal (s)", "worse than HEFT",
                   "solve time past the limit (max, s)", "child wall time past the limit (max, s)", "left processes"], out) + "\n"


def _largest_proven(rows: list[Row]) -> str:
    out = []
    families = sorted({r["family"] for r in rows})
    for backend in EXACT:
        cells = [backend]
        for family in families:
            proved = [r for r in rows if r["backend"] == backend and r["family"] == family and r["status"] == "optimal"]
            ran = [r for r in rows if r["backend"] == backend and r["family"] == family and r["status"] != "skipped"]
            if not ran:
                cells.append("-")
            elif not proved:
                cells.append(f"none of {len(ran)}")
            else:
                top = max(proved, key=lambda r: (r["ops"], r["devices"]))
                cells.append(f"{top['ops']} ops / {top['devices']} dev ({len(proved)} of {len(ran)})")
        out.append(cells)
    return _table(["back end", *families], out) + "\n"


def _family_tables(rows: list[Row]) -> str:
    header = ["graph", "ops", "edges", "hardware", "back end", "mode", "status", "makespan ms", "bound ms", "gap",
              "first s", "best s", "total s", "build s", "vars", "cons", "x 1 dev", "x HEFT"]
    parts = []
    for family in dict.fromkeys(r["family"] for r in rows):
        lines = []
        for r in rows:
            if r["family"] != family or r["status"] == "skipped":
                continue
            lines.append([
                r["graph"], r["ops"], r["edges"], r["hardware"], r["backend"], _mode(r), r["status"],
                _f(r.get("makespan_ms")), _f(r.get("lower_bound_ms")), _pct(r.get("gap")),
                _s(r.get("time_to_first_s")), _s(r.get("time_to_best_s")), _s(r.get("solve_time_s")),
                _s(r.get("build_s")), r.get("variables") or "-", r.get("constraints") or "-",
                _f(r.get("speedup_single"), 2), _f(r.get("speedup_heft"), 3),
            ])
        if lines:
            parts.append(f"### {family}\n\n" + _table(header, lines) + "\n")
    return "\n".join(parts)


def _problems(rows: list[Row]) -> str:
    lines = []
    for r in rows:
        if r["status"] in ("killed", "error") or r.get("violations") or r.get("leftovers_killed"):
            what = r.get("reason") or ""
            if r.get("violations"):
                what += f" validator: {'; '.join(r['violations'][:3])}"
            if r.get("leftovers_killed"):
                what += " (left processes behind; killed)"
            mode = "" if _mode(r) == "idle" else f" ({_mode(r)})"
            lines.append(f"- {r['graph']} on {r['hardware']}, {r['backend']}{mode}: {r['status']}: {what.strip()}")
    skipped = Counter(re.sub(r"\(\d+ disjunctions; ", "(", r["reason"]) for r in rows if r["status"] == "skipped")
    text = "\n".join(lines) + "\n" if lines else "None: no solve was killed, crashed, or left a process behind.\n"
    if skipped:
        text += "\nSkipped combinations:\n\n" + "\n".join(f"- {n} x {reason}" for reason, n in skipped.items()) + "\n"
    return text


# --------------------------------------------------------------------------- issue 10: real and hard families


def _hard_rows(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r["family"] in HARD_FAMILIES and r.get("status") != "skipped"]


def _where(r: Row) -> str:
    return f"{r['graph']} ({r['ops']} ops) on {r['hardware']}, {_mode(r)}"


def _gap_limit(ops: int) -> float:
    return next(limit for top, limit in HARD_GAP_STEPS if top is None or ops <= top)


def _by_mode(found: list[Row], ok: Any) -> str:
    counts = []
    for mode in MODES:
        mine = [r for r in found if _mode(r) == mode]
        if mine:
            counts.append(f"{mode} {sum(1 for r in mine if ok(r))}/{len(mine)}")
    return ", ".join(counts)


def _gap_check(rows: list[Row], low: int, high: int | None, limit: float, limit_s: float) -> Target:
    span = (f"up to {high:,} ops" if not low else f"of {low + 1:,}-{high:,} ops") if high is not None \
        else f"over {low:,} ops"
    goal = f"CP-SAT gap <= {_pct(limit, 0)} on graphs {span} (real and hard families, every mode)"
    found = [r for r in rows if r["backend"] == "cpsat" and r["ops"] > low and (high is None or r["ops"] <= high)]
    if not found:
        return Target(f"gap_{low}", goal, "not run", None)

    def ok(r: Row) -> bool:
        return _valid(r) and r["gap"] <= limit + _TOL

    missed: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in found:
        if not ok(r):
            missed[(r["graph"], r["hardware"])].append(r)
    text = f"{sum(1 for r in found if ok(r))} of {len(found)} within {_pct(limit, 0)} ({_by_mode(found, ok)})"
    if missed:
        worst = sorted(missed.items(), key=lambda kv: -max(r.get("gap") or math.inf for r in kv[1]))
        text += "; missed on " + "; ".join(
            f"{graph} ({runs[0]['ops']} ops) on {hw}: " + ", ".join(
                f"{_mode(r)} {_pct(r.get('gap')) if r.get('gap') is not None else r.get('status')}" for r in runs)
            for (graph, hw), runs in worst[:8])
        text += f" (+{len(worst) - 8} more cases)" if len(worst) > 8 else ""
    return Target(f"gap_{low}", goal, text + _limit_note(limit_s), not missed)


def evaluate_hard_checks(rows: list[Row], limit_s: float) -> list[Target]:
    """Issue 10 item 5, from the real and hard families' rows (CP-SAT and HEFT, every mode)."""
    hard = _hard_rows(rows)
    if not hard:
        return []
    checks = [_gap_check(hard, 0, 1000, 0.01, limit_s),
              _gap_check(hard, 1000, 2500, 0.02, limit_s)]
    if any(r["ops"] > 2500 for r in hard):
        checks.append(_gap_check(hard, 2500, None, 0.02, limit_s))
    solved = [r for r in hard if r["backend"] == "cpsat" and r.get("status") in SOLVED]
    worse = [r for r in solved if not _not_worse_than_heft(r)]
    checks.append(Target(
        "heft", "CP-SAT never worse than HEFT",
        f"{len(solved) - len(worse)} of {len(solved)} answers at or below HEFT's makespan"
        + ("; worse: " + "; ".join(f"{_where(r)}: {_f(r['makespan_ms'])} ms > HEFT {_f(r['heft_ms'])} ms"
                                   for r in worse) if worse else ""),
        not worse if solved else None))
    invalid = [r for r in hard if r.get("status") in SOLVED and not _valid(r)]
    unanswered = [r for r in hard if r.get("status") in ("infeasible", "no_solution")]
    answered = [r for r in hard if r.get("status") in SOLVED]
    checks.append(Target(
        "valid", "zero invalid answers (validator complaints, bound above the makespan, or no answer)",
        f"{len(answered) - len(invalid)} of {len(answered)} answers valid, {len(unanswered)} runs without an answer"
        + "".join(f"; {_where(r)} ({r['backend']}): "
                  + ("; ".join((r.get("violations") or [])[:2]) or f"bound {_f(r.get('lower_bound_ms'))} ms > "
                     f"{_f(r.get('makespan_ms'))} ms") for r in invalid[:5])
        + "".join(f"; {_where(r)} ({r['backend']}): {r['status']} ({r.get('reason')})" for r in unanswered[:5]),
        not invalid and not unanswered))
    crashed = [r for r in hard if r.get("status") in ("error", "killed") or r.get("leftovers_killed")]
    checks.append(Target(
        "crashes", "zero crashes (errors, solves killed at the hard deadline, processes left behind)",
        f"{len(crashed)} of {len(hard)} runs" + "".join(
            f"; {_where(r)} ({r['backend']}): {r['status']} ({r.get('reason')})" for r in crashed[:5]),
        not crashed))
    goal = "the zoo's Inception-V3 on dgx1_v100_quad, loaded (one competing busy process): gap <= 1%"
    found = [r for r in hard if "inception_quad_loaded" in r.get("tags", []) and r["backend"] == "cpsat"]
    loaded = [r for r in found if _mode(r) == "loaded"]
    if not loaded:
        checks.append(Target("inception_quad_loaded", goal, "not run", None))
    else:
        r = loaded[0]
        others = ", ".join(f"{_mode(o)} {_pct(o.get('gap'))}" for o in found if o is not r)
        measured = (f"{r['status']}, {_f(r.get('makespan_ms'))} ms, bound {_f(r.get('lower_bound_ms'))} ms, "
                    f"gap {_pct(r.get('gap'))}, HEFT {_f(r.get('heft_ms'))} ms, best at {_s(r.get('time_to_best_s'))} s"
                    + (f" (competitor used {_s(r['competitor_cpu_s'])} CPU s)" if r.get("competitor_cpu_s") else "")
                    + (f"; other modes: {others}" if others else ""))
        met = _valid(r) and r["gap"] <= TARGET_GAP + _TOL and _not_worse_than_heft(r)
        checks.append(Target("inception_quad_loaded", goal, measured + _limit_note(limit_s), met))
    return checks


def _base_machine(name: str) -> str:
    return name[:-6] if name.endswith("-tight") else name


def _gb(x: float | None) -> str:
    return "-" if x is None else f"{x / 1e9:.2f} GB"


def _hard_tables(rows: list[Row]) -> str:
    """Per family and machine: every graph with HEFT and CP-SAT's makespan, bound, gap and time to
    best in each mode."""
    hard = _hard_rows(rows)
    parts = []
    for family in HARD_FAMILIES:
        mine = [r for r in hard if r["family"] == family]
        modes = [m for m in MODES if any(_mode(r) == m for r in mine if r["backend"] == "cpsat")]
        if not mine or not modes:
            continue
        slash = " / ".join(modes)
        for machine in dict.fromkeys(_base_machine(r["hardware"]) for r in mine):
            cases = dict.fromkeys((r["graph"], r["hardware"]) for r in mine if _base_machine(r["hardware"]) == machine)
            lines = []
            for graph, hw in cases:
                runs = [r for r in mine if (r["graph"], r["hardware"]) == (graph, hw)]
                cp = {_mode(r): r for r in runs if r["backend"] == "cpsat"}
                heft = next((r for r in runs if r["backend"] == "heft" and r.get("status") in SOLVED), None)
                heft_ms = heft["makespan_ms"] if heft else next((r.get("heft_ms") for r in cp.values()), None)
                first = runs[0]
                tight = f"yes ({_gb(first.get('device_memory_bytes'))})" if first.get("memory_tight") else "no"

                def cell(key: str, fmt: Any) -> str:
                    out = []
                    for m in modes:
                        r = cp.get(m)
                        if r is None:
                            out.append("-")
                        elif r.get("status") not in SOLVED:
                            out.append(str(r.get("status")))
                        else:
                            out.append(fmt(r.get(key)))
                    return " / ".join(out)

                lines.append([graph, first["ops"], hw, tight, _f(heft_ms), cell("makespan_ms", _f),
                              cell("lower_bound_ms", _f), cell("gap", _pct), cell("time_to_best_s", _s),
                              cell("solve_time_s", _s)])
            header = ["graph", "ops", "machine", "memory-tight", "HEFT ms", f"makespan ms ({slash})",
                      f"bound ms ({slash})", f"gap ({slash})", f"best s ({slash})", f"total s ({slash})"]
            parts.append(f"### {family} on {machine}\n\n" + _table(header, lines) + "\n")
    return "\n".join(parts)


_MODE_COLORS = {"idle": "tab:blue", "loaded": "tab:red", "deterministic": "tab:green"}
_MODE_STYLES = {"idle": "-", "loaded": "--", "deterministic": ":"}  # equal curves stay visible


def _family_gap_plot(rows: list[Row], family: str, path: Path) -> bool:
    """One panel per (graph, machine) of `family`: CP-SAT's gap over time in each mode."""
    import matplotlib.pyplot as plt

    mine = [r for r in rows if r["family"] == family and r["backend"] == "cpsat"
            and r.get("status") in SOLVED + ("killed",)]
    cases = list(dict.fromkeys((r["graph"], r["hardware"]) for r in mine))
    if not cases:
        return False
    cols = min(4, len(cases))
    nrows = math.ceil(len(cases) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.0 * nrows), squeeze=False)
    for ax, (graph, hw) in zip(axes.flat, cases):
        runs = [r for r in mine if (r["graph"], r["hardware"]) == (graph, hw)]
        top = 2.5
        for r in sorted(runs, key=lambda r: MODES.index(_mode(r)) if _mode(r) in MODES else 9):
            ts, gaps = _gap_series(r)
            if ts:
                top = max(top, *gaps)
                ax.step(ts, gaps, where="post", color=_MODE_COLORS.get(_mode(r), "black"), marker=".", markersize=3,
                        linestyle=_MODE_STYLES.get(_mode(r), "-"), linewidth=1.3,
                        label=f"{_mode(r)} {_pct(r.get('gap'))} ({r['status']})")
        limit = _gap_limit(runs[0]["ops"])
        ax.axhline(100 * limit, color="0.5", linestyle="--", linewidth=0.8)
        ax.set_title(f"{graph} ({runs[0]['ops']} ops)\n{hw}", fontsize=7)
        ax.set_ylim(0, min(top, 100) * 1.08)
        ax.set_xlim(left=0)
        ax.set_xlabel("seconds", fontsize=7)
        ax.set_ylabel("gap (%)", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.grid(True, linewidth=0.3)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(cases):]:
        ax.set_visible(False)
    fig.suptitle(f"{family}: CP-SAT's gap to its proven bound over time, per mode (dashed: the target)", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / fig.get_figheight()))
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return True


# --------------------------------------------------------------------------- plots


_COLORS = {"cpsat": "tab:blue", "cbc/shortest": "tab:red", "cbc/flow": "tab:orange", "highs/shortest": "tab:green",
           "highs/flow": "tab:olive", "heft": "tab:gray", "critical_path": "tab:brown", "single_device": "black"}
_MARKERS = {2: "o", 4: "s", 8: "^"}


def _gap_series(row: Row) -> tuple[list[float], list[float]]:
    """Gap (%) after each progress event, then the final answer's gap at its solve time."""
    ts, gaps = [], []
    for t, inc, bound in row.get("events") or []:
        if inc is not None and bound is not None and inc > 0:
            ts.append(t)
            gaps.append(100 * max(0.0, inc - bound) / inc)
    if row.get("gap") is not None and row.get("solve_time_s") is not None:
        ts.append(row["solve_time_s"])
        gaps.append(100 * row["gap"])
    return ts, gaps


def _gap_cases(rows: list[Row]) -> list[tuple[str, str, str, str]]:
    """The cases worth a gap-over-time panel: the targets, then each family's largest case with
    the most exact back ends that did not finish at once."""
    chosen: list[tuple[str, str, str, str]] = []
    tags_seen: set[str] = set()
    for r in rows:
        fresh = [t for t in r.get("tags", []) if t not in tags_seen]
        if fresh and r["backend"] == "cpsat":
            tags_seen.update(fresh)
            chosen.append(_case(r))
    by_family: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        if r["backend"] in EXACT and r["status"] in SOLVED + ("killed",) and not r.get("tags"):
            by_family[r["family"]].append(r)
    for mine in by_family.values():
        n_exact: Counter[tuple[str, str, str, str]] = Counter(_case(r) for r in mine if (r.get("solve_time_s") or 0) > 0.5)
        if not n_exact:
            continue
        ops = {_case(r): r["ops"] for r in mine}
        best = max(n_exact, key=lambda c: (n_exact[c], ops[c]))
        if best not in chosen:
            chosen.append(best)
    return chosen[:12]


def write_plots(rows: list[Row], directory: str | Path, limit_s: float) -> list[str]:
    """time_to_optimality.png, gap_over_time.png and gap_vs_size.png; the file names written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    directory = Path(directory)
    written = []
    ran = [r for r in rows if r["status"] not in ("skipped", "error")]

    # time to optimality against graph size
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for backend in EXACT:
        for r in ran:
            if r["backend"] != backend:
                continue
            proved = r["status"] == "optimal"
            y = r.get("solve_time_s") or r.get("wall_s") or limit_s
            ax.scatter(r["ops"], max(y, 1e-3), s=28, marker=_MARKERS.get(r["devices"], "D"),
                       facecolors=_COLORS[backend] if proved else "none", edgecolors=_COLORS[backend], linewidths=1.0)
    ax.axhline(limit_s, color="0.5", linestyle="--", linewidth=0.8)
    ax.annotate(f"time limit {limit_s:g} s", xy=(1.0, limit_s), xycoords=("axes fraction", "data"),
                xytext=(-4, 3), textcoords="offset points", ha="right", fontsize=8, color="0.4")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ops in the graph")
    ax.set_ylabel("seconds to proven optimality (hollow: not proven, at its stop)")
    ax.set_title("Time to optimality against graph size, per back end")
    handles = [Line2D([], [], color=_COLORS[b], marker="o", linestyle="", label=b) for b in EXACT
               if any(r["backend"] == b for r in ran)]
    handles += [Line2D([], [], color="0.3", marker=m, linestyle="", markerfacecolor="none", label=f"{d} devices")
                for d, m in _MARKERS.items()]
    ax.legend(handles=handles, fontsize=8, loc="lower right", ncol=2)
    ax.grid(True, which="both", linewidth=0.3)
    fig.tight_layout()
    fig.savefig(directory / "time_to_optimality.png", dpi=110)
    plt.close(fig)
    written.append("time_to_optimality.png")

    # gap over time
    cases = _gap_cases(ran)
    if cases:
        cols = min(3, len(cases))
        nrows = math.ceil(len(cases) / cols)
        fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.4 * nrows), squeeze=False)
        for ax, case in zip(axes.flat, cases):
            mine = [r for r in ran if _case(r) == case and r["backend"] in EXACT]
            for r in mine:
                ts, gaps = _gap_series(r)
                if ts:
                    ax.step(ts, gaps, where="post", color=_COLORS[r["backend"]], label=f"{r['backend']} ({r['status']})",
                            marker=".", markersize=4, linewidth=1.2)
            ops = mine[0]["ops"] if mine else "?"
            mode = "" if case[3] == "idle" else f", {case[3]}"
            ax.set_title(f"{case[1]} ({ops} ops)\n{case[2]} ({case[0]}{mode})", fontsize=8)
            ax.set_xlabel("seconds", fontsize=8)
            ax.set_ylabel("gap to the proven bound (%)", fontsize=8)
            ax.set_ylim(bottom=0, top=max([1.0] + [g for r in mine for g in _gap_series(r)[1]]) * 1.1)
            ax.set_xlim(left=0)
            ax.tick_params(labelsize=7)
            ax.grid(True, linewidth=0.3)
            ax.legend(fontsize=6)
        for ax in list(axes.flat)[len(cases):]:
            ax.set_visible(False)
        fig.suptitle("Gap over time (incumbent vs proven lower bound)", fontsize=10)
        fig.tight_layout()
        fig.savefig(directory / "gap_over_time.png", dpi=110)
        plt.close(fig)
        written.append("gap_over_time.png")

    # final gap against size
    fig, ax = plt.subplots(figsize=(9, 5))
    for backend in ORDER:
        mine = [r for r in ran if r["backend"] == backend and r["status"] in SOLVED]
        if mine:
            ax.scatter([r["ops"] for r in mine], [100 * r["gap"] for r in mine], s=18, color=_COLORS[backend],
                       label=backend, alpha=0.8, marker="x" if backend in HEURISTIC else "o")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("ops in the graph")
    ax.set_ylabel("final gap to the proven bound (%)")
    ax.set_title("Final gap against graph size (heuristics: against the static bound)")
    ax.axhline(100 * TARGET_GAP, color="0.5", linestyle="--", linewidth=0.8)
    ax.legend(fontsize=8, ncol=2)
    ax.grid(True, which="both", linewidth=0.3)
    fig.tight_layout()
    fig.savefig(directory / "gap_vs_size.png", dpi=110)
    plt.close(fig)
    written.append("gap_vs_size.png")

    for family in HARD_FAMILIES:
        name = f"gap_over_time_{family}.png"
        if _family_gap_plot(ran, family, directory / name):
            written.append(name)
    return written


# --------------------------------------------------------------------------- the report


def _machine(meta: dict[str, Any]) -> str:
    m = meta.get("machine", {})
    v = m.get("versions", {})
    lines = [
        ["CPU", m.get("cpu_model") or "?"],
        ["cores usable (nproc) / online", f"{m.get('nproc')} / {m.get('cpu_count')}"],
        ["memory", f"{m.get('memory_gb')} GB"],
        ["load average at start / end", f"{_loads(m.get('load_average'))} / {_loads(meta.get('load_average_end'))}"],
        ["kernel, Python", f"{m.get('kernel')}, {m.get('python')}"],
        ["packages", ", ".join(f"{k} {val}" for k, val in v.items() if val)],
        ["CBC binary", m.get("cbc") or "?"],
        ["commit at the start (the working tree may differ)", m.get("commit") or "?"],
        ["niceness", meta.get("niceness", "?")],
    ]
    return _table(["", ""], lines) + "\n"


def _over(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return "none" if seconds <= 0 else f"+{_s(seconds)}"


def _loads(values: Sequence[float] | None) -> str:
    return " ".join(f"{x:.2f}" for x in values) if values else "?"


_INTRO = (
    "Every solve ran alone in a forked child; the rows are in `results.jsonl` (one JSON object per run, "
    "progress events included), the columns are explained in `benchmarks/README.md`. Times are wall-clock "
    "seconds on a shared machine: compare back ends by the ratios below, measured in the same run.\n"
)
_GLANCE = (
    "Counts per status; median gap over the runs with an answer; `worse than HEFT` counts answers "
    "above HEFT's makespan (exact back ends start from the best heuristic, so it must be 0); overruns are "
    "the engine's own solve time and the child's whole wall time (fork, model build, validation, "
    "simulation) past the limit.\n"
)
_RATIOS = (
    "Makespan ratios < 1 mean A found shorter steps; time ratios > 1 mean A needed longer to prove "
    "optimality (only graphs both proved count).\n"
)
_LARGEST = (
    "Per back end and family: the most ops proven optimal (how many of the runs were proven). A proof "
    "can come from a heuristic meeting the lower bound before the solver starts.\n"
)


_HARD_INTRO = (
    "CP-SAT and HEFT on the third-party training graphs (`real`: PipeDream profiles and msr-fiddle "
    "dnn-partitioning graphs) and on generated hard graphs (`hard`: a training graph split into separate "
    "forward and backward components, NASNet-style cells, transformers with one op per attention head, U-Net; "
    "each also on memory-tight hardware where the model barely fits the machine). Every CP-SAT solve ran in "
    "each mode: `idle`; `loaded`, with one competing busy process (a Python spin loop at nice 0) for the "
    "whole solve; `deterministic`, with `PlaceOptions(deterministic=True)`. HEFT ran once per graph and "
    "machine. Memory-tight: every device holds the given memory (1.15 x the graph's total / devices, at "
    "least 1.05 x its largest group).\n"
)


def _hard_section(rows: list[Row], limit: float, plots: Sequence[str]) -> list[str]:
    checks = evaluate_hard_checks(rows, limit)
    if not checks:
        return []
    return [
        "## Real and hard families (issue 10, item 5)\n",
        _HARD_INTRO,
        _table(["check", "measured", "verdict"], [[t.goal, t.measured, t.verdict] for t in checks]) + "\n",
        _hard_tables(rows),
        *[f"![{p[:-4].replace('_', ' ')}]({p})\n" for p in plots if p.startswith("gap_over_time_")],
    ]


def render(meta: dict[str, Any], rows: list[Row], plots: Sequence[str]) -> str:
    """The markdown text of the report."""
    limit = meta["time_limit_s"]
    ran = _ran(rows)
    targets = evaluate_targets(rows, limit)
    modes = meta.get("modes") or ["idle"]
    started = meta.get("started", "?")
    text = [
        f"# Solver benchmark, {meta.get('mode', '?')} run of {started[:10]}\n",
        (f"`{meta.get('command', '')}`: {len(ran)} solves and {len(rows) - len(ran)} skipped combinations, "
         f"{limit:g} s limit per solve, hard deadline limit + {meta.get('grace_s', '?'):g} s (the solve's process "
         f"group is killed), {meta.get('threads')} solver threads, seed {meta.get('seed')}; started {started}, "
         f"finished {meta.get('finished', '?')} ({_s((meta.get('wall_s') or 0) / 60)} min)"
        + ("" if list(modes) == ["idle"] else f"; modes {', '.join(modes)}") + ".\n"),
        _INTRO,
        "## Machine and versions\n", _machine(meta),
        "## Targets (issue 6, item 3)\n",
        _table(["target", "measured", "verdict"], [[t.goal, t.measured, t.verdict] for t in targets]) + "\n",
        *_hard_section(rows, limit, plots),
        "## Back ends at a glance\n",
        _GLANCE,
        _backend_summary(rows),
        "## Back ends compared (ratios within this run)\n",
        _RATIOS,
        _ratios_section(rows),
        "### CBC against CP-SAT, graph by graph\n",
        _head_to_head(rows, "cbc/shortest", "cpsat") or "No graph ran on both.\n",
        "## Largest graph proven optimal within the limit\n",
        _LARGEST,
        _largest_proven(rows),
        "## Plots\n",
        *[f"![{p[:-4].replace('_', ' ')}]({p})\n" for p in plots if not p.startswith("gap_over_time_")],
        "## Killed, crashed and skipped\n", _problems(rows),
        "## All runs\n", _family_tables(rows),
    ]
    return "\n".join(text)


def write_report(directory: str | Path) -> Path:
    """Write report.md and the plots into `directory`; the report's path."""
    directory = Path(directory)
    meta, rows = load(directory)
    plots = write_plots(rows, directory, meta["time_limit_s"]) if rows else []
    path = directory / "report.md"
    path.write_text(render(meta, rows, plots))
    return path


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m benchmarks.report RUN_DIRECTORY", file=sys.stderr)
        return 2
    print(f"wrote {write_report(args[0])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
