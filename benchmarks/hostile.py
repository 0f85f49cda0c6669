"""The hostile-input and fault campaign against a real `placer serve` on loopback (issue 11).

    python -m benchmarks.hostile --out benchmarks/reports/DATE-hostile

Phases, each on its own server and temporary job store (all killed and removed at the end):
malformed and oversized requests on every endpoint (benchmarks/hostile_cases.py), heavy but
legal requests (hostile_heavy.py), faults and security checks (hostile_faults.py). A probe
process GETs /healthz every 50 ms throughout. Writes `results.jsonl` (one row per request,
check and phase), `report.md` and `meta.json`; exits 1 when a check fails.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.hostile_cases import FAST_S, Case, Limits, control_cases, judge, malformed_cases
from benchmarks.hostile_faults import FAULTS, Lab
from benchmarks.hostile_heavy import Heavy, encode, heavy_cases, judge_heavy
from benchmarks.hostile_http import ROOT, Service, send
from benchmarks.hostile_report import write_report

__all__ = ["main", "run_case"]

HEALTHZ_TARGET_MS = 100.0


def run_case(port: int, case: Case, api_key: str | None, timeout_s: float = 20.0, timed: bool = True) -> dict[str, Any]:
    """Send one case and judge the answer: a results.jsonl row. `timed=False` leaves the time
    to answer out of the verdict (the smoke test asserts no timing)."""
    headers = dict(case.headers)
    if api_key and case.auth and "authorization" not in headers:
        headers["authorization"] = f"Bearer {api_key}"
    reply = send(port, case.method, case.target, case.body, headers, timeout_s=timeout_s, chunked=case.chunked,
                 raw=case.raw, check_keepalive=case.keepalive)
    body = reply.json()
    problems = judge(case, reply.status, reply.error, reply.elapsed_s if timed else 0.0, body, reply.keepalive)
    return {"kind": "request", "id": case.id, "endpoint": case.endpoint, "what": case.what,
            "method": case.method, "bytes": len(case.body), "expect": _expectation(case),
            "status": reply.status, "error": reply.error,
            "code": body.get("code") if isinstance(body, dict) else None,
            "detail": (str(body.get("detail")) if isinstance(body, dict) else reply.body[:200].decode(
                "utf-8", "replace"))[:300],
            "ms": round(reply.elapsed_s * 1e3, 1), "keepalive": reply.keepalive,
            "verdict": "fail" if problems else "pass", "problems": problems}


def _expectation(case: Case) -> str:
    text = case.expect
    if case.alt_valid_false:
        text += f" (or 200 valid:false naming {case.alt_valid_false!r})"
    if case.code_not:
        text += f", code not {'/'.join(case.code_not)}"
    if case.detail_has:
        text += f", detail names {' or '.join(map(repr, case.detail_has))}"
    return text + (f", <= {FAST_S:g} s" if case.fast else "")


class Campaign:
    """Holds the phase windows, the rows and the services; `close()` kills what is left."""

    def __init__(self, out: Path, api_key: str | None) -> None:
        self.out = out
        self.api_key = api_key
        self.root = Path(tempfile.mkdtemp(prefix="placer-hostile-"))
        self.probe_log = self.root / "healthz.jsonl"
        self.lab = Lab(self.root, self.probe_log, api_key)
        self.phases: list[tuple[str, float, float]] = []
        self.rows: list[dict[str, Any]] = []
        self.results = out / "results.jsonl"
        self.results.write_text("")

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        began = time.time()
        try:
            yield
        finally:
            self.phases.append((name, began, time.time()))

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        with open(self.results, "a") as f:
            f.write(json.dumps(row, default=str) + "\n")
        if row.get("verdict") == "fail" or row.get("pass") is False:
            what = row.get("id") or row.get("check") or f"healthz in {row.get('phase')}"
            why = row.get("problems") or row.get("observed") or f"max {row.get('max_ms')} ms"
            print(f"  FAIL {what}: {why}", flush=True)

    def close(self) -> None:
        for svc in self.lab.services:
            svc.kill()
        left = [pid for svc in self.lab.services for pid in svc.leftovers()]
        if left:
            print(f"processes still alive after the campaign: {left}", file=sys.stderr)
        shutil.rmtree(self.root, ignore_errors=True)

    def main_service(self, name: str, **settings: Any) -> Service:
        return self.lab.service(name, workers=2, **settings).start()

    def restart(self, svc: Service) -> Service:
        svc.kill()
        return self.lab.again(svc).start()


def _openapi_endpoints(port: int, api_key: str | None) -> list[str]:
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    reply = send(port, "GET", "/openapi.json", headers=headers, timeout_s=30.0, check_keepalive=False)
    doc = reply.json() or {}
    return sorted(f"{method.upper()} {path}" for path, ops in doc.get("paths", {}).items() for method in ops)


def run_malformed(c: Campaign, cases: list[Case]) -> list[str]:
    svc = c.main_service("malformed")
    endpoints = _openapi_endpoints(svc.port, c.api_key)
    with c.phase("malformed"):
        for case in control_cases() + cases:
            row = run_case(svc.port, case, c.api_key)
            row["phase"] = "control" if case.id.startswith("ok.") else "malformed"
            c.add(row)
            if row["error"] is not None and send(svc.port, "GET", "/healthz", timeout_s=5,
                                                 check_keepalive=False).status is None:
                c.add({"kind": "note", "phase": "malformed", "text": f"server unresponsive after {case.id}; "
                       "restarted"})
                svc = c.restart(svc)
    svc.stop()
    return endpoints


def _settle(c: Campaign, svc: Service, after: str, timeout_s: float = 60.0) -> Service:
    """Wait until /healthz answers again after a heavy case; restart the server if it does not."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if send(svc.port, "GET", "/healthz", timeout_s=5, check_keepalive=False).status == 200:
            return svc
        time.sleep(0.5)
    c.add({"kind": "note", "phase": f"heavy:{after}", "text": f"/healthz did not answer within {timeout_s:g} s "
           "after the case; server restarted"})
    return c.restart(svc)


