"""A job store with a fault switch, for tests and the fault campaign (`PLACER_STORE_CLASS=
tests.api.faulty_store:FaultyStore`). While the file `<db_path>.fault` exists, every write fails
as SQLite fails on a full disk (the file's text, if any, replaces the message); when the text
is `refuse_results`, only writes carrying a result document fail, as SQLite refuses a string
longer than its limit (SQLITE_TOOBIG). Remove the file and the store works again."""
from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from api.store import JobStore

__all__ = ["FaultyStore"]

_RESULT_PREFIX = '{"format": "placer.result/v1"'


class FaultyStore(JobStore):
    def _execute_write(self, sql: str, params: Sequence[Any]) -> sqlite3.Cursor:
        fault = Path(f"{self.path}.fault")
        if fault.exists():
            text = fault.read_text().strip()
            if text != "refuse_results":
                raise sqlite3.OperationalError(text or "database or disk is full")
            if any(isinstance(p, str) and p.startswith(_RESULT_PREFIX) for p in params):
                raise sqlite3.DataError("string or blob too big")
        return super()._execute_write(sql, params)
