"""Following a job's event stream, without I/O: the request that opens (or resumes) it, the events
its lines complete, whether the job has finished, and how long to wait before resuming a dropped one."""

from __future__ import annotations

import json
from typing import Any, Optional

import httpx

from ._core import Call, unparsed
from ._errors import APIConnectionError
from ._models import JobEvent
from ._operations import path_of
from ._sse import EventDecoder, ServerSentEvent

RESUME_DELAY = 0.25
"""Seconds before resuming a dropped stream, times the drops since the last event."""


def job_event(event: ServerSentEvent) -> JobEvent:
    try:
        data: Any = json.loads(event.data)
    except ValueError:
        data = event.data
    return JobEvent(event.id, event.event, data)


def is_terminal(event: JobEvent) -> bool:
    """Whether the job has finished with this event; the server still closes the stream itself."""
    return event.event in ("result", "error")


class EventFollower:
    """One job's events across however many connections it takes: a dropped stream resumes with
    ``Last-Event-ID``; more than ``max_retries`` drops in a row without an event raise."""

    def __init__(self, job_id: str, last_event_id: Optional[str], max_retries: int) -> None:
        self._job_id = job_id
        self._decoder = EventDecoder()
        self._decoder.last_id = last_event_id
        self._max_retries = max_retries
        self._drops = 0
        self.finished = False
        """Whether a terminal event came; the client still reads the stream to its end."""

    def call(self) -> "Call[httpx.Response]":
        """The streamed GET that opens the stream, after the last event seen if any."""
        last_id = self._decoder.last_id
        headers = {"accept": "text/event-stream", **({"last-event-id": last_id} if last_id else {})}
        return Call("GET", path_of("jobs.events").format(id=self._job_id), unparsed, headers=headers, timeout=None)

    def feed(self, line: str) -> Optional[JobEvent]:
        """The event this line of the stream completes, if any."""
        event = self._decoder.feed(line)
        if event is None:
            return None
        self._drops = 0
        parsed = job_event(event)
        self.finished = self.finished or is_terminal(parsed)
        return parsed

    def resume_delay(self) -> float:
        """Seconds to wait before resuming a stream that ended before the job did, or its error."""
        self._drops += 1
        if self._drops > self._max_retries:
            raise APIConnectionError(f"The event stream of job {self._job_id} kept dropping.", code="CONNECTION_ERROR")
        return RESUME_DELAY * self._drops
