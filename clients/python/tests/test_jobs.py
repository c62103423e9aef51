"""Jobs (issue 16) through both clients, when the server serves them: create, wait with progress,
events, list, cancel, raw result. Skipped, naming why, against a server without jobs."""

from __future__ import annotations

import asyncio
from typing import Any, Iterator, List

import httpx
import pytest

from atelier import AsyncAtelier, Atelier, ConflictError, JobState, UpscaleResult


@pytest.fixture(scope="module", autouse=True)
def _needs_jobs(base_url: str) -> Iterator[None]:
    paths = httpx.get(f"{base_url}/api/v1/openapi.json").json()["paths"]
    if "/v1/jobs/{id}" not in paths and not any(path.startswith("/v1/jobs/") for path in paths):
        pytest.skip("this server's OpenAPI document has no /v1/jobs paths (issue 16 not merged)")
    yield


def test_job_wait_reports_progress_and_returns_the_sync_result(client: Atelier, png: bytes) -> None:
    job = client.jobs.create("tools.upscale", image=png, scale=2)
    assert job.id and job.status in ("queued", "running", "succeeded")
    seen: List[str] = []
    result = job.wait(on_progress=lambda current: seen.append(current.status))
    assert isinstance(result, UpscaleResult)
    assert (result.image.width, result.image.height) == (48, 32)
    assert seen[-1] == "succeeded"
    raw = client.jobs.result(job.id)
    assert raw.content == result.image.to_bytes()
    assert raw.mime_type.startswith("image/png")
    assert any(listed.id == job.id for listed in client.jobs.list().data)
    with pytest.raises(ConflictError):
        client.jobs.cancel(job.id)


def test_events_end_with_the_outcome(client: Atelier, png: bytes) -> None:
    job = client.jobs.create("tools.upscale", image=png, scale=2)
    events = list(client.jobs.events(job.id))
    assert events, "no events"
    final = events[-1]
    assert isinstance(final.data, dict)
    state = JobState.from_json(final.data.get("job", final.data)) if "status" in final.data or "job" in final.data else None
    assert state is None or state.status == "succeeded"


def test_async_jobs(base_url: str, api_key: str) -> None:
    async def main() -> Any:
        async with AsyncAtelier(api_key=api_key, base_url=base_url) as client:
            job = await client.jobs.create("prompts.improve", prompt="a cat")
            result = await job.wait()
            events = [event async for event in client.jobs.events(job.id)]
            return result, events

    result, events = asyncio.run(main())
    assert result.raw["original"] == "a cat"
    assert events
