"""The behaviour both clients share, without a server: the plans that decide (retries, waiting for a
job, following its events) driven step by step, and the same plan giving the same result whether a
blocking or an awaiting client drives it."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, Generator, List, Optional

import httpx
import pytest

from atelier import APIConnectionError, AtelierError, BadRequestError, PromptImproveResult, ServiceUnavailableError
from atelier._core import Call, ReadBody, Settings, attempts, unparsed
from atelier._job_events import EventFollower
from atelier._job_polling import Refresh, Report, polling
from atelier._models import JobState
from atelier._plans import Wait, drive, drive_async

SETTINGS = Settings.resolve("atl_test", "http://127.0.0.1:9", None, 2, None, None)


def _job(status: str, progress: Optional[Dict[str, Any]] = None, **fields: Any) -> JobState:
    return JobState.from_json({"id": "job_1", "object": "job", "operation": "prompt/improve", "status": status, "progress": progress, **fields})


def _response(request: httpx.Request, status: int, body: Dict[str, Any], headers: Optional[Dict[str, str]] = None) -> httpx.Response:
    return httpx.Response(status, json=body, headers=headers, request=request)


def test_a_retried_post_reads_the_error_waits_and_asks_for_the_job() -> None:
    call: Call[httpx.Response] = Call("POST", "/api/v1/prompt/improve", unparsed, {"prompt": "a cat"})
    request = httpx.Request("POST", SETTINGS.base_url + call.path)
    plan = attempts(SETTINGS, call, request)
    assert next(plan) is request and "prefer" not in request.headers
    busy = _response(request, 503, {"code": "UNAVAILABLE"}, {"retry-after": "3"})
    assert plan.send(busy) == ReadBody(busy)
    assert plan.send(None) == Wait(3.0)
    retried = plan.send(None)
    assert retried is request and request.headers["prefer"] == "respond-async"
    answer = _response(request, 200, {"original": "a cat"})
    with pytest.raises(StopIteration) as done:
        plan.send(answer)
    assert done.value.value is answer


def test_the_last_error_is_raised_once_the_retries_are_spent() -> None:
    call: Call[httpx.Response] = Call("GET", "/api/v1/models", unparsed, max_retries=1)
    request = httpx.Request("GET", SETTINGS.base_url + call.path)
    plan = attempts(SETTINGS, call, request)
    next(plan)
    assert isinstance(plan.send(httpx.ConnectError("refused")), Wait)
    assert plan.send(None) is request
    busy = _response(request, 503, {"code": "UNAVAILABLE", "message": "busy"})
    assert plan.send(busy) == ReadBody(busy)
    with pytest.raises(ServiceUnavailableError):
        plan.send(None)


def _walk(plan: Generator[Any, JobState, Any], states: List[JobState]) -> List[Any]:
    """Answers each Refresh with the next of ``states`` and records every step until the plan ends."""
    steps: List[Any] = []
    state = states.pop(0)
    step = next(plan)
    while True:
        steps.append(step)
        if isinstance(step, Refresh):
            state = states.pop(0)
        try:
            step = plan.send(state)
        except StopIteration as done:
            steps.append(done.value)
            return steps


def test_waiting_reports_at_once_and_on_each_change_and_polls_less_often_up_to_two_seconds() -> None:
    running = _job("running", {"step": 1, "total": 4})
    states = [_job("queued"), _job("queued"), running, running, running, running, running, running]
    states.append(_job("succeeded", result={"original": "a cat", "improved": "a cat, detailed", "variants": []}))
    steps = _walk(polling(states[0], 0.25, None), states)
    result = steps.pop()
    assert isinstance(result, PromptImproveResult) and result.original == "a cat"
    assert [type(step).__name__ for step in steps[:7]] == ["Report", "Wait", "Refresh", "Wait", "Refresh", "Report", "Wait"]
    assert [type(step) for step in steps].count(Report) == 3  # queued at once, then running, then succeeded
    assert [step.seconds for step in steps if isinstance(step, Wait)] == [0.25, 0.375, 0.5625, 0.84375, 1.265625, 1.8984375, 2.0, 2.0]


def test_waiting_raises_the_jobs_error_or_gives_up_after_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    failed = _job("failed", error={"status": 400, "code": "INVALID_INPUT", "message": "no such drawing"})
    with pytest.raises(BadRequestError) as caught:
        _walk(polling(_job("running"), 0.25, None), [_job("running"), failed])
    assert (caught.value.status, caught.value.code, caught.value.message) == (400, "INVALID_INPUT", "no such drawing")
    clock = iter([100.0, 100.5, 101.5])
    monkeypatch.setattr("atelier._job_polling.time.monotonic", lambda: next(clock))
    plan = polling(_job("running"), 0.25, timeout=1.0)
    assert isinstance(next(plan), Report)
    assert plan.send(_job("running")) == Wait(0.25)  # half a second in
    assert isinstance(plan.send(_job("running")), Refresh)
    with pytest.raises(AtelierError) as late:
        plan.send(_job("running"))  # a second and a half in
    assert late.value.code == "WAIT_TIMEOUT" and "did not finish within 1.0 s (still running)" in late.value.message


def test_events_resume_after_the_last_one_and_end_with_the_terminal_one() -> None:
    follower = EventFollower("job_1", None, max_retries=2)
    assert "last-event-id" not in follower.call().headers
    lines = ["id: 1", "event: progress", 'data: {"step": 1}', "", ": keep-alive", "id: 2", "event: progress", "data: {", ""]
    events = [event for event in map(follower.feed, lines) if event is not None]
    assert [(event.id, event.event, event.data) for event in events] == [("1", "progress", {"step": 1}), ("2", "progress", "{")]
    assert not follower.finished
    assert follower.resume_delay() == 0.25
    assert follower.call().headers == {"accept": "text/event-stream", "last-event-id": "2"}
    assert follower.resume_delay() == 0.5
    # An event resets the count of drops.
    assert follower.feed("id: 3") is None and follower.feed("event: result") is None and follower.feed("data: {}") is None
    assert follower.feed("") is not None and follower.finished
    assert follower.resume_delay() == 0.25


def test_events_raise_once_the_stream_keeps_dropping() -> None:
    follower = EventFollower("job_1", "7", max_retries=1)
    assert follower.call().headers["last-event-id"] == "7"
    follower.resume_delay()
    with pytest.raises(APIConnectionError):
        follower.resume_delay()


def test_the_blocking_and_the_awaiting_driver_give_the_same_result() -> None:
    def states() -> List[JobState]:
        return [_job("queued"), _job("running"), _job("succeeded", result={"original": "x", "improved": "y", "variants": []})]

    def blocking() -> Any:
        pending, performed = states(), []

        def perform(step: Any) -> JobState:
            performed.append(type(step).__name__)
            if isinstance(step, Refresh):
                pending.pop(0)
            return pending[0]

        return drive(polling(pending[0], 0.0, None), perform), performed

    async def awaiting() -> Any:
        pending, performed = states(), []

        async def perform(step: Any) -> JobState:
            performed.append(type(step).__name__)
            if isinstance(step, Refresh):
                pending.pop(0)
            return pending[0]

        return await drive_async(polling(pending[0], 0.0, None), perform), performed

    assert blocking() == asyncio.run(awaiting())
    assert blocking()[1] == ["Report", "Wait", "Refresh", "Report", "Wait", "Refresh", "Report"]
