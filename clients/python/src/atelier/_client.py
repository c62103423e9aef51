"""The synchronous client: ``Atelier(api_key=...)``, then ``client.tools.upscale("photo.jpg", scale=4)``."""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Type, TypeVar, Union

import httpx

from ._core import Call, Outcome, Settings, Wait, answers, attempts, build_request, json_body
from ._errors import APIConnectionError, AtelierError
from ._images import ImageInput, ReplacementImage, image_request
from ._jobs_common import is_terminal, job_event, outcome
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
from ._sse import EventDecoder

R = TypeVar("R")
T = TypeVar("T", bound=Result)


def _parser(kind: Type[T]) -> Callable[[httpx.Response], T]:
    return lambda response: kind.from_json(response.json(), ResponseMeta.of(response))


class Atelier:
    """A client for one Atelier server.

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
        http_client: Optional[httpx.Client] = None,
    ) -> None:
        self._settings = Settings.resolve(api_key, base_url, timeout, max_retries, max_retry_after, default_headers)
        self._http = http_client or httpx.Client()
        self.images = Images(self)
        self.tools = Tools(self)
        self.prompts = Prompts(self)
        self.models = Models(self)
        self.health = Health(self)
        self.webhooks = Webhooks(self)
        """Webhook signing secrets; needs a server with jobs."""
        """The server's liveness and readiness probes."""
        self.jobs = Jobs(self)
        """Asynchronous jobs; needs a server that serves ``/api/v1/jobs``."""

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Atelier":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, call: Call[Any], stream: bool = False) -> httpx.Response:
        plan = attempts(self._settings, call, build_request(self._http, self._settings, call))
        step = next(plan)
        while True:
            outcome: Outcome = None
            if isinstance(step, Wait):
                time.sleep(step.seconds)
            else:
                try:
                    outcome = self._http.send(step, stream=stream)
                except httpx.TransportError as error:
                    outcome = error
                else:
                    if not answers(outcome, call):
                        outcome.read()
                        outcome.close()
            try:
                step = plan.send(outcome)
            except StopIteration as done:
                response: httpx.Response = done.value
                return response

    def _run(self, call: Call[R]) -> R:
        response = self._send(call)
        if call.method == "POST" and response.status_code == 202:
            # A server with jobs answers 202 and a job when the call outlived its wait (or repeats one
            # still running): follow the job, so the caller gets the same result either way.
            body = response.json()
            if isinstance(body, dict) and body.get("object") == "job":
                job = Job(self.jobs, JobState.from_json(body, ResponseMeta.of(response)))
                job.wait()
                headers = [(name, value) for name, value in response.headers.items() if name.lower() not in ("content-length", "content-encoding")]
                response = httpx.Response(200, json=job.state.result, headers=headers, request=response.request)
        return call.parse(response)


class _Resource:
    def __init__(self, client: Atelier) -> None:
        self._client = client


