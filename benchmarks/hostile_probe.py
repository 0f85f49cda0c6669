"""GET /healthz every 50 ms and append `{"t", "ms", "status", "port"}` per request to a file.

Its own process, so the campaign's client work (building 10 MB bodies) does not delay it.
Exits when killed or when its parent is gone.

    python -m benchmarks.hostile_probe PORT OUT.jsonl
"""
from __future__ import annotations

import http.client
import json
import os
import sys
import time

PERIOD_S = 0.05
TIMEOUT_S = 10.0


def main(argv: list[str]) -> int:
    port, out = int(argv[0]), argv[1]
    parent = os.getppid()
    conn: http.client.HTTPConnection | None = None
    with open(out, "a") as log:
        while os.getppid() == parent:
            began_wall, began = time.time(), time.monotonic()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S)
                conn.request("GET", "/healthz")
                reply = conn.getresponse()
                reply.read()
                status: int | str = reply.status
            except (OSError, http.client.HTTPException) as exc:
                status = "timeout" if isinstance(exc, TimeoutError) else type(exc).__name__
                if conn is not None:
                    conn.close()
                conn = None
            elapsed = time.monotonic() - began
            log.write(json.dumps({"t": began_wall, "ms": round(elapsed * 1e3, 3), "status": status,
                                  "port": port}) + "\n")
            log.flush()
            time.sleep(max(0.0, PERIOD_S - elapsed) if isinstance(status, int) else 0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
