"""A token bucket per client address for failed API-key attempts (guessing the key).

Each address starts with `burst` attempts; every wrong or missing key takes one, and one comes
back every `refill_s` seconds. An address with none left gets 429 with Retry-After for every
request that needs the key, before the key is even compared: otherwise a guess would still
learn whether it was right. The state lives in the middleware of one app instance.
"""
from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["FailureLimiter"]


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class FailureLimiter:
    """Counts failures per address; `retry_after_s(addr)` > 0 means: refuse this address now."""

    def __init__(self, burst: int, refill_s: float, max_addresses: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.burst = burst
        self.refill_s = refill_s
        self.max_addresses = max_addresses
        self._clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def _current(self, addr: str) -> _Bucket | None:
        bucket = self._buckets.get(addr)
        if bucket is None:
            return None
        now = self._clock()
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.stamp) / self.refill_s)
        bucket.stamp = now
        if bucket.tokens >= self.burst:  # full again: forget the address
            del self._buckets[addr]
            return None
        return bucket

    def retry_after_s(self, addr: str) -> int:
        """Whole seconds until `addr` may try again; 0 when it may now."""
        bucket = self._current(addr)
        if bucket is None or bucket.tokens >= 1:
            return 0
        return max(1, math.ceil((1 - bucket.tokens) * self.refill_s))

    def failed(self, addr: str) -> None:
        """Take one attempt from `addr`."""
        bucket = self._current(addr)
        if bucket is None:
            bucket = self._buckets[addr] = _Bucket(float(self.burst), self._clock())
            while len(self._buckets) > self.max_addresses:  # bounded memory: the oldest are dropped
                self._buckets.popitem(last=False)
        self._buckets.move_to_end(addr)
        bucket.tokens = max(0.0, bucket.tokens - 1)
