"""Every failure the client reports is an :class:`AtelierError`; the HTTP status picks the subclass."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional

import httpx

from ._rate_limit import RateLimit, rate_limit_of


@dataclass(frozen=True)
class FieldIssue:
    """One problem with one input field; ``path`` is dotted (``scale``), empty for the whole body."""

    path: str
    message: str


class AtelierError(Exception):
    """Base of every client error.

    ``status`` is None when no response arrived (connection failure, timeout).
    """

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: str = "UNKNOWN",
        request_id: Optional[str] = None,
        issues: Optional[List[FieldIssue]] = None,
        headers: Optional[httpx.Headers] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.request_id = request_id
        self.issues: List[FieldIssue] = issues or []
        self.headers = headers
        self.rate_limit: Optional[RateLimit] = rate_limit_of(headers) if headers is not None else None

    def __str__(self) -> str:
        where = ", ".join(
            part
            for part in (self.code, f"HTTP {self.status}" if self.status else "", f"request {self.request_id}" if self.request_id else "")
            if part
        )
        return f"{self.message} [{where}]"


class BadRequestError(AtelierError):
    """400, and the other statuses that mean the request must change (405, 413, 415, 422)."""


class AuthenticationError(AtelierError):
    """401: no key, or an unknown or revoked one."""


class PermissionDeniedError(AtelierError):
    """403: the key may not do this."""


class NotFoundError(AtelierError):
    """404 (or 410): no such endpoint or resource, or a job result deleted after its retention period."""


class ConflictError(AtelierError):
    """409: a duplicate still in flight, or a job that has already finished."""


class RateLimitError(AtelierError):
    """429: the key's quota is spent. ``reset_at`` says when it refills."""

    def __init__(self, message: str, *, retry_after: Optional[float] = None, **fields: Any) -> None:
        super().__init__(message, **fields)
        self.retry_after = retry_after
        if self.rate_limit is not None:
            self.reset_at: Optional[_dt.datetime] = self.rate_limit.reset_at
        elif retry_after is not None:
            self.reset_at = _dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(seconds=retry_after)
        else:
            self.reset_at = None


class InternalServerError(AtelierError):
    """500, 502, 504 and other server failures."""


class ServiceUnavailableError(AtelierError):
    """503: a model is not installed, or the server is busy or a store unreachable."""


class APIConnectionError(AtelierError):
    """No response: the connection failed or was dropped."""


class APITimeoutError(APIConnectionError):
    """No response within the timeout."""


def _issues_of(value: Any) -> List[FieldIssue]:
    if not isinstance(value, list):
        return []
    return [
        FieldIssue(path=str(item.get("path", "")), message=item["message"])
        for item in value
        if isinstance(item, dict) and isinstance(item.get("message"), str)
    ]


def error_from_response(response: httpx.Response, retry_after: Optional[float]) -> AtelierError:
    """The typed error for a non-2xx response, from its status, headers and (possibly non-JSON) body."""
    body: Mapping[str, Any] = {}
    text = ""
    try:
        parsed = response.json()
        if isinstance(parsed, dict):
            body = parsed
    except ValueError:
        text = response.text.strip()[:500]
    return error_from_body(response.status_code, body, headers=response.headers, retry_after=retry_after, text=text)


def error_from_body(
    status: int,
    body: Mapping[str, Any],
    *,
    headers: Optional[httpx.Headers] = None,
    retry_after: Optional[float] = None,
    text: str = "",
) -> AtelierError:
    """The typed error for an error body and the HTTP status it came with (a response's, or a failed job's ``status``)."""
    message = body.get("message") if isinstance(body.get("message"), str) else (text or f"HTTP {status} with no error body")
    request_id = body.get("requestId") if isinstance(body.get("requestId"), str) else (headers.get("x-request-id") if headers is not None else None)
    fields: dict[str, Any] = {
        "status": status,
        "code": body.get("code") if isinstance(body.get("code"), str) else f"HTTP_{status}",
        "request_id": request_id,
        "issues": _issues_of(body.get("issues")),
        "headers": headers,
    }
    if status == 429:
        return RateLimitError(str(message), retry_after=retry_after, **fields)
    kinds = {401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError, 410: NotFoundError, 409: ConflictError, 503: ServiceUnavailableError}
    kind = kinds.get(status, InternalServerError if status >= 500 else BadRequestError)
    return kind(str(message), **fields)
