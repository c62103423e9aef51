"""Jobs logic both clients share: starting a job, the job behind a 202 answer, and the finished job's
outcome as the synchronous call's result or error."""

from __future__ import annotations

from typing import Any, Dict, Optional

import httpx

from ._core import Call, json_body, unparsed
from ._errors import AtelierError, _issues_of, error_from_body
from ._images import ImageInput, image_request
from ._models import RESULT_TYPES, JobState, ResponseMeta, Result
from ._operations import OPERATIONS, path_of


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


def create_call(operation: str, image: Optional[ImageInput], params: Dict[str, Any]) -> "Call[httpx.Response]":
    """The POST that starts ``operation`` as a job, with that client method's keyword parameters."""
    fields = dict(params)
    replacement = fields.pop("replacement", None)
    body = json_body(**fields)
    files = None
    if image is not None:
        body, files = image_request(body, image, replacement)
    elif replacement is not None:
        body["replacement"] = replacement
    return Call("POST", path_of(operation), unparsed, body, files, headers={"prefer": "respond-async"})


def created_job(response: httpx.Response) -> JobState:
    """The job a :func:`create_call` started; any answer but 202 means the server does not run jobs."""
    if response.status_code != 202:
        raise AtelierError(f"The server answered {response.status_code} instead of 202 Accepted: it does not run jobs.", status=response.status_code, code="JOBS_UNSUPPORTED")
    return JobState.from_json(response.json(), ResponseMeta.of(response))


def accepted_job(call: "Call[Any]", response: httpx.Response) -> Optional[JobState]:
    """The job a call's 202 answer names, to follow to the result; None for any other answer.

    A server with jobs answers 202 and a job when the call outlived its wait (or repeats one still
    running): following it gives the caller the same result either way."""
    if call.method != "POST" or response.status_code != 202:
        return None
    body = response.json()
    if isinstance(body, dict) and body.get("object") == "job":
        return JobState.from_json(body, ResponseMeta.of(response))
    return None


def job_answer(accepted: httpx.Response, finished: JobState) -> httpx.Response:
    """The synchronous answer a finished job stands for: its result, with the 202's headers."""
    headers = [(name, value) for name, value in accepted.headers.items() if name.lower() not in ("content-length", "content-encoding")]
    return httpx.Response(200, json=finished.result, headers=headers, request=accepted.request)
