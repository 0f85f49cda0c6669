"""Routing and request work at scale (issue 11): a 2-op graph on 64-, 128- and 256-GPU full
meshes through `placer solve` and through `POST /v1/placements`, and the heavy but legal or
oversized requests of the audit, each with /healthz probed every 50 ms while it runs.

    python benchmarks/routing_scale.py --label after --out benchmarks/reports/2026-11-24-routing
    python benchmarks/routing_scale.py --label before --code /path/to/old/checkout --sizes 64 128
    python benchmarks/routing_scale.py --report benchmarks/reports/2026-11-24-routing

`--code` benchmarks another checkout (its `placer` and `api` on PYTHONPATH, this file's
client code unchanged), so one run of the old code and one of the new land in the same
`results.jsonl`; `--report` writes `report.md` from it. Times are wall clock on a shared
machine: compare rows of one run, and read the load average recorded with each row.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from benchmarks.hostile_heavy import full_mesh
from benchmarks.serving import service

ROOT = Path(__file__).resolve().parents[1]
PROBE_EVERY_S = 0.05


TWO_OPS = {"format": "placer.graph/v1", "name": "two", "ops": [{"id": "a", "time_ms": 1.0}, {"id": "b", "time_ms": 2.0}],
           "edges": [{"src": "a", "dst": "b", "bytes": 1_000_000}]}
TWO_GPUS = full_mesh(2)


def chain(n: int) -> dict[str, Any]:
    return {"ops": [{"id": f"o{i}", "time_ms": 1} for i in range(n)],
            "edges": [{"src": f"o{i}", "dst": f"o{i + 1}", "bytes": 1} for i in range(n - 1)]}


def layered(n_ops: int, width: int = 6) -> dict[str, Any]:
    """Deterministic layered DAG, two inputs per op from the layer before."""
    ops = [{"id": f"op{i}", "time_ms": 0.5 + (i * 7919 % 450) / 100} for i in range(n_ops)]
    edges = []
    for i in range(width, n_ops):
        start = (i // width - 1) * width
        for j in (start + i % width, start + (i + 1) % width):
            edges.append({"src": f"op{j}", "dst": f"op{i}", "bytes": (1 + i % 49) * 1_000_000})
    return {"ops": ops, "edges": edges}


def load_average() -> float:
    return os.getloadavg()[0]


def env_for(code: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(code)}


def probed(url: str, call: Callable[[], httpx.Response]) -> dict[str, Any]:
    """Run `call` while /healthz is probed every 50 ms; its status, time and the probes' latencies."""
    latencies: list[float] = []
    done = threading.Event()

    def probe() -> None:
        with httpx.Client(timeout=600) as c:
            while not done.is_set():
                began = time.perf_counter()
                c.get(f"{url}/healthz")
                latencies.append(time.perf_counter() - began)
                done.wait(PROBE_EVERY_S)

    prober = threading.Thread(target=probe)
    prober.start()
    began = time.perf_counter()
    try:
        reply = call()
    finally:
        elapsed = time.perf_counter() - began
        done.set()
        prober.join()
    body = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else {}
    return {"status": reply.status_code, "seconds": round(elapsed, 3), "response_bytes": len(reply.content),
            "code": body.get("code") if isinstance(body, dict) else None,
            "detail": str(body.get("detail"))[:160] if isinstance(body, dict) and body.get("detail") else None,
            "result_status": body.get("status") if isinstance(body, dict) else None,
            "healthz_probes": len(latencies),
            "healthz_max_ms": round(1e3 * max(latencies), 1) if latencies else None,
            "healthz_median_ms": round(1e3 * statistics.median(latencies), 1) if latencies else None}


def run_cli(code: Path, workdir: Path, n: int) -> dict[str, Any]:
    graph, hw, out = workdir / "two.json", workdir / f"mesh{n}.json", workdir / f"result{n}.json"
    graph.write_text(json.dumps(TWO_OPS))
    hw.write_text(json.dumps(full_mesh(n)))
    began = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "placer.cli", "solve", str(graph), "--hardware", str(hw),
                           "--time-limit", "30", "-q", "-o", str(out)], env=env_for(code), capture_output=True,
                          check=False, cwd=workdir)  # not this checkout's directory: `-m` would import from it
    elapsed = time.perf_counter() - began
    status = json.loads(out.read_text())["status"] if out.exists() else None
    return {"case": f"cli solve, 2 ops, {n}-GPU mesh", "exit": proc.returncode, "seconds": round(elapsed, 3),
            "result_status": status}


