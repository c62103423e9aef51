"""The quota headers every metered response carries, read into one object."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Optional

import httpx


@dataclass(frozen=True)
class RateLimit:
    limit: int
    """Requests allowed per window: the key's own limit, or its owner's allowance when that is tighter."""
    remaining: int
    """Requests left in the current window."""
    reset_at: _dt.datetime
    """When the window resets (UTC)."""
    policy: Optional[str]
    """``RateLimit-Policy`` as sent, e.g. ``"hourly";q=100;w=3600``."""


def _integer(value: Optional[str]) -> Optional[int]:
    return int(value) if value is not None and value.strip().isdigit() else None


def rate_limit_of(headers: httpx.Headers) -> Optional[RateLimit]:
    """None when the response is not metered (``GET /models``)."""
    limit = _integer(headers.get("x-ratelimit-limit"))
    remaining = _integer(headers.get("x-ratelimit-remaining"))
    reset = _integer(headers.get("x-ratelimit-reset"))
    if limit is None or remaining is None or reset is None:
        return None
    return RateLimit(limit, remaining, _dt.datetime.fromtimestamp(reset, _dt.timezone.utc), headers.get("ratelimit-policy"))
