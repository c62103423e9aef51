"""Jobs through both clients, when the server serves them: create, wait with progress,
events and their resume, list, cancel, the raw result. Skipped, naming why, against a server
without jobs."""

from __future__ import annotations

import asyncio
from typing import Any, Iterator, List, Tuple

import httpx
import pytest
from conftest import FaultProxy

from atelier import AsyncAtelier, Atelier, AtelierError, BadRequestError, ConflictError, JobEvent, PromptImproveResult, UpscaleResult


@pytest.fixture(scope="module", autouse=True)
def _needs_jobs(base_url: str, api_key: str) -> Iterator[None]:
    status = httpx.get(f"{base_url}/api/v1/jobs", headers={"authorization": f"Bearer {api_key}"}).status_code
    if status != 200:
        pytest.skip(f"GET /api/v1/jobs answered {status}: this server does not serve jobs")
    yield


def test_job_wait_reports_progress_and_returns_the_sync_result(client: Atelier, png: bytes) -> None:
    job = client.jobs.create("tools.upscale", image=png, scale=2)
    assert job.id.startswith("job_") and job.status in ("queued", "running", "succeeded")
    seen: List[str] = []
    result = job.wait(on_progress=lambda current: seen.append(current.status))
    assert isinstance(result, UpscaleResult)
    assert (result.image.width, result.image.height) == (48, 32)
    assert seen[-1] == "succeeded"
    raw = client.jobs.result(job.id)
    assert raw.content == result.image.to_bytes()
    assert raw.mime_type.startswith("image/png")
    assert job.id in [listed.id for listed in client.jobs.list(status="succeeded").data]
    with pytest.raises(ConflictError):
        client.jobs.cancel(job.id)


def test_events_end_with_where_the_result_is_and_resume(client: Atelier) -> None:
    job = client.jobs.create("prompts.improve", prompt="a cat on a roof")
    assert isinstance(job.wait(), PromptImproveResult)
    events = list(client.jobs.events(job.id))
    assert len(events) >= 2
    assert events[-1].event == "result"
    assert events[-1].data == {"status": "succeeded", "jobUrl": f"/api/v1/jobs/{job.id}", "resultUrl": f"/api/v1/jobs/{job.id}/result"}
    # The result is the job's, fetched after the event.
    result = client.jobs.get(job.id).state.result
    assert result is not None and result["original"] == "a cat on a roof"
    first = events[0].id
    assert first is not None
    resumed = list(client.jobs.events(job.id, last_event_id=first))
    assert [event.id for event in resumed] == [event.id for event in events[1:]]


def test_cancel_a_queued_job(client: Atelier, png: bytes) -> None:
    pil = pytest.importorskip("PIL.Image")
    # 4000x3600 out (14.4 MP, under the server's 16.8 MP output limit, so the jobs run rather than
    # fail at once): long enough that the last one is still queued behind the others when cancelled.
    big = pil.new("RGB", (1000, 900), (10, 120, 200))
    jobs = [client.jobs.create("tools.upscale", image=big, scale=4, model="lanczos") for _ in range(4)]
    last = jobs[-1].cancel()
    assert last.status == "canceled"
    with pytest.raises(AtelierError) as caught:
        last.wait()
    assert caught.value.code == "CANCELED"
    for job in jobs[:-1]:
        result = job.wait()
        assert isinstance(result, UpscaleResult) and result.image.width == 4000


def test_a_failed_job_raises_what_the_synchronous_call_raises(client: Atelier, png: bytes) -> None:
    # A prompt naming nothing the doodle model draws is invalid input only the worker finds, once the job runs.
    with pytest.raises(BadRequestError) as sync:
        client.images.generate("a lecture on quantum chromodynamics")
    job = client.jobs.create("images.generate", prompt="a lecture on quantum chromodynamics")
    with pytest.raises(BadRequestError) as in_job:
        job.wait()
    assert (in_job.value.status, in_job.value.code, in_job.value.message) == (sync.value.status, sync.value.code, sync.value.message)
    assert in_job.value.code == "INVALID_INPUT" and in_job.value.status == 400


def test_a_202_job_answer_is_followed_to_the_result(api_key: str, png: bytes, proxy: FaultProxy) -> None:
    proxy.queue({"kind": "prefer-async"})
    with Atelier(api_key=api_key, base_url=proxy.url) as client:
        result = client.tools.upscale(png, scale=3)
    assert isinstance(result, UpscaleResult) and (result.image.width, result.scale) == (72, 3)
    seen = proxy.seen()
    assert seen[0]["method"] == "POST" and all(request["url"].startswith("/api/v1/jobs/job_") for request in seen[1:])

    async def follow() -> UpscaleResult:
        proxy.reset()
        proxy.queue({"kind": "prefer-async"})
        async with AsyncAtelier(api_key=api_key, base_url=proxy.url) as asynchronous:
            return await asynchronous.tools.upscale(png, scale=2)

    assert asyncio.run(follow()).image.width == 48


def test_webhook_secret(client: Atelier) -> None:
    first = client.webhooks.secret()
    assert first.object == "webhook_secret" and first.secret.startswith("whsec_")
    assert client.webhooks.secret().secret == first.secret
    rotated = client.webhooks.rotate_secret()
    assert rotated.secret.startswith("whsec_") and rotated.secret != first.secret


def test_async_jobs(base_url: str, api_key: str) -> None:
    async def main() -> Tuple[Any, List[JobEvent]]:
        async with AsyncAtelier(api_key=api_key, base_url=base_url) as client:
            job = await client.jobs.create("prompts.improve", prompt="a cat")
            result = await job.wait()
            events = [event async for event in client.jobs.events(job.id)]
            return result, events

    result, events = asyncio.run(main())
    assert isinstance(result, PromptImproveResult) and result.original == "a cat"
    assert events[-1].event == "result"
