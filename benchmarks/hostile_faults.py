"""Faults an operator causes, each on its own `placer serve` and job store: a solve worker
killed, the server killed with jobs queued, the store file deleted, the store full (a file
size limit set on the running server with prlimit, then lifted), the store unwritable (a
read-only directory and files, the server run without CAP_DAC_OVERRIDE since root ignores
file modes), plus the security checks (API key brute force, /docs assets).

Each scenario returns check rows: `pass` True/False for a verdict, None for an observation.
What a correct service does (issue 11): lose nothing, or fail loudly (the job `failed` with a
reason, /healthz 503 naming the problem), and recover without a restart once the cause is gone.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.hostile_cases import GRAPH, HARDWARE
from benchmarks.hostile_heavy import FOUR_GPUS, layered
from benchmarks.hostile_http import Reply, Service, alive, send

__all__ = ["FAULTS", "Lab"]

FINAL = ("succeeded", "failed", "cancelled")


@dataclass
class Lab:
    """Where the scenarios run: a root directory, the shared /healthz log, the API key, and
    every service started (the campaign kills them all at the end)."""

    root: Path
    probe_log: Path
    api_key: str | None
    services: list[Service] = field(default_factory=list)

    def service(self, name: str, drop_dac: bool = False, **settings: Any) -> Service:
        workdir = self.root / name
        workdir.mkdir(parents=True, exist_ok=True)
        base: dict[str, Any] = {"db_path": str(workdir / "jobs.sqlite3"), "workers": 1}
        if self.api_key:
            base["api_key"] = self.api_key
        svc = Service(workdir, {**base, **settings}, probe_log=self.probe_log, drop_dac=drop_dac)
        self.services.append(svc)
        return svc

    def again(self, old: Service) -> Service:
        """A new service on the same store and settings (a restart)."""
        svc = Service(old.workdir, dict(old.settings), probe_log=self.probe_log, drop_dac=old.drop_dac)
        self.services.append(svc)
        return svc

    def call(self, svc: Service, method: str, path: str, doc: Any = None, timeout_s: float = 30.0) -> Reply:
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = json.dumps(doc).encode() if doc is not None else b""
        return send(svc.port, method, path, body, headers, timeout_s=timeout_s, check_keepalive=False)

    def submit(self, svc: Service, doc: dict[str, Any]) -> Reply:
        return self.call(svc, "POST", "/v1/placements", doc)

    def job(self, svc: Service, job_id: str) -> dict[str, Any]:
        reply = self.call(svc, "GET", f"/v1/jobs/{job_id}", timeout_s=10.0)
        body = reply.json() if reply.status else None
        return body if isinstance(body, dict) and reply.status == 200 else {
            "state": f"http {reply.status or reply.error}", "http": reply.status, "body": body}

    def wait_job(self, svc: Service, job_id: str, until: tuple[str, ...] = FINAL,
                 timeout_s: float = 60.0) -> dict[str, Any]:
        end = time.monotonic() + timeout_s
        while True:
            job = self.job(svc, job_id)
            if job.get("state") in until or time.monotonic() > end:
                return job
            time.sleep(0.2)

    def health(self, svc: Service) -> tuple[int | None, Any]:
        reply = send(svc.port, "GET", "/healthz", timeout_s=10.0, check_keepalive=False)
        return reply.status, reply.json()


def _row(fault: str, check: str, ok: bool | None, observed: Any) -> dict[str, Any]:
    text = observed if isinstance(observed, str) else json.dumps(observed, default=str)[:600]
    return {"kind": "fault", "fault": fault, "check": check, "pass": ok, "observed": text}


def _async(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "options": {**doc.get("options", {}), "async": True}}


def _long(time_limit_s: float) -> dict[str, Any]:
    return {"graph": layered(60), "hardware": FOUR_GPUS,
            "options": {"solver": "cpsat", "time_limit_s": time_limit_s, "threads": 1, "async": True}}


SHORT = {"graph": GRAPH, "hardware": HARDWARE, "options": {"solver": "cpsat", "time_limit_s": 2, "threads": 1}}


def _job_id(reply: Reply) -> str | None:
    body = reply.json()
    return body.get("job_id") if reply.status == 202 and isinstance(body, dict) else None


def _summary(job: dict[str, Any]) -> dict[str, Any]:
    result = job.get("result") or {}
    return {"state": job.get("state"), "status": result.get("status"), "stopped_by": result.get("stopped_by"),
            "error": job.get("error")}


def _healthy_within(lab: Lab, svc: Service, timeout_s: float) -> tuple[bool, Any]:
    end = time.monotonic() + timeout_s
    status, body = None, None
    while time.monotonic() < end:
        status, body = lab.health(svc)
        if status == 200 and isinstance(body, dict) and body.get("status") == "ok" and \
                body.get("workers_alive") == body.get("workers"):
            return True, body
        time.sleep(0.25)
    return False, {"http": status, "body": body}


def _loud(status: int | None, body: Any, words: tuple[str, ...] = ("store", "database", "disk", "db")) -> bool:
    return status == 503 and any(w in json.dumps(body).lower() for w in words)


# --------------------------------------------------------------------------- scenarios


def worker_killed(lab: Lab) -> list[dict[str, Any]]:
    name = "worker killed"
    svc = lab.service("worker-killed", workers=1).start()
    rows = []
    job_id = _job_id(lab.submit(svc, _long(8)))
    job = lab.wait_job(svc, job_id, until=("running",), timeout_s=30) if job_id else {}
    time.sleep(2.0)  # let it find an incumbent: the case where the job used to show `succeeded`
    _, health = lab.health(svc)
    pids = (health or {}).get("worker_pids") or svc.worker_pids()
    rows.append(_row(name, "worker pid found (from /healthz if it lists them, else /proc)", None,
                     {"pids": pids, "from": "healthz" if (health or {}).get("worker_pids") else "proc",
                      "job": job.get("state")}))
    if not pids or not job_id:
        return rows + [_row(name, "scenario set up", False, {"job": job_id, "pids": pids})]
    os.kill(pids[0], signal.SIGKILL)
    done = lab.wait_job(svc, job_id, timeout_s=60)
    s = _summary(done)
    honest = (s["state"] == "failed" and bool((s["error"] or {}).get("detail"))) or (
        s["state"] == "succeeded" and s["stopped_by"] != "worker_died" and s["status"] in ("optimal", "feasible"))
    rows.append(_row(name, "the job whose worker was killed ends `failed` with a reason (or is re-run to a full "
                     "answer), never `succeeded` with a partial one", honest, s))
    ok, seen = _healthy_within(lab, svc, 30)
    rows.append(_row(name, "a new worker replaces it: /healthz ok with every worker alive within 30 s", ok, seen))
    reply = lab.call(svc, "POST", "/v1/placements", {"graph": GRAPH, "hardware": HARDWARE,
                                                       "options": {"solver": "heft"}})
    rows.append(_row(name, "a solve after the kill answers 200", reply.status == 200,
                     {"http": reply.status, "error": reply.error}))
    idle = svc.worker_pids()
    if idle:
        os.kill(idle[0], signal.SIGKILL)
        time.sleep(0.2)
        reply = lab.call(svc, "POST", "/v1/placements", {"graph": GRAPH, "hardware": HARDWARE,
                                                           "options": {"solver": "heft"}})
        rows.append(_row(name, "an idle worker killed: the next solve still answers 200", reply.status == 200,
                         {"http": reply.status, "error": reply.error, "body": (reply.json() or {}).get("code")}))
    svc.stop()
    return rows


def server_killed(lab: Lab) -> list[dict[str, Any]]:
    name = "server killed"
    first = lab.service("server-killed", workers=1).start()
    long_id = _job_id(lab.submit(first, _long(4)))
    queued = [_job_id(lab.submit(first, _async(SHORT))) for _ in range(3)]
    if long_id:
        lab.wait_job(first, long_id, until=("running",), timeout_s=30)
    before = {j: lab.job(first, j).get("state") for j in [long_id, *queued] if j}
    workers = first.worker_pids()
    assert first.proc is not None
    first.stop_probe()
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(timeout=10)
    end = time.monotonic() + 10
    while time.monotonic() < end and any(alive(p) for p in workers):
        time.sleep(0.1)
    left = [p for p in workers if alive(p)]
    first.kill()
    rows = [_row(name, "jobs before kill -9 of the server", None, before),
            _row(name, "no solve worker of the killed server still runs 10 s later", not left,
                 {"workers": workers, "still_running": left})]
    second = lab.again(first).start()
    ids = [j for j in [long_id, *queued] if j]
    found = {j: lab.job(second, j) for j in ids}
    missing = [j for j, job in found.items() if job.get("http") == 404]
    rows.append(_row(name, "every job (1 running, 3 queued) is still known after the restart",
                     len(ids) == 4 and not missing, {"jobs": len(ids), "missing": missing}))
    final = {j: _summary(lab.wait_job(second, j, timeout_s=90)) for j in ids}
    rows.append(_row(name, "every job completes after the restart", len(ids) == 4 and all(
        s["state"] == "succeeded" and s["status"] in ("optimal", "feasible") for s in final.values()),
        {j[:8]: f"{s['state']}/{s['status']}" for j, s in final.items()}))
    second.stop()
    return rows


def _remove_store(path: Path) -> list[str]:
    gone = []
    for suffix in ("", "-wal", "-shm"):
        p = Path(f"{path}{suffix}")
        if p.exists():
            p.unlink()
            gone.append(p.name)
    return gone


def store_deleted(lab: Lab) -> list[dict[str, Any]]:
    name = "store deleted"
    svc = lab.service("store-deleted", workers=1).start()
    db = Path(svc.settings["db_path"])
    early = [_job_id(lab.submit(svc, _async(SHORT))) for _ in range(2)]
    for j in early:
        if j:
            lab.wait_job(svc, j)
    removed = _remove_store(db)
    time.sleep(1.0)
    h_status, h_body = lab.health(svc)
    replies = [lab.submit(svc, _async(SHORT)) for _ in range(2)]
    later = [_job_id(r) for r in replies]
    for j in later:
        if j:
            lab.wait_job(svc, j, timeout_s=30)
    h2_status, h2_body = lab.health(svc)
    refused_loudly = [r.status for r in replies if r.status is not None and r.status >= 500 and _loud(
        503, r.json())]
    loud = _loud(h_status, h_body) or _loud(h2_status, h2_body) or bool(refused_loudly)
    rows = [_row(name, "after deleting the store file", None,
                 {"removed": removed, "healthz": [h_status, h_body], "submissions": [
                     [r.status, r.error, (r.json() or {}).get("code") if isinstance(r.json(), dict) else None]
                     for r in replies], "healthz_after_jobs": h2_status})]
    svc.stop()
    again = lab.again(svc).start()
    accepted = [j for j in later if j]
    lost = [j for j in accepted if lab.job(again, j).get("http") == 404]
    rows.append(_row(name, "fails loudly (/healthz 503 naming the store, or submissions refused naming it)",
                     None, {"loud": loud}))
    rows.append(_row(name, "jobs accepted after the deletion survive a restart", None,
                     {"accepted": len(accepted), "lost": len(lost)}))
    rows.append(_row(name, "loses nothing or fails loudly", loud or (bool(accepted) and not lost),
                     {"loud": loud, "accepted": len(accepted), "lost_after_restart": len(lost)}))
    again.stop()
    return rows


def _set_fsize(pid: int, limit: int | None) -> None:
    _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard if limit is None else limit, hard))


def store_full(lab: Lab) -> list[dict[str, Any]]:
    name = "store full"
    # jobs may use both workers here (PLACER_JOB_WORKERS defaults to all but one, kept for
    # synchronous callers), so "two jobs run at once" shows that no slot was lost
    svc = lab.service("store-full", workers=2, job_workers=2).start()
    assert svc.proc is not None
    warm = _job_id(lab.submit(svc, _async(SHORT)))
    if warm:
        lab.wait_job(svc, warm)
    running = _job_id(lab.submit(svc, _long(5)))
    if running:
        lab.wait_job(svc, running, until=("running",), timeout_s=30)
    _set_fsize(svc.proc.pid, 1)  # every write past byte 1 of any file fails (EFBIG): a full disk for SQLite
    rows = []
    try:
        reply = lab.submit(svc, _async(SHORT))
        body = reply.json() if isinstance(reply.json(), dict) else {}
        during = _job_id(reply)
        rows.append(_row(name, "an async submission while the store is full: a clear refusal (503/507 with a "
                         "code), never a reset or a generic 500", reply.error is None and (
                             reply.status in (202, 503, 507) or (reply.status is not None and 400 <= reply.status < 500))
                         and body.get("code") != "internal",
                         {"http": reply.status, "error": reply.error, "code": body.get("code"),
                          "detail": str(body.get("detail"))[:200]}))
        time.sleep(1.0)
        h_status, h_body = lab.health(svc)
        rows.append(_row(name, "/healthz says 503 naming the store while it cannot be written",
                         _loud(h_status, h_body), {"http": h_status, "body": h_body}))
        job = lab.wait_job(svc, running, timeout_s=20) if running else {}
        rows.append(_row(name, "the job running when the store filled up, 20 s later", None, _summary(job)))
    finally:
        _set_fsize(svc.proc.pid, None)
    ok, seen = _healthy_within(lab, svc, 30)
    rows.append(_row(name, "recovers without a restart once space is back: /healthz ok within 30 s", ok, seen))
    job = lab.wait_job(svc, running, timeout_s=30) if running else {}
    s = _summary(job)
    rows.append(_row(name, "that job ends (succeeded, or failed with a reason), not stuck queued/running",
                     s["state"] == "succeeded" or (s["state"] == "failed" and bool((s["error"] or {}).get("detail"))),
                     s))
    if during:
        d = _summary(lab.wait_job(svc, during, timeout_s=30))
        rows.append(_row(name, "the job accepted while full completes once space is back",
                         d["state"] == "succeeded", d))
    pair = [_job_id(lab.submit(svc, _long(3))) for _ in range(2)]
    both = False
    end = time.monotonic() + 25
    while time.monotonic() < end and all(pair):
        states = [lab.job(svc, j).get("state") for j in pair]  # type: ignore[arg-type]
        if states == ["running", "running"]:
            both = True
            break
        if all(s in FINAL for s in states):
            break
        time.sleep(0.1)
    finals = [_summary(lab.wait_job(svc, j, timeout_s=40)) for j in pair if j]
    rows.append(_row(name, "full capacity afterwards: two jobs run at once on the two workers", both,
                     {"accepted": sum(1 for j in pair if j), "final": [f"{f['state']}/{f['status']}" for f in finals]}))
    rows.append(_row(name, "jobs submitted after recovery succeed", len(finals) == 2 and all(
        f["state"] == "succeeded" for f in finals), [f["state"] for f in finals]))
    svc.stop()
    return rows


def store_unwritable(lab: Lab) -> list[dict[str, Any]]:
    """Started on a directory it cannot write (root without CAP_DAC_OVERRIDE), then the directory
    made writable."""
    name = "store unwritable"
    svc = lab.service("store-unwritable", drop_dac=True, workers=1)
    store_dir = svc.workdir / "store"
    store_dir.mkdir(exist_ok=True)
    os.chmod(store_dir, 0o555)
    svc.settings["db_path"] = str(store_dir / "jobs.sqlite3")
    svc.launch()
    up = svc.wait_ready(45)
    rows = []
    if up:
        svc.start_probe()
        status, body = lab.health(svc)
        reply = lab.submit(svc, _async(SHORT))
        rows.append(_row(name, "started on an unwritable store: /healthz 503 naming it", _loud(status, body),
                         {"healthz": [status, body], "submission": [reply.status, reply.error]}))
    else:
        assert svc.proc is not None
        code = svc.proc.poll()
        tail = svc.log_tail(4000)
        named = any(w in tail for w in (str(store_dir), "jobs.sqlite3")) or any(
            w in tail.lower() for w in ("store", "database", "read-only", "readonly", "permission"))
        said = ([line for line in tail.splitlines() if str(store_dir) in line]
                or [line for line in tail.splitlines() if "rror" in line] or [tail])[-1:]
        rows.append(_row(name, "started on an unwritable store: exits with a message naming the store",
                         code not in (None, 0) and named, f"exit code {code}; log: {said[0][-300:]}"))
    os.chmod(store_dir, 0o755)
    if up:
        ok, seen = _healthy_within(lab, svc, 30)
        rows.append(_row(name, "recovers without a restart once the directory is writable", ok, seen))
        target = svc
    else:
        svc.kill()
        target = lab.again(svc)
        target.launch()
        ok = target.wait_ready(45)
        if ok:
            target.start_probe()
        rows.append(_row(name, "starts once the directory is writable", ok, target.log_tail(300) if not ok else "up"))
    if ok:
        j = _job_id(lab.submit(target, _async(SHORT)))
        s = _summary(lab.wait_job(target, j, timeout_s=30)) if j else {"state": "refused"}
        rows.append(_row(name, "a job then completes", s["state"] == "succeeded", s))
    return rows + _unwritable_while_running(lab, target)


def _unwritable_while_running(lab: Lab, svc: Service) -> list[dict[str, Any]]:
    """The directory and files made read-only under a running server, a job submitted, then a
    restart on the read-only store, then a restart once writable: is the job there?"""
    name = "store unwritable"
    db = Path(svc.settings["db_path"])
    files = [p for p in db.parent.iterdir() if p.name.startswith(db.name)]
    for p in files:
        os.chmod(p, 0o444)
    os.chmod(db.parent, 0o555)
    rows = []
    try:
        reply = lab.submit(svc, _async(SHORT))
        j = _job_id(reply)
        s = _summary(lab.wait_job(svc, j, timeout_s=30)) if j else {}
        h_status, _ = lab.health(svc)
        rows.append(_row(name, "made read-only while running: a submission, its job, /healthz", None,
                         {"http": reply.status, "job": s, "healthz": h_status}))
        svc.stop()
        ro = lab.again(svc)
        ro.launch()
        up = ro.wait_ready(45)
        code = ro.proc.poll() if ro.proc else None
        rows.append(_row(name, "restarted on the read-only store", None,
                         {"serves": up, "exit_code": code,
                          "healthz": lab.health(ro) if up else None}))
        ro.stop()
    finally:
        os.chmod(db.parent, 0o755)
        for p in files:
            os.chmod(p, 0o644)
    back = lab.again(svc).start()
    found = lab.job(back, j) if j else {"state": "not accepted"}
    loud = reply.status is not None and reply.status >= 500 and reply.error is None
    rows.append(_row(name, "read-only while running: loses nothing or fails loudly",
                     loud or found.get("state") == "succeeded", {"after_restart": found.get("state")}))
    back.stop()
    return rows


def security(lab: Lab) -> list[dict[str, Any]]:
    name = "security"
    rows = []
    if not lab.api_key:
        return [_row(name, "API key checks", None, "skipped: run without an API key")]
    svc = lab.service("security", workers=1).start()
    began = time.monotonic()
    statuses: dict[str, int] = {}
    for i in range(300):
        r = send(svc.port, "GET", "/v1/hardware-graphs", headers={"authorization": f"Bearer guess{i}"},
                 timeout_s=5.0, check_keepalive=False)
        key = str(r.status or r.error)
        statuses[key] = statuses.get(key, 0) + 1
    took = time.monotonic() - began
    limited = any(k == "429" for k in statuses)
    rows.append(_row(name, "300 wrong API keys in a row are rate-limited (429)", limited,
                     {"answers": statuses, "seconds": round(took, 2)}))
    docs = send(svc.port, "GET", "/docs", timeout_s=10.0, check_keepalive=False)
    rows.append(_row(name, "/docs opens in a browser (no Authorization header) when a key is set",
                     docs.status == 200, {"http": docs.status}))
    auth = {"authorization": f"Bearer {lab.api_key}"}
    docs = send(svc.port, "GET", "/docs", headers=auth, timeout_s=10.0, check_keepalive=False)
    html = docs.body.decode("utf-8", "replace")
    external = sorted({w for w in ("cdn.jsdelivr.net", "unpkg.com", "cdnjs", "fastapi.tiangolo.com") if w in html})
    rows.append(_row(name, "/docs loads no script or style from a public CDN", docs.status == 200 and not external,
                     {"http": docs.status, "external": external}))
    svc.stop()
    return rows


FAULTS: dict[str, Callable[[Lab], list[dict[str, Any]]]] = {
    "worker_killed": worker_killed,
    "server_killed": server_killed,
    "store_deleted": store_deleted,
    "store_full": store_full,
    "store_unwritable": store_unwritable,
    "security": security,
}