def api_cases(sizes: list[int]) -> list[tuple[str, str, Any]]:
    cases: list[tuple[str, str, Any]] = [
        (f"POST /v1/placements, 2 ops, {n}-GPU mesh", "/v1/placements",
         {"graph": TWO_OPS, "hardware": full_mesh(n), "options": {"time_limit_s": 30}}) for n in sizes]
    layered5k = layered(5000)
    placement = {op["id"]: f"gpu{i % 2}" for i, op in enumerate(layered5k["ops"])}
    cases += [
        ("POST /v1/placements, 100,000-op chain (over the 5,000 limit)", "/v1/placements",
         {"graph": chain(100_000), "hardware": "dgx1_v100"}),
        ("POST /v1/crossover, 400,000 device counts (over the limit)", "/v1/crossover",
         {"devices": list(range(1, 400_001)), "epochs": {"by_width": {"1": 1.0, "400000": 2.0}},
          "mp_speedup": {"2": 1.5}, "allow_extrapolation": True}),
        ("POST /v1/crossover, 2,048 device counts (at the limit)", "/v1/crossover",
         {"devices": list(range(1, 2049)), "epochs": {"by_width": {"1": 1.0, "2048": 2.0}},
          "mp_speedup": {"2": 1.5}}),
        ("POST /v1/simulations, 5,000-op layered graph, contention", "/v1/simulations",
         {"graph": layered5k, "hardware": TWO_GPUS, "placement": placement, "contention": True}),
        ("POST /v1/validations, 5,000-op graph, 9,988 edges (validation only)", "/v1/validations",
         {"graph": layered5k, "hardware": TWO_GPUS,
          "result": {"format": "placer.result/v1", "status": "feasible", "solver": "manual", "makespan_ms": 1.0,
                     "placement": placement, "schedule": []}}),
    ]
    return cases


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    code = Path(args.code).resolve()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if "cli" in args.modes:
            for n in args.sizes:
                rows.append({"mode": "cli", **run_cli(code, workdir, n)})
                print(rows[-1], flush=True)
        if "api" in args.modes:
            with service(workdir, env=env_for(code)) as url, httpx.Client(base_url=url, timeout=3600) as client:
                for name, path, body in api_cases(args.sizes):
                    if args.match and not any(m in name for m in args.match):
                        continue
                    payload = json.dumps(body).encode()
                    row = probed(url, lambda p=path, b=payload: client.post(
                        p, content=b, headers={"content-type": "application/json"}))
                    rows.append({"mode": "api", "case": name, "request_bytes": len(payload), **row})
                    print(rows[-1], flush=True)
    meta = {"label": args.label, "code": str(code), "when": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "load_average_end": round(load_average(), 2), "cpus": os.cpu_count()}
    with open(out / "results.jsonl", "a") as f:
        for row in rows:
            f.write(json.dumps({"label": args.label, **row, "load_average": meta["load_average_end"]}) + "\n")
    print(f"appended {len(rows)} rows to {out / 'results.jsonl'}")


def write_report(directory: Path) -> Path:
    rows = [json.loads(line) for line in (directory / "results.jsonl").read_text().splitlines() if line.strip()]
    intro = ("A 2-op graph on full meshes of 64, 128 and 256 GPUs (25 GB/s, 5 us links), through the CLI and "
             "through the API, and the audit's heavy requests. `before`: the code before issue 11's routing "
             "and event-loop changes; `after`: this branch. /healthz was probed every 50 ms during each API "
             "request (one probe at a time, so a blocked event loop shows as one long probe). Wall-clock "
             "times on a 2-core machine shared with other work: the load average is in each row.")
    header = ("| label | mode | case | HTTP / exit | answer | seconds | /healthz max ms | /healthz median ms | "
              "probes | load |")
    lines = ["# Routing and request work at scale (issue 11)", "", intro, "", header,
             "|---|---|---|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        answer = r.get("result_status") or r.get("code") or ""
        lines.append(f"| {r['label']} | {r['mode']} | {r['case']} | {r.get('status', r.get('exit'))} | {answer} | "
                     f"{r['seconds']} | {r.get('healthz_max_ms', '')} | {r.get('healthz_median_ms', '')} | "
                     f"{r.get('healthz_probes', '')} | {r.get('load_average', '')} |")
    labels = list(dict.fromkeys(r["label"] for r in rows))
    if len(labels) > 1:
        latest = {(r["label"], r["mode"], r["case"]): r for r in rows}
        cases = list(dict.fromkeys((r["mode"], r["case"]) for r in rows))
        lines += ["", "Side by side (the latest row of each label; seconds, then /healthz max ms in brackets):", "",
                  "| mode | case | " + " | ".join(labels) + " |", "|---|---|" + "---:|" * len(labels)]
        for mode, case in cases:
            cells = []
            for label in labels:
                r = latest.get((label, mode, case))
                probe = f" [{r['healthz_max_ms']}]" if r and r.get("healthz_max_ms") is not None else ""
                cells.append(f"{r['seconds']} ({r.get('status', r.get('exit'))}){probe}" if r else "not run")
            lines.append(f"| {mode} | {case} | " + " | ".join(cells) + " |")
    details = [r for r in rows if r.get("detail")]
    if details:
        lines += ["", "Refusals:", ""] + [f"- {r['label']}, {r['case']}: `{r['detail']}`" for r in details]
    path = directory / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default="after")
    parser.add_argument("--code", default=str(ROOT), help="checkout whose placer and api are measured")
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--modes", nargs="+", default=["cli", "api"], choices=["cli", "api"])
    parser.add_argument("--match", nargs="+", metavar="TEXT", help="only the API cases whose name contains one")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "reports" / "2026-11-24-routing"))
    parser.add_argument("--report", metavar="DIR", help="only write DIR/report.md from DIR/results.jsonl")
    args = parser.parse_args(argv)
    if args.report:
        print(f"wrote {write_report(Path(args.report))}")
        return 0
    run(args)
    print(f"wrote {write_report(Path(args.out))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
