"""Time-limit benchmark: how long after its `time_limit_s` each back end answers.

    python -m benchmarks.limits                                  # about 10 minutes on 2 cores
    python -m benchmarks.limits --limits 2 --solvers cbc --graphs layered300 --modes library

Each back end runs on graphs no solver finishes in the limit (the zoo's Inception-V3 and
GNMT on a DGX-1 quad, a layered 300-op graph on 4 fully connected GPUs), with time limits
of 2, 5 and 10 s, two ways:

- `library`: `placer.engine.place` in a fresh Python process; the wall time of the call.
- `http`: `POST /v1/placements` to a real `placer serve` on loopback (1 worker, started once);
  the time from sending the request to the full answer, as a client sees it.

The overrun is that time minus the limit (negative: the answer came early). Rows go to
`results.jsonl` as they finish; `report.md` has one table per way and the worst overrun of
each back end. The target (issue 11) is an overrun under 1 s for every back end.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from benchmarks.serving import service

ROOT = Path(__file__).resolve().parents[1]
SOLVERS = ("cpsat", "cbc", "highs")
LIMITS = (2.0, 5.0, 10.0)
GRAPHS = ("inception_v3", "gnmt", "layered300")
MODES = ("library", "http")
TARGET_OVERRUN_S = 1.0

_CHILD = """
import json, sys, time
from placer import PlaceOptions, place, parse_graph, parse_hardware
g, hw, options = (json.loads(open(p).read()) for p in sys.argv[1:4])
graph, hardware, options = parse_graph(g), parse_hardware(hw), PlaceOptions(**options)
began = time.perf_counter()
result = place(graph, hardware, options)
wall = time.perf_counter() - began
doc = result.model_dump(mode="json")
print(json.dumps({"wall_s": wall, "status": doc["status"], "makespan_ms": doc["makespan_ms"],
                  "solve_time_s": doc["solve_time_s"], "stats": doc.get("stats") or {}}))
"""


def graph_and_hardware(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The graph called `name` and the machine it runs on."""
    import hardware_graphs
    from benchmarks import graphs
    from placer import zoo

    if name.startswith("layered"):
        return graphs.layered(int(name.removeprefix("layered")), seed=0), graphs.fully_connected_hardware(4)
    return zoo.build(name), hardware_graphs.load_preset_document("dgx1_v100_quad")


def _stats(stats: dict[str, Any]) -> dict[str, Any]:
    keys = ("solver_status", "solver_reason", "solver_wall_s", "build_s", "milp_skipped", "cpsat_skipped",
            "decomposition_skipped", "best_from")
    return {k: stats[k] for k in keys if k in stats}