def run_heavy(c: Campaign, cases: list[Heavy]) -> None:
    svc = c.main_service("heavy")
    headers = {"authorization": f"Bearer {c.api_key}"} if c.api_key else {}
    for case in cases:
        body = encode(case)
        with c.phase(f"heavy:{case.id}"):
            reply = send(svc.port, "POST", case.target, body, headers, timeout_s=case.timeout_s,
                         check_keepalive=False)
            svc = _settle(c, svc, case.id)
        doc = reply.json() if isinstance(reply.json(), dict) else {}
        problems = judge_heavy(case, reply.status, reply.error, reply.elapsed_s)
        row = {"kind": "heavy", "id": case.id, "what": case.what, "bytes": len(body), "must": case.must,
               "budget_s": case.budget_s, "status": reply.status, "error": reply.error, "code": doc.get("code"),
               "detail": str(doc.get("detail", ""))[:200], "s": round(reply.elapsed_s, 2),
               "reply_bytes": len(reply.body), "verdict": "fail" if problems else "pass", "problems": problems}
        if case.time_limit_s is not None:
            row["time_limit_s"] = case.time_limit_s
            row["solve_time_s"] = round(doc["solve_time_s"], 2) if isinstance(doc.get("solve_time_s"), float) \
                else doc.get("solve_time_s")
            row["result_status"] = doc.get("status")
        c.add(row)
        if reply.status == 202 and doc.get("job_id"):
            send(svc.port, "DELETE", f"/v1/jobs/{doc['job_id']}", headers=headers, timeout_s=30,
                 check_keepalive=False)
    svc.stop()


def run_faults(c: Campaign, names: list[str]) -> None:
    for name in names:
        with c.phase(f"fault:{name}"):
            try:
                rows = FAULTS[name](c.lab)
            except Exception as exc:  # noqa: BLE001  a scenario that breaks is a result, not the end of the run
                rows = [{"kind": "fault", "fault": name.replace("_", " "), "check": "scenario ran to the end",
                         "pass": False, "observed": f"{type(exc).__name__}: {exc}"}]
        for row in rows:
            c.add(row)
        for svc in c.lab.services:  # a scenario that failed half-way leaves its server running
            if svc.proc is not None and svc.proc.poll() is None:
                svc.kill()


