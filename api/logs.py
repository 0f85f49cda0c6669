"""Structured logs: one JSON object per line, carrying the request id of the request being served."""
from __future__ import annotations

import contextvars
import json
import logging
import time
from typing import Any

__all__ = ["JsonFormatter", "configure_logging", "log_config", "request_id_var"]

# The id of the request the current task serves; "-" outside requests (startup, worker threads).
request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("placer_request_id", default="-")

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName", "color_message"}


class JsonFormatter(logging.Formatter):
    """`{"ts", "level", "logger", "msg", "request_id", ...extra}`; extra keys come from `extra=`."""

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or request_id_var.get(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and key != "request_id":
                doc[key] = value
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return json.dumps(doc, default=str)


def log_config(level: str = "info") -> dict[str, Any]:
    """A logging dictConfig sending placer's and uvicorn's logs as JSON lines to stderr."""
    level = level.upper()
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {"stderr": handler},
        "loggers": {
            "placer": {"handlers": ["stderr"], "level": level, "propagate": False},
            "api": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
    }


def configure_logging(level: str = "info") -> None:
    """Install `log_config(level)` (used by `placer serve`; tests leave logging alone)."""
    import logging.config

    logging.config.dictConfig(log_config(level))
