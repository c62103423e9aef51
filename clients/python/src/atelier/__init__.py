"""Python client for Atelier, the self-hostable image-AI service.

    from atelier import Atelier
    client = Atelier()  # key and address from ATELIER_API_KEY and ATELIER_BASE_URL
    result = client.tools.upscale("photo.jpg", scale=4)
    result.image.save("big.png")
"""

from ._async_client import AsyncAtelier, AsyncJob, AsyncJobs
from ._client import Atelier, Job, Jobs
from ._core import DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT
from ._errors import (
    APIConnectionError,
    APITimeoutError,
    AtelierError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    FieldIssue,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServiceUnavailableError,
)
from ._images import Image, ImageInput, ReplacementImage, to_image_url
from ._models import (
    BackgroundRemoveResult,
    GenerateResult,
    ImageResult,
    JobEvent,
    JobList,
    JobProgress,
    JobState,
    Liveness,
    Model,
    ModelList,
    PromptImproveResult,
    PromptVariant,
    RawImage,
    Readiness,
    ResponseMeta,
    Result,
    StyleTransferResult,
    UpscaleResult,
    WebhookSecret,
)
from ._operations import OPERATIONS
from ._rate_limit import RateLimit
from ._version import __version__

__all__ = [
    "APIConnectionError",
    "APITimeoutError",
    "AsyncAtelier",
    "AsyncJob",
    "AsyncJobs",
    "Atelier",
    "AtelierError",
    "AuthenticationError",
    "BackgroundRemoveResult",
    "BadRequestError",
    "ConflictError",
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "FieldIssue",
    "GenerateResult",
    "Image",
    "ImageInput",
    "ImageResult",
    "InternalServerError",
    "Job",
    "JobEvent",
    "JobList",
    "JobProgress",
    "JobState",
    "Jobs",
    "Liveness",
    "Model",
    "ModelList",
    "NotFoundError",
    "OPERATIONS",
    "PermissionDeniedError",
    "PromptImproveResult",
    "PromptVariant",
    "RateLimit",
    "RateLimitError",
    "RawImage",
    "Readiness",
    "ReplacementImage",
    "ResponseMeta",
    "Result",
    "ServiceUnavailableError",
    "StyleTransferResult",
    "UpscaleResult",
    "WebhookSecret",
    "__version__",
    "to_image_url",
]
