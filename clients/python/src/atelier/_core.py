"""What every call shares: settings, how a call is described, request building and the retry plan
(:func:`attempts`, see ``_plans.py``), which each client drives with its own I/O: sending a request,
reading an error body, sleeping."""

from __future__ import annotations

import itertools
import os
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generator, Generic, Mapping, Optional, Tuple, Type, TypeVar, Union

import httpx

from ._errors import APIConnectionError, APITimeoutError, AtelierError, error_from_response
from ._images import FilePart, form_fields
from ._models import ResponseMeta, Result, camel_case
from ._plans import Wait
from ._retry import DEFAULT_MAX_RETRY_AFTER, backoff, is_retryable_code, is_retryable_status, retry_after_seconds
from ._version import __version__

DEFAULT_BASE_URL = "http://localhost:8080"
DEFAULT_TIMEOUT = 600.0
"""Seconds per attempt: text-to-image on a CPU is slow."""
DEFAULT_MAX_RETRIES = 2

R = TypeVar("R")
T = TypeVar("T", bound=Result)


@dataclass(frozen=True)
class Settings:
    api_key: Optional[str]
    base_url: str
    timeout: float
    max_retries: int
    max_retry_after: float
    default_headers: Mapping[str, str]

    @classmethod
    def resolve(
        cls,
        api_key: Optional[str],
        base_url: Optional[str],
        timeout: Optional[float],
        max_retries: Optional[int],
        max_retry_after: Optional[float],
        default_headers: Optional[Mapping[str, str]],
    ) -> "Settings":
        url = base_url or os.environ.get("ATELIER_BASE_URL") or DEFAULT_BASE_URL
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an absolute http(s) URL, e.g. {DEFAULT_BASE_URL}; received {url!r}.")
        return cls(
            api_key=api_key if api_key is not None else (os.environ.get("ATELIER_API_KEY") or None),
            base_url=url.rstrip("/"),
            timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
            max_retries=DEFAULT_MAX_RETRIES if max_retries is None else max_retries,
            max_retry_after=DEFAULT_MAX_RETRY_AFTER if max_retry_after is None else max_retry_after,
            default_headers=dict(default_headers or {}),
        )

    def headers(self) -> Dict[str, str]:
        headers = {"accept": "application/json", "x-atelier-client": f"python/{__version__}", **self.default_headers}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers


@dataclass
class Call(Generic[R]):
    """One operation: where it goes, what it sends, and how its successful response is read."""

    method: str
    path: str
    parse: Callable[[httpx.Response], R]
    body: Optional[Dict[str, Any]] = None
    files: Optional[Dict[str, FilePart]] = None
    """With files, the body goes as a multipart form: its fields as text, beside these files."""
    query: Optional[Dict[str, Any]] = None
    headers: Dict[str, str] = field(default_factory=dict)
    timeout: Optional[float] = None
    max_retries: Optional[int] = None
    idempotency_key: Optional[str] = None
    no_retry_statuses: Tuple[int, ...] = ()
    accept_statuses: Tuple[int, ...] = ()
    """Statuses that are an answer here, not an error (503 "not ready" from ``/readyz``)."""


def parser_of(kind: Type[T]) -> Callable[[httpx.Response], T]:
    """Reads a successful JSON response as ``kind``."""
    return lambda response: kind.from_json(response.json(), ResponseMeta.of(response))


def unparsed(response: httpx.Response) -> httpx.Response:
    """For a call whose caller reads the response itself (a job's 202, an event stream)."""
    return response


def build_request(http: Union[httpx.Client, httpx.AsyncClient], settings: Settings, call: "Call[Any]") -> httpx.Request:
    """The request every attempt re-sends: a POST keeps one ``Idempotency-Key`` across its retries."""
    headers = settings.headers()
    if call.method == "POST":
        headers["idempotency-key"] = call.idempotency_key or str(uuid.uuid4())
    headers.update(call.headers)
    query = {key: value for key, value in (call.query or {}).items() if value is not None}
    content: Dict[str, Any] = {"json": call.body} if call.files is None else {"data": form_fields(call.body or {}), "files": call.files}
    return http.build_request(
        call.method,
        settings.base_url + call.path,
        **content,
        params=query or None,
        headers=headers,
        timeout=settings.timeout if call.timeout is None else call.timeout,
    )


def retry_delay(response: httpx.Response, settings: Settings, call: "Call[Any]", attempt: int, max_retries: int) -> Optional[float]:
    """Seconds to wait before another try of this failed response, or None to raise its error now."""
    if attempt >= max_retries or not is_retryable_status(response.status_code) or response.status_code in call.no_retry_statuses:
        return None
    try:
        code = response.json().get("code")
    except (ValueError, AttributeError):
        code = None
    if not is_retryable_code(code):
        return None
    retry_after = retry_after_seconds(response.headers)
    if retry_after is None:
        return -1.0  # the caller backs off exponentially
    return retry_after if retry_after <= settings.max_retry_after else None


def answers(response: httpx.Response, call: "Call[Any]") -> bool:
    """Whether the response is the call's answer rather than an error to retry or raise."""
    return response.is_success or response.status_code in call.accept_statuses


@dataclass(frozen=True)
class ReadBody:
    """A step of the retry plan: read this error response's body (its code decides a retry) and close it."""

    response: httpx.Response


AttemptStep = Union[httpx.Request, ReadBody, Wait]
"""A request to send, an error body to read, or a pause."""

Outcome = Union[httpx.Response, httpx.TransportError, None]
"""What a client sends back into the retry plan: the response to a request (streamed when the call
streams), the transport error sending it raised, or None after any other step."""


def attempts(settings: Settings, call: "Call[Any]", request: httpx.Request) -> Generator[AttemptStep, Outcome, httpx.Response]:
    """The retry policy without I/O: yields the request to send, an error body to read or a
    :class:`Wait`, and returns the response that answers the call, or raises the call's error."""
    max_retries = settings.max_retries if call.max_retries is None else call.max_retries
    for attempt in itertools.count():
        if attempt == 1 and call.method == "POST" and "prefer" not in request.headers:
            # A retried POST asks for the job: if the first try still runs on a server with jobs,
            # its Idempotency-Key then answers 202 and that job (followed by _run), not a 409.
            request.headers["prefer"] = "respond-async"
        outcome = yield request
        if isinstance(outcome, httpx.Response):
            if answers(outcome, call):
                return outcome
            yield ReadBody(outcome)
            delay = retry_delay(outcome, settings, call, attempt, max_retries)
            if delay is None:
                raise raise_for(outcome)
            yield Wait(backoff(attempt) if delay < 0 else delay)
            continue
        if isinstance(outcome, httpx.TimeoutException):
            failure: AtelierError = APITimeoutError(f"No response within the timeout ({outcome}).", code="TIMEOUT")
        else:
            failure = APIConnectionError(f"Could not reach {settings.base_url}: {outcome!r}.", code="CONNECTION_ERROR")
        if attempt >= max_retries:
            raise failure from outcome
        yield Wait(backoff(attempt))
    raise AssertionError("unreachable")


def raise_for(response: httpx.Response) -> AtelierError:
    return error_from_response(response, retry_after_seconds(response.headers))


def json_body(**fields: Any) -> Dict[str, Any]:
    """Keyword arguments as the API's camelCase body, leaving out what was not given."""
    extra = fields.pop("extra_body", None) or {}
    body = {camel_case(name): value for name, value in fields.items() if value is not None}
    body.update(extra)
    return body
