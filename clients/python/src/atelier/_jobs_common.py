"""Jobs logic both clients share: the job's outcome, event parsing and when a stream is finished."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

from ._errors import AtelierError, _issues_of
from ._models import RESULT_TYPES, TERMINAL_JOB_STATUSES, JobEvent, JobState, Result
from ._sse import ServerSentEvent

# The server's operation names (issue 16 leaves their spelling open) and the client's.
_OPERATION_ALIASES = {
    "generate": "images.generate",
    "upscale": "tools.upscale",
    "tools.upscale": "tools.upscale",
    "style-transfer": "tools.style_transfer",
    "styleTransfer": "tools.style_transfer",
    "tools.styleTransfer": "tools.style_transfer",
    "background-remove": "tools.remove_background",
    "backgroundRemove": "tools.remove_background",
    "tools.backgroundRemove": "tools.remove_background",
    "prompt-improve": "prompts.improve",
    "prompt.improve": "prompts.improve",
}


def outcome(state: JobState) -> Result:
    """The finished job's result as the synchronous call's result type, or its error raised."""
    if state.status == "succeeded" and state.result is not None:
        kind = RESULT_TYPES.get(_OPERATION_ALIASES.get(state.operation, state.operation), Result)
        return kind.from_json(state.result)
    if state.status == "canceled":
        raise AtelierError(f"Job {state.id} was canceled.", code="CANCELED")
    error: Dict[str, Any] = state.error or {}
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
    if event.event in ("result", "error", "done", "end", *TERMINAL_JOB_STATUSES):
        return True
    status: Optional[Any] = event.data.get("status") if isinstance(event.data, dict) else None
    return isinstance(status, str) and status in TERMINAL_JOB_STATUSES