def run_library(graph: dict[str, Any], hardware: dict[str, Any], solver: str, limit: float,
                workdir: Path) -> dict[str, Any]:
    """`place` in a fresh process; its wall time."""
    files = []
    for name, doc in (("g.json", graph), ("hw.json", hardware),
                      ("o.json", {"solver": solver, "time_limit_s": limit})):
        (workdir / name).write_text(json.dumps(doc))
        files.append(str(workdir / name))
    done = subprocess.run([sys.executable, "-c", _CHILD, *files], capture_output=True, text=True,
                          timeout=limit + 120, cwd=ROOT, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return {"seconds": answer["wall_s"], "status": answer["status"], "makespan_ms": answer["makespan_ms"],
            "solve_time_s": answer["solve_time_s"], **_stats(answer["stats"])}


def run_http(url: str, graph: dict[str, Any], hardware: dict[str, Any], solver: str, limit: float) -> dict[str, Any]:
    """One synchronous placement over HTTP; the time until the whole answer arrived."""
    import httpx

    body = {"graph": graph, "hardware": hardware, "options": {"solver": solver, "time_limit_s": limit}}
    payload = json.dumps(body).encode()
    began = time.perf_counter()
    reply = httpx.post(f"{url}/v1/placements", content=payload, headers={"Content-Type": "application/json"},
                       timeout=limit + 120)
    seconds = time.perf_counter() - began
    if reply.status_code != 200:
        return {"seconds": seconds, "error": f"HTTP {reply.status_code}: {reply.text[:200]}"}
    doc = reply.json()
    return {"seconds": seconds, "status": doc.get("status"), "makespan_ms": doc.get("makespan_ms"),
            "solve_time_s": doc.get("solve_time_s"), "stopped_by": doc.get("stopped_by"),
            **_stats(doc.get("stats") or {})}


def report(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = ["# Time limits: how long after `time_limit_s` each back end answers", "",
             f"Command: `{meta['command']}`. Machine: {meta['machine']}. Started {meta['started']}.", "",
             ("Overrun = answer time - limit (negative: early). `library`: the wall time of `place` in a "
              "fresh process; `http`: request to full answer through a real `placer serve` (1 worker). "
              f"Target: under {TARGET_OVERRUN_S:g} s for every back end."), ""]
    for mode in MODES:
        mine = [r for r in rows if r["mode"] == mode]
        if not mine:
            continue
        lines += [f"## {mode}", "", ("| graph | solver | limit s | answer s | overrun s | status | solver status "
                                     "| why the solver stopped | MILP build s |"), "|---|---|---|---|---|---|---|---|---|"]
        for r in mine:
            seconds = r.get("seconds")
            over = f"{seconds - r['limit_s']:+.2f}" if seconds is not None else "-"
            build = f"{r['build_s']:.2f}" if isinstance(r.get("build_s"), (int, float)) else ""
            lines.append(f"| {r['graph']} | {r['solver']} | {r['limit_s']:g} | "
                         f"{seconds:.2f} | {over} | {r.get('status', r.get('error'))} | {r.get('solver_status', '')} "
                         f"| {r.get('solver_reason', '')} | {build} |" if seconds is not None else
                         f"| {r['graph']} | {r['solver']} | {r['limit_s']:g} | - | - | {r.get('error')} | | | |")
        lines.append("")
    lines += ["## Worst overrun per back end", "", "| solver | mode | worst overrun s | runs | within target |",
              "|---|---|---|---|---|"]
    for solver in SOLVERS:
        for mode in MODES:
            mine = [r["seconds"] - r["limit_s"] for r in rows
                    if r["solver"] == solver and r["mode"] == mode and r.get("seconds") is not None]
            if mine:
                worst = max(mine)
                lines.append(f"| {solver} | {mode} | {worst:+.2f} | {len(mine)} | "
                             f"{'yes' if worst < TARGET_OVERRUN_S else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.limits", description=__doc__.split("\n\n")[0])
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=SOLVERS)
    parser.add_argument("--limits", nargs="+", type=float, default=list(LIMITS))
    parser.add_argument("--graphs", nargs="+", default=list(GRAPHS))
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "reports" /
                        f"{dt.date.today().isoformat()}-limits")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"command": "python -m benchmarks.limits " + " ".join(argv if argv is not None else sys.argv[1:]),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
                       f"load {os.getloadavg()[0]:.1f}",
            "started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")}
    (args.out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    results = args.out / "results.jsonl"
    results.write_text("")
    rows: list[dict[str, Any]] = []
    cases = {name: graph_and_hardware(name) for name in args.graphs}
    with tempfile.TemporaryDirectory(prefix="placer-limits-") as tmp:
        workdir = Path(tmp)
        for mode in args.modes:
            with service(workdir, cwd=ROOT, max_ops=5000, max_time_limit_s=max(args.limits), async_ops_threshold=100_000,
                         max_body_bytes=50_000_000) if mode == "http" else nullcontext() as url:
                for name, (graph, hardware) in cases.items():
                    for solver in args.solvers:
                        for limit in args.limits:
                            if mode == "library":
                                answer = run_library(graph, hardware, solver, limit, workdir)
                            else:
                                answer = run_http(str(url), graph, hardware, solver, limit)
                            row = {"mode": mode, "graph": name, "solver": solver, "limit_s": limit, **answer,
                                   "load": round(os.getloadavg()[0], 2)}
                            rows.append(row)
                            with results.open("a") as out:
                                out.write(json.dumps(row) + "\n")
                            over = row["seconds"] - limit if row.get("seconds") is not None else float("nan")
                            print(f"{mode:8} {name:13} {solver:6} {limit:5g} s  overrun {over:+.2f} s  "
                                  f"{row.get('status', row.get('error'))} {row.get('solver_reason', '')}", flush=True)
    (args.out / "report.md").write_text(report(rows, meta))
    print(f"wrote {args.out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
