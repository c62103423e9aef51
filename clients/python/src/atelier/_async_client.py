"""The asynchronous client: ``AsyncAtelier(api_key=...)``, then ``await client.tools.upscale("photo.jpg", scale=4)``.

The same operations, names and behaviour as the synchronous :class:`~atelier.Atelier`."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, Mapping, Optional, TypeVar, Union

import httpx

from ._core import AttemptStep, Call, Outcome, ReadBody, Settings, attempts, build_request, json_body, parser_of
from ._images import ImageInput, ReplacementImage, image_request
from ._job_events import EventFollower
from ._job_polling import PollStep, Refresh, polling
from ._jobs_common import accepted_job, create_call, created_job, job_answer
from ._models import (
    BackgroundRemoveResult,
    GenerateResult,
    JobEvent,
    JobList,
    JobState,
    Liveness,
    ModelList,
    PromptImproveResult,
    RawImage,
    Readiness,
    ResponseMeta,
    Result,
    WebhookSecret,
    StyleTransferResult,
    UpscaleResult,
)
from ._operations import path_of
from ._plans import Wait, drive_async

R = TypeVar("R")


async def _maybe_await(value: Union[None, Awaitable[None]]) -> None:
    if value is not None:
        await value


class AsyncAtelier:
    """An asynchronous client for one Atelier server.

    ``api_key`` defaults to ``ATELIER_API_KEY``, ``base_url`` to ``ATELIER_BASE_URL`` (else
    ``http://localhost:8080``). ``timeout`` is seconds per attempt (default 600); ``max_retries``
    (default 2) retries connection errors, 408, 409, 429 and 5xx with backoff or ``Retry-After``.
    """

    def __init__(
        self,
        *,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        max_retry_after: Optional[float] = None,
        default_headers: Optional[Mapping[str, str]] = None,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        self._settings = Settings.resolve(api_key, base_url, timeout, max_retries, max_retry_after, default_headers)
        self._http = http_client or httpx.AsyncClient()
        self.images = AsyncImages(self)
        self.tools = AsyncTools(self)
        self.prompts = AsyncPrompts(self)
        self.models = AsyncModels(self)
        self.health = AsyncHealth(self)
        """The server's liveness and readiness probes."""
        self.webhooks = AsyncWebhooks(self)
        """Webhook signing secrets; needs a server with jobs."""
        self.jobs = AsyncJobs(self)
        """Asynchronous jobs; needs a server that serves ``/api/v1/jobs``."""

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncAtelier":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _send(self, call: Call[Any], stream: bool = False) -> httpx.Response:
        async def perform(step: AttemptStep) -> Outcome:
            if isinstance(step, Wait):
                await asyncio.sleep(step.seconds)
            elif isinstance(step, ReadBody):
                await step.response.aread()
                await step.response.aclose()
            else:
                try:
                    return await self._http.send(step, stream=stream)
                except httpx.TransportError as error:
                    return error
            return None

        return await drive_async(attempts(self._settings, call, build_request(self._http, self._settings, call)), perform)

    async def _run(self, call: Call[R]) -> R:
        response = await self._send(call)
        accepted = accepted_job(call, response)
        if accepted is not None:
            job = AsyncJob(self.jobs, accepted)
            await job.wait()
            response = job_answer(response, job.state)
        return call.parse(response)


class _Resource:
    def __init__(self, client: AsyncAtelier) -> None:
        self._client = client


class AsyncImages(_Resource):
    async def generate(
        self,
        prompt: str,
        *,
        width: Optional[int] = None,
        height: Optional[int] = None,
        model: Optional[str] = None,
        negative_prompt: Optional[str] = None,
        steps: Optional[int] = None,
        guidance_scale: Optional[float] = None,
        seed: Optional[int] = None,
        scheduler: Optional[str] = None,
        output_format: Optional[str] = None,
        webhook_url: Optional[str] = None,
        extra_body: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> GenerateResult:
        """Text to image (``POST /api/v1/generate``). Only ``prompt`` is required."""
        body = json_body(prompt=prompt, width=width, height=height, model=model, negative_prompt=negative_prompt, steps=steps,
                         guidance_scale=guidance_scale, seed=seed, scheduler=scheduler, output_format=output_format, webhook_url=webhook_url, extra_body=extra_body)
        return await self._client._run(Call("POST", path_of("images.generate"), parser_of(GenerateResult), body, timeout=timeout, max_retries=max_retries, idempotency_key=idempotency_key))


class AsyncTools(_Resource):
    async def upscale(
        self,
        image: ImageInput,
        *,
        scale: Optional[int] = None,
        model: Optional[str] = None,
        quality: Optional[str] = None,
        output_format: Optional[str] = None,
        webhook_url: Optional[str] = None,
        extra_body: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> UpscaleResult:
        """Enlarges an image 2 to 8 times (``POST /api/v1/tools/upscale``).

        ``quality`` (without ``model``): ``"fast"`` (the fast network), ``"balanced"`` (the server's
        default: a stronger way when it fits the server's time budget) or ``"max"`` (the strongest way,
        a self-ensemble of eight orientations, whatever the budget; 400 when it would not finish in time).
        """
        body, files = image_request(json_body(scale=scale, model=model, quality=quality, output_format=output_format, webhook_url=webhook_url, extra_body=extra_body), image)
        return await self._client._run(Call("POST", path_of("tools.upscale"), parser_of(UpscaleResult), body, files, timeout=timeout, max_retries=max_retries, idempotency_key=idempotency_key))

    async def style_transfer(
        self,
        image: ImageInput,
        *,
        style: str,
        strength: Optional[float] = None,
        preserve_colors: Optional[bool] = None,
        output_format: Optional[str] = None,
        webhook_url: Optional[str] = None,
        extra_body: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> StyleTransferResult:
        """Paints an image in a style (``POST /api/v1/tools/style-transfer``)."""
        body, files = image_request(json_body(style=style, strength=strength, preserve_colors=preserve_colors, output_format=output_format, webhook_url=webhook_url, extra_body=extra_body), image)
        return await self._client._run(Call("POST", path_of("tools.style_transfer"), parser_of(StyleTransferResult), body, files, timeout=timeout, max_retries=max_retries, idempotency_key=idempotency_key))

    async def remove_background(
        self,
        image: ImageInput,
        *,
        replacement: Optional[Union[str, ReplacementImage]] = None,
        model: Optional[str] = None,
        only_mask: Optional[bool] = None,
        output_format: Optional[str] = None,
        webhook_url: Optional[str] = None,
        extra_body: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> BackgroundRemoveResult:
        """Removes or replaces the background (``POST /api/v1/tools/background-remove``).

        ``replacement`` is text (a colour, a URL, ``blur``, a description) or an image of yours (bytes,
        a ``pathlib.Path``, a file object, a Pillow image, a result image)."""
        body, files = image_request(json_body(model=model, only_mask=only_mask, output_format=output_format, webhook_url=webhook_url, extra_body=extra_body), image, replacement)
        return await self._client._run(Call("POST", path_of("tools.remove_background"), parser_of(BackgroundRemoveResult), body, files, timeout=timeout, max_retries=max_retries, idempotency_key=idempotency_key))


class AsyncPrompts(_Resource):
    async def improve(
        self,
        prompt: str,
        *,
        style: Optional[str] = None,
        mood: Optional[str] = None,
        seed: Optional[int] = None,
        variants: Optional[int] = None,
        webhook_url: Optional[str] = None,
        extra_body: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> PromptImproveResult:
        """Turns a short idea into a detailed prompt (``POST /api/v1/prompt/improve``)."""
        body = json_body(prompt=prompt, style=style, mood=mood, seed=seed, variants=variants, webhook_url=webhook_url, extra_body=extra_body)
        return await self._client._run(Call("POST", path_of("prompts.improve"), parser_of(PromptImproveResult), body, timeout=timeout, max_retries=max_retries, idempotency_key=idempotency_key))


class AsyncModels(_Resource):
    async def list(self, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ModelList:
        """Every model the server knows, installed or not (``GET /api/v1/models``; needs no key)."""
        return await self._client._run(Call("GET", path_of("models.list"), parser_of(ModelList), timeout=timeout, max_retries=max_retries))


class AsyncWebhooks(_Resource):
    async def secret(self) -> WebhookSecret:
        """The key's webhook signing secret (``GET /api/v1/webhooks/secret``), made on first use."""
        return await self._client._run(Call("GET", path_of("webhooks.secret"), parser_of(WebhookSecret)))

    async def rotate_secret(self) -> WebhookSecret:
        """Replaces the key's signing secret (``POST /api/v1/webhooks/secret``)."""
        return await self._client._run(Call("POST", path_of("webhooks.rotate_secret"), parser_of(WebhookSecret), {}))


class AsyncHealth(_Resource):
    async def live(self, *, timeout: Optional[float] = None) -> Liveness:
        """Liveness (``GET /healthz``): answers while the server process runs."""
        return await self._client._run(Call("GET", path_of("health.live"), parser_of(Liveness), timeout=timeout))

    async def ready(self, *, timeout: Optional[float] = None) -> Readiness:
        """Readiness (``GET /readyz``): ``ready`` False (a 503, not retried) lists the failing checks."""
        return await self._client._run(Call("GET", path_of("health.ready"), parser_of(Readiness), timeout=timeout, max_retries=0, accept_statuses=(503,)))


class AsyncJob:
    """A job to follow: ``await job.wait(on_progress=...)``, ``async for event in job.events()``, ``await job.cancel()``."""

    def __init__(self, jobs: "AsyncJobs", state: JobState) -> None:
        self._jobs = jobs
        self.state = state

    @property
    def id(self) -> str:
        return self.state.id

    @property
    def status(self) -> str:
        return self.state.status

    async def refresh(self) -> "AsyncJob":
        self.state = (await self._jobs.get(self.id)).state
        return self

    async def cancel(self) -> "AsyncJob":
        self.state = (await self._jobs.cancel(self.id)).state
        return self

    def events(self) -> AsyncIterator[JobEvent]:
        return self._jobs.events(self.id)

    async def wait(self, *, on_progress: Optional[Callable[["AsyncJob"], Union[None, Awaitable[None]]]] = None, poll_interval: float = 0.25, timeout: Optional[float] = None) -> Result:
        """Polls until the job finishes; returns the synchronous call's result or raises the job's error."""

        async def perform(step: PollStep) -> JobState:
            if isinstance(step, Wait):
                await asyncio.sleep(step.seconds)
            elif isinstance(step, Refresh):
                await self.refresh()
            elif on_progress:
                await _maybe_await(on_progress(self))
            return self.state

        return await drive_async(polling(self.state, poll_interval, timeout), perform)


class AsyncJobs(_Resource):
    """Asynchronous jobs; needs a server that serves ``/api/v1/jobs``."""

    async def create(self, operation: str, image: Optional[ImageInput] = None, **params: Any) -> AsyncJob:
        """Starts ``operation`` (``"tools.upscale"``, ``"images.generate"`` ...) as a job with that method's parameters."""
        return AsyncJob(self, created_job(await self._client._send(create_call(operation, image, params))))

    async def get(self, job_id: str) -> AsyncJob:
        return AsyncJob(self, await self._client._run(Call("GET", path_of("jobs.get").format(id=job_id), parser_of(JobState))))

    async def list(self, *, status: Optional[str] = None, cursor: Optional[str] = None, limit: Optional[int] = None) -> JobList:
        return await self._client._run(Call("GET", path_of("jobs.list"), parser_of(JobList), query={"status": status, "cursor": cursor, "limit": limit}))

    async def cancel(self, job_id: str) -> AsyncJob:
        """Cancels a queued or running job; a finished one raises :class:`ConflictError` (not retried)."""
        return AsyncJob(self, await self._client._run(Call("DELETE", path_of("jobs.cancel").format(id=job_id), parser_of(JobState), no_retry_statuses=(409,))))

    async def result(self, job_id: str) -> RawImage:
        """The finished job's image as bytes."""
        return await self._client._run(Call("GET", path_of("jobs.result").format(id=job_id), lambda r: RawImage(r.content, r.headers.get("content-type", ""), ResponseMeta.of(r)), headers={"accept": "image/*"}))

    async def events(self, job_id: str, *, last_event_id: Optional[str] = None) -> AsyncIterator[JobEvent]:
        """The job's events as they happen; a dropped stream resumes with ``Last-Event-ID``."""
        follower = EventFollower(job_id, last_event_id, self._client._settings.max_retries)
        while True:
            response = await self._client._send(follower.call(), stream=True)
            try:
                async for line in response.aiter_lines():
                    event = follower.feed(line)
                    if event is not None:
                        yield event
            except httpx.TransportError:
                pass
            finally:
                await response.aclose()
            if follower.finished:
                return
            await asyncio.sleep(follower.resume_delay())
