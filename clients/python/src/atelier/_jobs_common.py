"""Jobs logic both clients share: the job's outcome, event parsing and when a stream is finished."""

from __future__ import annotations

import json
from typing import Any, Dict

from ._errors import AtelierError, _issues_of, error_from_body
from ._operations import OPERATIONS
from ._models import RESULT_TYPES, JobEvent, JobState, Result
from ._sse import ServerSentEvent


def _client_method(operation: str) -> str:
    """The client method for a job's ``operation``, which the server names by REST path (``tools/upscale``)."""
    path = operation if operation.startswith("/") else "/api/v1/" + operation
    return next((name for method, rest_path, name in OPERATIONS if method == "POST" and rest_path == path), operation)


def outcome(state: JobState) -> Result:
    """The finished job's result as the synchronous call's result type, or its error raised."""
    if state.status == "succeeded" and state.result is not None:
        kind = RESULT_TYPES.get(_client_method(state.operation), Result)
        return kind.from_json(state.result)
    if state.status == "canceled":
        raise AtelierError(f"Job {state.id} was canceled.", code="CANCELED")
    error: Dict[str, Any] = state.error or {}
    if isinstance(error.get("status"), int):
        # The same class the synchronous call would have raised (BadRequestError for INVALID_INPUT, ...).
        raise error_from_body(error["status"], error)
    raise AtelierError(
        str(error.get("message", f"Job {state.id} failed.")),
        code=str(error.get("code", "JOB_FAILED")),
        request_id=error.get("requestId"),
        issues=_issues_of(error.get("issues")),
    )


def job_event(event: ServerSentEvent) -> JobEvent:
    try:
        data: Any = json.loads(event.data)
    except ValueError:
        data = event.data
    return JobEvent(event.id, event.event, data)


def is_terminal(event: JobEvent) -> bool:
    """Whether the job has finished with this event; the server still closes the stream itself."""
    return event.event in ("result", "error")