class Images(_Resource):
    def generate(
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
        return self._client._run(Call("POST", path_of("images.generate"), _parser(GenerateResult), body, timeout=timeout, max_retries=max_retries, idempotency_key=idempotency_key))


class Tools(_Resource):
    def upscale(
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
        return self._client._run(Call("POST", path_of("tools.upscale"), _parser(UpscaleResult), body, files, timeout=timeout, max_retries=max_retries, idempotency_key=idempotency_key))

    def style_transfer(
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
        return self._client._run(Call("POST", path_of("tools.style_transfer"), _parser(StyleTransferResult), body, files, timeout=timeout, max_retries=max_retries, idempotency_key=idempotency_key))

    def remove_background(
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
        return self._client._run(Call("POST", path_of("tools.remove_background"), _parser(BackgroundRemoveResult), body, files, timeout=timeout, max_retries=max_retries, idempotency_key=idempotency_key))


class Prompts(_Resource):
    def improve(
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
        return self._client._run(Call("POST", path_of("prompts.improve"), _parser(PromptImproveResult), body, timeout=timeout, max_retries=max_retries, idempotency_key=idempotency_key))


class Models(_Resource):
    def list(self, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ModelList:
        """Every model the server knows, installed or not (``GET /api/v1/models``; needs no key)."""
        return self._client._run(Call("GET", path_of("models.list"), _parser(ModelList), timeout=timeout, max_retries=max_retries))


class Webhooks(_Resource):
    def secret(self) -> WebhookSecret:
        """The key's webhook signing secret (``GET /api/v1/webhooks/secret``), made on first use."""
        return self._client._run(Call("GET", path_of("webhooks.secret"), _parser(WebhookSecret)))

    def rotate_secret(self) -> WebhookSecret:
        """Replaces the key's signing secret (``POST /api/v1/webhooks/secret``)."""
        return self._client._run(Call("POST", path_of("webhooks.rotate_secret"), _parser(WebhookSecret), {}))


class Health(_Resource):
    def live(self, *, timeout: Optional[float] = None) -> Liveness:
        """Liveness (``GET /healthz``): answers while the server process runs."""
        return self._client._run(Call("GET", path_of("health.live"), _parser(Liveness), timeout=timeout))

    def ready(self, *, timeout: Optional[float] = None) -> Readiness:
        """Readiness (``GET /readyz``): ``ready`` False (a 503, not retried) lists the failing checks."""
        return self._client._run(Call("GET", path_of("health.ready"), _parser(Readiness), timeout=timeout, max_retries=0, accept_statuses=(503,)))


class Job:
    """A job to follow: ``job.wait(on_progress=...)``, ``job.events()``, ``job.cancel()``."""

    def __init__(self, jobs: "Jobs", state: JobState) -> None:
        self._jobs = jobs
        self.state = state

    @property
    def id(self) -> str:
        return self.state.id

    @property
    def status(self) -> str:
        return self.state.status

    def refresh(self) -> "Job":
        self.state = self._jobs.get(self.id).state
        return self

    def cancel(self) -> "Job":
        self.state = self._jobs.cancel(self.id).state
        return self

    def events(self) -> Iterator[JobEvent]:
        return self._jobs.events(self.id)

    def wait(self, *, on_progress: Optional[Callable[["Job"], None]] = None, poll_interval: float = 0.25, timeout: Optional[float] = None) -> Result:
        """Polls until the job finishes; returns the synchronous call's result or raises the job's error."""
        started = time.monotonic()
        seen = (self.state.status, self.state.progress)
        if on_progress:
            on_progress(self)
        while not self.state.done:
            if timeout is not None and time.monotonic() - started > timeout:
                raise AtelierError(f"Job {self.id} did not finish within {timeout} s (still {self.status}).", code="WAIT_TIMEOUT")
            time.sleep(poll_interval)
            poll_interval = min(poll_interval * 1.5, 2.0)
            self.refresh()
            now = (self.state.status, self.state.progress)
            if now != seen and on_progress:
                on_progress(self)
            seen = now
        return outcome(self.state)


class Jobs(_Resource):
    """Asynchronous jobs (issue 16); needs a server that serves ``/api/v1/jobs``."""

    def create(self, operation: str, image: Optional[ImageInput] = None, **params: Any) -> Job:
        """Starts ``operation`` (``"tools.upscale"``, ``"images.generate"`` ...) as a job with that method's parameters."""
        replacement = params.pop("replacement", None)
        body = json_body(**params)
        files = None
        if image is not None:
            body, files = image_request(body, image, replacement)
        elif replacement is not None:
            body["replacement"] = replacement
        response = self._client._send(Call("POST", path_of(operation), lambda r: r, body, files, headers={"prefer": "respond-async"}))
        if response.status_code != 202:
            raise AtelierError(f"The server answered {response.status_code} instead of 202 Accepted: it does not run jobs.", status=response.status_code, code="JOBS_UNSUPPORTED")
        return Job(self, JobState.from_json(response.json(), ResponseMeta.of(response)))

    def get(self, job_id: str) -> Job:
        return Job(self, self._client._run(Call("GET", path_of("jobs.get").format(id=job_id), _parser(JobState))))

    def list(self, *, status: Optional[str] = None, cursor: Optional[str] = None, limit: Optional[int] = None) -> JobList:
        return self._client._run(Call("GET", path_of("jobs.list"), _parser(JobList), query={"status": status, "cursor": cursor, "limit": limit}))

    def cancel(self, job_id: str) -> Job:
        """Cancels a queued or running job; a finished one raises :class:`ConflictError` (not retried)."""
        return Job(self, self._client._run(Call("DELETE", path_of("jobs.cancel").format(id=job_id), _parser(JobState), no_retry_statuses=(409,))))

    def result(self, job_id: str) -> RawImage:
        """The finished job's image as bytes."""
        return self._client._run(Call("GET", path_of("jobs.result").format(id=job_id), lambda r: RawImage(r.content, r.headers.get("content-type", ""), ResponseMeta.of(r)), headers={"accept": "image/*"}))

    def events(self, job_id: str, *, last_event_id: Optional[str] = None) -> Iterator[JobEvent]:
        """The job's events as they happen; a dropped stream resumes with ``Last-Event-ID``."""
        decoder = EventDecoder()
        decoder.last_id = last_event_id
        failures = 0
        finished = False
        while not finished:
            headers = {"accept": "text/event-stream", **({"last-event-id": decoder.last_id} if decoder.last_id else {})}
            response = self._client._send(Call("GET", path_of("jobs.events").format(id=job_id), lambda r: r, headers=headers, timeout=None), stream=True)
            try:
                for line in response.iter_lines():
                    event = decoder.feed(line)
                    if event is None:
                        continue
                    failures = 0
                    parsed = job_event(event)
                    finished = finished or is_terminal(parsed)
                    yield parsed
            except httpx.TransportError:
                pass
            finally:
                response.close()
            if finished:
                return
            # The stream ended before the job did: resume after the last event seen.
            failures += 1
            if failures > self._client._settings.max_retries:
                raise APIConnectionError(f"The event stream of job {job_id} kept dropping.", code="CONNECTION_ERROR")
            time.sleep(0.25 * failures)
