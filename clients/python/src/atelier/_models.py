"""Response bodies as typed objects. Every one keeps the body it came from (``raw``, fields newer
than this client included) and the response's request id, quota headers and headers."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Type, TypeVar

import httpx

from ._images import Image
from ._rate_limit import RateLimit, rate_limit_of


@dataclass(frozen=True)
class ResponseMeta:
    status: int
    request_id: Optional[str]
    rate_limit: Optional[RateLimit]
    headers: httpx.Headers

    @classmethod
    def of(cls, response: httpx.Response) -> "ResponseMeta":
        return cls(response.status_code, response.headers.get("x-request-id"), rate_limit_of(response.headers), response.headers)


def snake_case(name: str) -> str:
    """``imageUrl`` -> ``image_url``: the one rule between the API's names and Python's."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def camel_case(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


T = TypeVar("T", bound="Result")


@dataclass(frozen=True)
class Result:
    raw: Dict[str, Any] = field(repr=False)
    """The response body as sent."""
    meta: Optional[ResponseMeta] = field(repr=False, compare=False)

    @property
    def request_id(self) -> Optional[str]:
        return self.meta.request_id if self.meta else None

    @property
    def rate_limit(self) -> Optional[RateLimit]:
        """The key's quota after this request; None for unmetered operations."""
        return self.meta.rate_limit if self.meta else None

    @classmethod
    def from_json(cls: Type[T], body: Mapping[str, Any], meta: Optional[ResponseMeta] = None) -> T:
        values: Dict[str, Any] = {}
        for item in dataclasses.fields(cls):
            if item.name in ("raw", "meta"):
                continue
            key = camel_case(item.name)
            if key in body:
                values[item.name] = cls._convert(item.name, body[key])
        return cls(raw=dict(body), meta=meta, **values)

    @classmethod
    def _convert(cls, name: str, value: Any) -> Any:
        if name == "data" and isinstance(value, list) and all(isinstance(entry, dict) and "url" in entry for entry in value):
            return [Image.from_json(entry) for entry in value]
        return value


@dataclass(frozen=True)
class ImageResult(Result):
    id: str = ""
    created: int = 0
    model: str = ""
    data: List[Image] = field(default_factory=list)

    @property
    def image(self) -> Image:
        """The first (usually the only) image."""
        return self.data[0]


@dataclass(frozen=True)
class GenerateResult(ImageResult):
    seed: int = 0
    steps: int = 0
    interpretation: Optional[str] = None


@dataclass(frozen=True)
class UpscaleResult(ImageResult):
    scale: int = 0
    native_scale: int = 0
    steps: List[str] = field(default_factory=list)


@dataclass(frozen=True)
class StyleTransferResult(ImageResult):
    style: str = ""


@dataclass(frozen=True)
class BackgroundRemoveResult(ImageResult):
    replacement: str = ""
    note: Optional[str] = None


@dataclass(frozen=True)
class PromptVariant:
    prompt: str
    negative_prompt: str
    subject: str
    style_terms: List[str]
    mood_terms: List[str]
    detail_terms: List[str]


@dataclass(frozen=True)
class PromptImproveResult(Result):
    id: str = ""
    created: int = 0
    model: str = ""
    prompt: str = ""
    negative_prompt: str = ""
    original: str = ""
    style: str = ""
    mood: str = ""
    seed: int = 0
    variants: List[PromptVariant] = field(default_factory=list)

    @classmethod
    def _convert(cls, name: str, value: Any) -> Any:
        if name == "variants":
            return [PromptVariant(**{snake_case(key): item for key, item in entry.items() if snake_case(key) in PromptVariant.__dataclass_fields__}) for entry in value]
        return value


@dataclass(frozen=True)
class Model(Result):
    id: str = ""
    object: str = "model"
    task: str = ""
    name: str = ""
    description: str = ""
    license: str = ""
    non_commercial: bool = False
    installed: bool = False
    disabled: bool = False
    install_command: Optional[str] = None
    attribution: str = ""
    size_bytes: int = 0


@dataclass(frozen=True)
class ModelList(Result):
    object: str = "list"
    data: List[Model] = field(default_factory=list)

    @classmethod
    def _convert(cls, name: str, value: Any) -> Any:
        if name == "data":
            return [Model.from_json(entry) for entry in value]
        return value


@dataclass(frozen=True)
class Liveness(Result):
    status: str = ""
    uptime_seconds: Optional[int] = None


@dataclass(frozen=True)
class Readiness(Result):
    status: str = ""
    ready: bool = False
    not_ready: List[Dict[str, Any]] = field(default_factory=list)
    """What is not ready: ``{"name", "detail"}`` per failed critical check."""
    checks: List[Dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class WebhookSecret(Result):
    """The key's Standard Webhooks signing secret."""

    object: str = "webhook_secret"
    secret: str = ""


TERMINAL_JOB_STATUSES = ("succeeded", "failed", "canceled")


@dataclass(frozen=True)
class JobProgress:
    fraction: Optional[float] = None
    """0 to 1."""
    step: Optional[int] = None
    steps: Optional[int] = None
    stage: Optional[str] = None


@dataclass(frozen=True)
class JobState(Result):
    """A job (``GET /api/v1/jobs/{id}``): a request running in the background."""

    id: str = ""
    object: str = "job"
    operation: str = ""
    status: str = "queued"
    """``queued``, ``running``, ``succeeded``, ``failed`` or ``canceled``."""
    progress: Optional[JobProgress] = None
    queue_position: Optional[int] = None
    result: Optional[Dict[str, Any]] = None
    """Exactly the synchronous response body, once succeeded."""
    error: Optional[Dict[str, Any]] = None
    """The synchronous error body and its HTTP ``status``, once failed or canceled."""
    created_at: Any = None
    started_at: Any = None
    finished_at: Any = None
    expires_at: Any = None

    @property
    def done(self) -> bool:
        return self.status in TERMINAL_JOB_STATUSES

    @classmethod
    def _convert(cls, name: str, value: Any) -> Any:
        if name == "progress" and isinstance(value, dict):
            return JobProgress(**{snake_case(key): item for key, item in value.items() if snake_case(key) in JobProgress.__dataclass_fields__})
        return value


@dataclass(frozen=True)
class JobList(Result):
    data: List[JobState] = field(default_factory=list)
    next_cursor: Optional[str] = None
    has_more: bool = False

    @classmethod
    def _convert(cls, name: str, value: Any) -> Any:
        if name == "data":
            return [JobState.from_json(entry) for entry in value]
        return value


@dataclass(frozen=True)
class JobEvent:
    """One event of ``GET /api/v1/jobs/{id}/events``; ``data`` parsed from JSON where it is JSON."""

    id: Optional[str]
    event: str
    data: Any


@dataclass(frozen=True)
class RawImage:
    """A finished job's image as bytes (``GET /api/v1/jobs/{id}/result``)."""

    content: bytes
    mime_type: str
    meta: ResponseMeta = field(repr=False, compare=False)


RESULT_TYPES: Dict[str, Type[Result]] = {
    "images.generate": GenerateResult,
    "tools.upscale": UpscaleResult,
    "tools.style_transfer": StyleTransferResult,
    "tools.remove_background": BackgroundRemoveResult,
    "prompts.improve": PromptImproveResult,
}