def healthz_rows(probe_log: Path, phases: list[tuple[str, float, float]]) -> list[dict[str, Any]]:
    """Max and p99 latency of the /healthz probe per phase (errors counted apart): every probe
    whose request overlaps the phase counts. A phase over before a probe came round (shorter
    than the probe's period) has no sample and is shown unjudged."""
    samples = []
    if probe_log.exists():
        for line in probe_log.read_text().splitlines():
            try:
                samples.append(json.loads(line))
            except ValueError:
                continue
    rows = []
    for name, began, ended in phases:
        inside = [s for s in samples if s["t"] <= ended and s["t"] + s["ms"] / 1e3 >= began]
        ok = sorted(s["ms"] for s in inside if isinstance(s["status"], int))
        failed = [s for s in inside if not isinstance(s["status"], int)]
        p99 = ok[min(len(ok) - 1, int(0.99 * len(ok)))] if ok else None
        judged = not name.startswith("fault:") and bool(inside)  # faults stop servers on purpose
        worst = max([*ok, *[s["ms"] for s in failed]], default=None)
        verdict = None
        if judged:
            verdict = "pass" if ok and not failed and worst is not None and worst < HEALTHZ_TARGET_MS else "fail"
        rows.append({"kind": "healthz", "phase": name, "seconds": round(ended - began, 1), "samples": len(inside),
                     "errors": len(failed), "max_ms": worst, "p99_ms": p99,
                     "over_100ms": sum(1 for v in ok if v >= HEALTHZ_TARGET_MS), "verdict": verdict})
    return rows


def _machine() -> dict[str, Any]:
    def run(*cmd: str) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=10, cwd=ROOT,
                                  check=False).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"commit": run("git", "rev-parse", "--short", "HEAD"), "dirty": bool(run("git", "status", "--porcelain")),
            "python": platform.python_version(), "nproc": os.cpu_count(), "kernel": platform.release(),
            "loadavg_start": os.getloadavg()}


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hostile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(f"benchmarks/reports/{dt.date.today()}-hostile"))
    parser.add_argument("--api-key", default=None, help="the servers' PLACER_API_KEY (default: a random one)")
    parser.add_argument("--no-api-key", action="store_true", help="run the servers without an API key")
    parser.add_argument("--phases", nargs="+", default=["malformed", "heavy", "faults"],
                        choices=["malformed", "heavy", "faults"])
    parser.add_argument("--match", nargs="+", default=None, help="only cases whose id contains one of these")
    parser.add_argument("--faults", nargs="+", default=list(FAULTS), choices=list(FAULTS))
    parser.add_argument("--label", default="", help="a sentence for the report's header (what code is under test)")
    args = parser.parse_args(argv)
    api_key = None if args.no_api_key else (args.api_key or secrets.token_hex(16))
    limits = Limits.of_service()
    machine = _machine()  # before the output directory exists: "dirty" means the code under test
    args.out.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, _interrupt)  # so `finally` kills the servers and removes the temp dirs
    meta = {"command": " ".join(["python -m benchmarks.hostile", *(argv if argv is not None else sys.argv[1:])]),
            "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "api_key": bool(api_key),
            "limits": limits.__dict__, "label": args.label, **machine}
    c = Campaign(args.out, api_key)
    endpoints: list[str] = []

    def keep(cid: str) -> bool:
        return args.match is None or any(m in cid for m in args.match)

    try:
        if "malformed" in args.phases:
            print("malformed requests ...", flush=True)
            endpoints = run_malformed(c, [k for k in malformed_cases(limits, api_key) if keep(k.id)])
        if "heavy" in args.phases:
            print("heavy requests ...", flush=True)
            run_heavy(c, [h for h in heavy_cases(limits.max_ops) if keep(h.id)])
        if "faults" in args.phases:
            print("faults ...", flush=True)
            run_faults(c, args.faults)
        for row in healthz_rows(c.probe_log, c.phases):
            c.add(row)
    finally:
        c.close()
    meta["finished"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    meta["loadavg_end"] = os.getloadavg()
    meta["endpoints"] = endpoints
    (args.out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    failed = write_report(args.out, c.rows, meta)
    print(f"{failed} failed checks; report: {args.out / 'report.md'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
