"""report.md of the hostile campaign, from its rows (results.jsonl) and meta.json."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

__all__ = ["write_report"]


def _cell(value: Any, width: int = 120) -> str:
    text = "" if value is None else str(value)
    text = text.replace("\n", " / ").replace("|", "\\|")
    return text if len(text) <= width else text[: width - 3] + "..."


def _table(head: list[str], rows: list[list[Any]], width: int = 120) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_cell(v, width) for v in row) + " |" for row in rows]
    return out + [""]


def _mark(ok: bool | None) -> str:
    return {True: "pass", False: "**FAIL**", None: "-"}[ok]


def write_report(out: Path, rows: list[dict[str, Any]], meta: dict[str, Any]) -> int:
    """Write report.md; return the number of failed checks."""
    requests = [r for r in rows if r["kind"] == "request" and r.get("phase") == "malformed"]
    controls = [r for r in rows if r["kind"] == "request" and r.get("phase") == "control"]
    heavy = [r for r in rows if r["kind"] == "heavy"]
    health = [r for r in rows if r["kind"] == "healthz"]
    faults = [r for r in rows if r["kind"] == "fault"]
    notes = [r for r in rows if r["kind"] == "note"]
    statuses = Counter((r["status"] // 100 * 100) if r["status"] else r["error"] for r in requests)
    endpoints = meta.get("endpoints") or []
    covered = Counter(r["endpoint"] for r in requests)
    uncovered = [e for e in endpoints if not covered.get(e)]
    fast = [r for r in requests if "<= " in r["expect"]]
    slow = [r for r in fast if any("answered after" in p for p in r["problems"])]
    resets = [r for r in requests if r["error"] is not None or r.get("keepalive") == "broken"]
    fivexx = [r for r in requests if r["status"] and r["status"] >= 500]
    bad_requests = [r for r in requests if r["verdict"] == "fail"]
    bad_heavy = [r for r in heavy if r["verdict"] == "fail"]
    bad_health = [r for r in health if r["verdict"] == "fail"]
    bad_faults = [r for r in faults if r["pass"] is False]
    bad_controls = [r for r in controls if r["verdict"] == "fail"]
    failed = len(bad_requests) + len(bad_heavy) + len(bad_health) + len(bad_faults) + len(bad_controls)

    lines = ["# Hostile-input and fault campaign", "",
             f"`{meta.get('command')}`, commit `{meta.get('commit')}`{' (uncommitted changes)' if meta.get('dirty') else ''}, "
             f"{meta.get('started')} to {meta.get('finished')}; Python {meta.get('python')}, {meta.get('nproc')} cores, "
             f"load {meta.get('loadavg_start')} at start, {meta.get('loadavg_end')} at end; API key "
             f"{'set' if meta.get('api_key') else 'not set'}. Limits under test: "
             + ", ".join(f"{k} {v}" for k, v in (meta.get("limits") or {}).items()) + ".", "",
             *([meta["label"], ""] if meta.get("label") else []),
             ("Every request goes to a real `placer serve` on 127.0.0.1 over a fresh connection, with a timeout; "
             "after each answer a `GET /healthz` on the same connection checks that keep-alive survived. A probe "
             "process GETs `/healthz` every 50 ms throughout. See `benchmarks/README.md`."), "",
             "## Summary", ""]
    if requests:
        done = [
            (f">= 150 malformed or oversized requests across every endpoint: {len(requests)} sent, "
             f"{len(covered)} endpoints" + (f"; no case for {', '.join(uncovered)}" if uncovered else ""),
             len(requests) >= 150 and not uncovered),
            (f"zero 5xx: {len(fivexx)}", not fivexx),
            (f"zero resets, timeouts or broken keep-alive connections: {len(resets)}", not resets),
            (f"a 4xx for anything over a documented size within {1:g} s: {len(fast) - len(slow)} of {len(fast)}",
             not slow),
            (f"every malformed request answered as expected: {len(requests) - len(bad_requests)} of {len(requests)}",
             not bad_requests),
            (f"valid control requests answered 2xx: {len(controls) - len(bad_controls)} of {len(controls)}",
             not bad_controls),
        ]
    else:
        done = []
    if heavy:
        done.append(((f"heavy but legal requests answered or refused within their limits: "
                     f"{len(heavy) - len(bad_heavy)} of {len(heavy)}"), not bad_heavy))
        limited = [r for r in heavy if r.get("time_limit_s") is not None]
        if limited:
            done.append(("every back end within 1 s of its time limit (+ 0.5 s for HTTP): " + ", ".join(
                f"{r['id'].removeprefix('limit-')} {r['s']} s for {r['time_limit_s']:g} s" for r in limited),
                not any(r["verdict"] == "fail" for r in limited)))
    judged = [r for r in health if r["verdict"] is not None]
    if judged:
        done.append(((f"/healthz under 100 ms throughout (max per phase): {len(judged) - len(bad_health)} of "
                     f"{len(judged)} phases"), not bad_health))
    verdicts = [r for r in faults if r["pass"] is not None]
    if verdicts:
        done.append((f"fault and security checks: {len(verdicts) - len(bad_faults)} of {len(verdicts)}",
                     not bad_faults))
    lines += _table(["check", "verdict"], [[text, _mark(ok)] for text, ok in done], width=400)
    if requests:
        lines += [f"Malformed requests: {len(requests)}; answers by class: "
                  + ", ".join(f"{k if isinstance(k, str) else f'{k // 100}xx'}: {v}" for k, v in
                              sorted(statuses.items(), key=lambda kv: str(kv[0]))) + ".", ""]
    lines += [f"**{failed} failed checks.**", ""]

    if requests:
        lines += ["## Endpoints", "", ("From the OpenAPI document (`/openapi.json`), with the cases sent to each "
                  "(`(none)`: requests no route matches: bad request lines, unknown paths)."), ""]
        names = list(dict.fromkeys([*endpoints, *sorted(covered)]))
        lines += _table(["endpoint", "cases", "failed"], [
            [e, covered.get(e, 0), sum(1 for r in bad_requests if r["endpoint"] == e)] for e in names])
        lines += ["## Failed requests", ""]
        lines += _table(["id", "what", "expected", "status", "code", "ms", "why", "detail"], [
            [r["id"], r["what"], r["expect"], r["status"] or r["error"], r["code"], r["ms"], "; ".join(r["problems"]),
             r["detail"]] for r in bad_requests + bad_controls], width=160) if bad_requests or bad_controls else ["none", ""]
    if heavy:
        lines += ["## Heavy but legal requests", "",
                  ("`answer-or-refuse`: a 2xx within the budget or a 4xx within 1 s; `refuse`: over a documented size, "
                  "a 4xx within 1 s; `accepted`: 202 within the budget. Solver-limit cases: the budget is the time "
                  "limit + 1 s + 0.5 s of HTTP and queueing."), ""]
        lines += _table(["case", "what", "body", "must", "budget s", "status", "s", "reply", "verdict", "why / detail"], [
            [r["id"], r["what"], f"{r['bytes']:,} B", r["must"], r["budget_s"], r["status"] or r["error"], r["s"],
             f"{r['reply_bytes']:,} B" + (f", solve_time_s {r['solve_time_s']}" if r.get("solve_time_s") else ""),
             _mark(r["verdict"] == "pass"), "; ".join(r["problems"]) or r["detail"]] for r in heavy], width=160)
    if health:
        lines += ["## /healthz latency per phase", "",
                  ("The probe's answers whose request overlaps each phase's time window (target: every answer "
                  "under 100 ms; fault phases stop servers on purpose, and a phase over before the probe came "
                  "round has no sample: both are shown, not judged)."), ""]
        lines += _table(["phase", "s", "samples", "errors", "max ms", "p99 ms", ">= 100 ms", "verdict"], [
            [r["phase"], r["seconds"], r["samples"], r["errors"], r["max_ms"], r["p99_ms"], r["over_100ms"],
             _mark(None if r["verdict"] is None else r["verdict"] == "pass")] for r in health])
    if faults:
        lines += ["## Faults and security", "",
                  ("A correct service loses nothing, or fails loudly (the job `failed` with a reason, `/healthz` 503 "
                  "naming the problem), and recovers without a restart once the cause is gone. `-`: an observation."),
                  ""]
        lines += _table(["fault", "check", "verdict", "observed"], [
            [r["fault"], r["check"], _mark(r["pass"]), r["observed"]] for r in faults], width=400)
    if notes:
        lines += ["## Notes", ""] + [f"- {n['phase']}: {n['text']}" for n in notes] + [""]
    if requests:
        lines += ["## Every request", ""]
        lines += _table(["id", "endpoint", "what", "bytes", "expected", "status", "code", "ms", "verdict"], [
            [r["id"], r["endpoint"], r["what"], r["bytes"], r["expect"], r["status"] or r["error"], r["code"], r["ms"],
             _mark(r["verdict"] == "pass")] for r in controls + requests], width=100)
    (out / "report.md").write_text("\n".join(lines))
    return failed


def main(out: str) -> int:
    """Re-render report.md from a run directory: `python -m benchmarks.hostile_report DIR`."""
    path = Path(out)
    rows = [json.loads(line) for line in (path / "results.jsonl").read_text().splitlines() if line]
    meta = json.loads((path / "meta.json").read_text())
    write_report(path, rows, meta)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1]))
