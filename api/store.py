"""The job store: jobs, their progress and results in one SQLite file.

One service process owns the file at a time (an exclusive lock file beside it), so a second
service pointed at the same path fails at start instead of stealing the first one's jobs.

Every write goes through `_write`, which first checks that the path still names the file the
store opened: SQLite keeps writing into a deleted file without a word, and everything written
after the deletion would be gone at the next start. A deleted file is re-created at once with
every row the open (unlinked) file still holds; a file replaced by another one is refused
(`StoreUnavailableError`) rather than overwritten. Failed writes raise `StoreUnavailableError`;
the job manager keeps what it could not write in memory and retries.
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api.errors import StoreLockedError, StoreUnavailableError

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
    interruptions INTEGER NOT NULL DEFAULT 0,
    worker TEXT
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, created_at);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""

log = logging.getLogger("api.store")

_COLUMNS = ("id", "kind", "state", "request", "summary", "progress", "result", "error", "created_at",
            "started_at", "finished_at", "interruptions", "worker")

_JSON_COLUMNS = ("request", "summary", "progress", "result", "error", "worker")

# Columns added after the first release: ALTER TABLE brings a store file written before them up to date.
_ADDED_COLUMNS = {"worker": "TEXT"}


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
    worker: dict[str, Any] | None = None  # where it ran: executor, node_id, host, pid


def _row_to_record(row: sqlite3.Row | dict[str, Any]) -> JobRecord:
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
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the file we opened
        self._orphans: list[tuple[Any, ...]] = []  # rows of a deleted file not yet in the new one

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_fd = self._take_lock_file()
        self._connect()

    def _take_lock_file(self) -> int:
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreLockedError(f"job store {self.path} is in use by another placer service") from None
        return fd

    def _connect(self) -> None:
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(_SCHEMA)
        have = {row[1] for row in conn.execute("PRAGMA table_info(jobs)")}
        for name, kind in _ADDED_COLUMNS.items():
            if name not in have:
                conn.execute(f"ALTER TABLE jobs ADD COLUMN {name} {kind}")
        st = os.stat(self.path)
        self._conn, self._identity = conn, (st.st_dev, st.st_ino)

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
            raise StoreUnavailableError(f"job store {self.path} is not open")
        return self._conn

    # ------------------------------------------------------------------ the file under our feet

    def file_problem(self) -> str | None:
        """Why the path no longer names the open store file, or None. Cheap (one stat), lock-free:
        /healthz calls it."""
        if self._orphans:  # until they are back in the new file, a kill would lose them
            return f"job store file {self.path} is being re-created ({len(self._orphans)} jobs to restore)"
        return self._moved()

    def _moved(self) -> str | None:
        """Why the path no longer names the file we opened (deleted, replaced), or None."""
        if self._identity is None:
            return None
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return f"job store file {self.path} was deleted while the service ran"
        except OSError as exc:
            return f"job store file {self.path} cannot be examined: {exc}"
        if (st.st_dev, st.st_ino) != self._identity:
            return (f"job store file {self.path} was replaced by another file while the service ran; "
                    f"remove that file (the store is then re-created) or restart the service")
        return None

    def _follow_file(self) -> None:
        """Called with the lock held before each write: re-create a deleted store file, refuse
        to write when another file took its place."""
        problem = self._moved()
        if problem is not None:
            if self.path.exists():
                raise StoreUnavailableError(problem)
            self._recreate()
        if self._orphans:
            self._restore_orphans()

    def _recreate(self) -> None:
        """Take every row out of the open (unlinked) file, then start a new file at the path."""
        if self._conn is not None:
            old = self._conn
            self._orphans = [tuple(r) for r in old.execute(f"SELECT {', '.join(_COLUMNS)} FROM jobs")]
            old.close()
            self._conn = None
            log.error("the job store file was deleted while the service ran; re-creating it with the "
                      "jobs the open file still held", extra={"db_path": str(self.path), "jobs": len(self._orphans)})
        for suffix in ("-wal", "-shm"):  # the deleted file's; a new file must not replay them
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)  # rm -r of the whole directory
        self._relock()
        try:
            self._connect()
        except BaseException:
            for suffix in ("", "-wal", "-shm"):  # a half-made file would look like a foreign one
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            raise

    def _restore_orphans(self) -> None:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(f"INSERT OR REPLACE INTO jobs ({', '.join(_COLUMNS)}) "
                           f"VALUES ({', '.join('?' * len(_COLUMNS))})", self._orphans)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        log.warning("job store re-created", extra={"db_path": str(self.path), "jobs": len(self._orphans)})
        self._orphans = []

    def _relock(self) -> None:
        """Take the lock file again when it went with the store file (rm jobs.sqlite3*)."""
        lock_path = f"{self.path}.lock"
        try:
            st = os.stat(lock_path)
            held = self._lock_fd is not None and (st.st_dev, st.st_ino) == _fd_identity(self._lock_fd)
        except FileNotFoundError:
            held = False
        if held:
            return
        try:
            fd = self._take_lock_file()
        except StoreLockedError:
            raise StoreUnavailableError(f"job store {self.path}: its lock file was taken by another "
                                        f"process; restart the service") from None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
        self._lock_fd = fd

    # ------------------------------------------------------------------ writes

    def _execute_write(self, sql: str, params: Sequence[Any]) -> sqlite3.Cursor:
        """The one place a write reaches SQLite (tests inject faults by overriding it)."""
        return self._db().execute(sql, params)

    def _write(self, sql: str, params: Sequence[Any]) -> sqlite3.Cursor:
        with self._lock:
            try:
                self._follow_file()
                return self._execute_write(sql, params)
            except StoreUnavailableError:
                raise
            except (sqlite3.DataError, sqlite3.IntegrityError) as exc:  # this row, not the store
                raise StoreUnavailableError(f"job store {self.path} refused a write: {exc}",
                                            transient=False) from exc
            except (sqlite3.Error, OSError) as exc:
                raise StoreUnavailableError(f"job store {self.path} cannot be written: {exc}") from exc

    def insert(self, rec: JobRecord) -> None:
        self._write(
            "INSERT INTO jobs (id, kind, state, request, summary, progress, result, error, created_at, "
            "started_at, finished_at, interruptions, worker) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            _params(rec),
        )

    def upsert(self, rec: JobRecord) -> None:
        """Write the whole record, whether the row exists or not (re-writing held jobs)."""
        self._write(
            "INSERT OR REPLACE INTO jobs (id, kind, state, request, summary, progress, result, error, "
            "created_at, started_at, finished_at, interruptions, worker) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            _params(rec),
        )

    def update(self, job_id: str, **fields: Any) -> None:
        """Set columns of one job; JSON columns take dicts."""
        if not fields:
            return
        cols = ", ".join(f"{name} = ?" for name in fields)
        values = [_dumps(v) if name in _JSON_COLUMNS else v for name, v in fields.items()]
        self._write(f"UPDATE jobs SET {cols} WHERE id = ?", (*values, job_id))

    def probe(self) -> None:
        """A tiny real write: does the store take writes again?"""
        self._write("INSERT OR REPLACE INTO meta (key, value) VALUES ('probe', ?)", (str(time.time()),))

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._db().execute(sql, params).fetchall()
            except (sqlite3.Error, OSError) as exc:
                raise StoreUnavailableError(f"job store {self.path} cannot be read: {exc}") from exc

    def get(self, job_id: str) -> JobRecord | None:
        with self._lock:
            orphan = next((row for row in self._orphans if row[0] == job_id), None)
        if orphan is not None:
            return _row_to_record(dict(zip(_COLUMNS, orphan, strict=True)))
        rows = self._read("SELECT * FROM jobs WHERE id = ?", (job_id,))
        return _row_to_record(rows[0]) if rows else None

    def delete(self, job_id: str) -> None:
        self._write("DELETE FROM jobs WHERE id = ?", (job_id,))

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
                    "UPDATE jobs SET state = 'queued', started_at = NULL, progress = NULL, worker = NULL, "
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
        cur = self._write(
            "DELETE FROM jobs WHERE state IN ('succeeded', 'failed', 'cancelled') AND finished_at < ?",
            (finished_before,),
        )
        return cur.rowcount

    def counts(self) -> dict[str, int]:
        return {state: n for state, n in self._read("SELECT state, COUNT(*) FROM jobs GROUP BY state")}


def _params(rec: JobRecord) -> tuple[Any, ...]:
    return (rec.id, rec.kind, rec.state, json.dumps(rec.request), json.dumps(rec.summary), _dumps(rec.progress),
            _dumps(rec.result), _dumps(rec.error), rec.created_at, rec.started_at, rec.finished_at,
            rec.interruptions, _dumps(rec.worker))


def _fd_identity(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value)
