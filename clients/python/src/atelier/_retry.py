"""When to retry and how long to wait: exponential backoff with jitter, or what ``Retry-After`` asks."""

from __future__ import annotations

import email.utils
import random
import time
from typing import Any, Optional

import httpx

INITIAL_BACKOFF = 0.5
MAX_BACKOFF = 8.0
DEFAULT_MAX_RETRY_AFTER = 60.0
"""A ``Retry-After`` longer than this many seconds is raised at once rather than waited for."""

_NOT_RETRYABLE_CODES = {"MODEL_NOT_INSTALLED"}


def is_retryable_status(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def is_retryable_code(code: Any) -> bool:
    return not (isinstance(code, str) and code in _NOT_RETRYABLE_CODES)


def retry_after_seconds(headers: httpx.Headers) -> Optional[float]:
    """``Retry-After`` (seconds or an HTTP date) in seconds; None when absent or unreadable."""
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, float(when.timestamp()) - time.time())


def backoff(attempt: int) -> float:
    """Seconds before retry number ``attempt`` (0-based): 0.5, 1, 2 ... up to 8, less up to 25% jitter."""
    return min(INITIAL_BACKOFF * float(2**attempt), MAX_BACKOFF) * (1 - 0.25 * random.random())
