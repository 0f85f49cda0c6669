"""Process groups: how a solve that runs in its own group (CBC included) is checked and killed."""
from __future__ import annotations

import contextlib
import os
import signal

__all__ = ["group_alive", "kill_group"]


def group_alive(pgid: int) -> bool:
    """Whether any process (zombies included) is left in process group `pgid`."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def kill_group(pgid: int) -> None:
    """SIGKILL every process of group `pgid`; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
