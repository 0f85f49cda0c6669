"""The job store: jobs, their progress and results in one SQLite file.

One service process owns the file at a time (an exclusive lock file beside it), so a second
service pointed at the same path fails at start instead of stealing the first one's jobs.
"""
from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ACTIVE_STATES", "FINAL_STATES", "JobRecord", "JobStore", "StoreLockedError"]

ACTIVE_STATES = ("queued", "running")
FINAL_STATES = ("succeeded", "failed", "cancelled")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    request TEXT NOT NULL,
    summary TEXT NOT NULL,
    progress TEXT,
    result TEXT,
    error TEXT,
    created_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    interruptions INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, created_at);
"""

_JSON_COLUMNS = ("request", "summary", "progress", "result", "error")


class StoreLockedError(RuntimeError):
    """Another service process holds the job store."""


@dataclass
class JobRecord:
    """One job as stored. `request` is what the worker gets; `summary` what GET shows of it."""

    id: str
    kind: str
    state: str
    request: dict[str, Any]
    summary: dict[str, Any]
    created_at: float
    progress: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    started_at: float | None = None
    finished_at: float | None = None
    interruptions: int = 0


def _row_to_record(row: sqlite3.Row) -> JobRecord:
    doc = dict(row)
    for col in _JSON_COLUMNS:
        doc[col] = json.loads(doc[col]) if doc[col] is not None else None
    return JobRecord(**doc)


class JobStore:
    """Thread-safe access to the jobs table (one connection, one lock: writes are small)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._lock_fd: int | None = None

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreLockedError(f"job store {self.path} is in use by another placer service") from None
        self._lock_fd = fd
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(_SCHEMA)
        self._conn = conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("job store is not open")
        return self._conn

    def insert(self, rec: JobRecord) -> None:
        with self._lock:
            self._db().execute(
                "INSERT INTO jobs (id, kind, state, request, summary, progress, result, error, created_at, "
                "started_at, finished_at, interruptions) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (rec.id, rec.kind, rec.state, json.dumps(rec.request), json.dumps(rec.summary),
                 _dumps(rec.progress), _dumps(rec.result), _dumps(rec.error), rec.created_at,
                 rec.started_at, rec.finished_at, rec.interruptions),
            )

    def update(self, job_id: str, **fields: Any) -> None:
        """Set columns of one job; JSON columns take dicts."""
        if not fields:
            return
        cols = ", ".join(f"{name} = ?" for name in fields)
        values = [_dumps(v) if name in _JSON_COLUMNS else v for name, v in fields.items()]
        with self._lock:
            self._db().execute(f"UPDATE jobs SET {cols} WHERE id = ?", (*values, job_id))

    def get(self, job_id: str) -> JobRecord | None:
        with self._lock:
            row = self._db().execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return _row_to_record(row) if row else None

    def delete(self, job_id: str) -> None:
        with self._lock:
            self._db().execute("DELETE FROM jobs WHERE id = ?", (job_id,))

    def recover(self, max_requeues: int) -> list[JobRecord]:
        """After a restart: jobs left running are interrupted; re-queue them (or fail them after
        `max_requeues` interruptions, so a job that kills the service cannot loop forever).
        Returns every queued job, oldest first."""
        now = time.time()
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "UPDATE jobs SET state = 'failed', finished_at = ?, error = ? "
                    "WHERE state IN ('running', 'interrupted') AND interruptions >= ?",
                    (now, json.dumps({"code": "interrupted", "detail": f"the service stopped during this "
                                      f"job {max_requeues + 1} time(s), the most PLACER_MAX_REQUEUES "
                                      f"({max_requeues}) allows; not retried again"}), max_requeues),
                )
                db.execute(
                    "UPDATE jobs SET state = 'queued', started_at = NULL, progress = NULL, "
                    "interruptions = interruptions + 1 WHERE state IN ('running', 'interrupted')"
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            rows = db.execute("SELECT * FROM jobs WHERE state = 'queued' ORDER BY created_at").fetchall()
        return [_row_to_record(r) for r in rows]

    def purge(self, finished_before: float) -> int:
        """Forget finished jobs older than the retention time; returns how many."""
        with self._lock:
            cur = self._db().execute(
                "DELETE FROM jobs WHERE state IN ('succeeded', 'failed', 'cancelled') AND finished_at < ?",
                (finished_before,),
            )
            return cur.rowcount

    def counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db().execute("SELECT state, COUNT(*) FROM jobs GROUP BY state").fetchall()
        return {state: n for state, n in rows}


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value)
