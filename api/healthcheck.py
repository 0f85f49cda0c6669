"""`python -m api.healthcheck`: exit 0 when the local service answers /healthz with 200.

The Docker HEALTHCHECK; stdlib only, so the image needs no curl.
"""
from __future__ import annotations

import os
import sys
import urllib.request


def main() -> int:
    port = os.environ.get("PLACER_PORT", "8000")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as reply:
            return 0 if reply.status == 200 else 1
    except OSError as exc:
        print(f"healthcheck: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
