"""Waiting for a job by polling it, as a plan (see ``_plans.py``): when to poll, when to report
progress, when to give up, and what the finished job gives."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Generator, Optional, Tuple, Union

from ._errors import AtelierError
from ._jobs_common import outcome
from ._models import JobProgress, JobState, Result
from ._plans import Wait

POLL_BACKOFF = 1.5
"""Each poll waits this many times longer than the one before ..."""
MAX_POLL_INTERVAL = 2.0
"""... up to this many seconds."""


@dataclass(frozen=True)
class Refresh:
    """A step of the polling plan: fetch the job again."""


@dataclass(frozen=True)
class Report:
    """A step of the polling plan: call the caller's ``on_progress``, if any."""


PollStep = Union[Wait, Refresh, Report]


def _progress_of(state: JobState) -> Tuple[str, Optional[JobProgress]]:
    return state.status, state.progress


def polling(state: JobState, poll_interval: float, timeout: Optional[float]) -> Generator[PollStep, JobState, Result]:
    """Polls until the job finishes and returns its outcome (or raises its error). Progress is reported
    at once and whenever the status or progress changes. The client answers every step with the job's
    state as it now knows it."""
    started = time.monotonic()
    seen = _progress_of(state)
    state = yield Report()
    while not state.done:
        if timeout is not None and time.monotonic() - started > timeout:
            raise AtelierError(f"Job {state.id} did not finish within {timeout} s (still {state.status}).", code="WAIT_TIMEOUT")
        yield Wait(poll_interval)
        poll_interval = min(poll_interval * POLL_BACKOFF, MAX_POLL_INTERVAL)
        state = yield Refresh()
        now = _progress_of(state)
        if now != seen:
            state = yield Report()
        seen = now
    return outcome(state)
