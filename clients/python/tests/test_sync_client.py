"""The synchronous client against a real Atelier: every operation, input kinds, results, errors."""

from __future__ import annotations

import base64
import io
import time
from pathlib import Path
from typing import List

import pytest

from atelier import (
    APIConnectionError,
    APITimeoutError,
    Atelier,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    GenerateResult,
    Image,
    ImageInput,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServiceUnavailableError,
    UpscaleResult,
)

from conftest import FaultProxy

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_generate_draws_a_doodle_with_quota_and_request_id(client: Atelier) -> None:
    result = client.images.generate("an owl", seed=7, width=128, height=96)
    assert isinstance(result, GenerateResult)
    assert (result.model, result.seed, result.steps) == ("cvae-quickdraw", 7, 1)
    assert result.image.mime_type == "image/png" and (result.image.width, result.image.height) == (128, 96)
    assert result.image.to_bytes().startswith(PNG_SIGNATURE)
    assert result.request_id == result.id
    assert result.rate_limit is not None and result.rate_limit.limit == 100 and result.rate_limit.remaining < 100
    assert result.raw["data"][0]["url"] == result.image.url


def test_upscale_takes_every_kind_of_input(client: Atelier, png: bytes, png_path: Path) -> None:
    data_url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    inputs: List[ImageInput] = [str(png_path), png_path, png, bytearray(png), memoryview(png), io.BytesIO(png), png_path.as_uri(), data_url]
    for source in inputs:
        result = client.tools.upscale(source, scale=2, model="lanczos")
        assert (result.model, result.scale, result.native_scale) == ("lanczos", 2, 2)
        assert (result.image.width, result.image.height) == (48, 32)
    again = client.tools.upscale(client.tools.upscale(png).image, scale=2)
    assert (again.image.width, again.image.height) == (96, 64)


def _content_types(proxy: FaultProxy) -> List[str]:
    return [request["headers"]["content-type"].split(";")[0] for request in proxy.posts()]


def test_local_images_go_as_a_multipart_form_and_urls_as_json(client: Atelier, api_key: str, png: bytes, png_path: Path, proxy: FaultProxy) -> None:
    data_url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    reference = client.tools.upscale(data_url, scale=3, model="lanczos")
    styled = client.tools.style_transfer(data_url, style="candy-lite", strength=0.5, preserve_colors=True)
    local: List[ImageInput] = [str(png_path), png_path, png, io.BytesIO(png), png_path.as_uri()]
    with Atelier(api_key=api_key, base_url=proxy.url) as observed:
        for source in [*local, data_url, reference.image]:
            result = observed.tools.upscale(source, scale=3, model="lanczos")
            if source is not reference.image:
                assert result.image.url == reference.image.url
        # What the server read from the form is the JSON request, numbers and flags included.
        assert observed.tools.style_transfer(png, style="candy-lite", strength=0.5, preserve_colors=True).image.url == styled.image.url
    assert _content_types(proxy) == ["multipart/form-data"] * len(local) + ["application/json"] * 2 + ["multipart/form-data"]


def test_remove_background_takes_a_replacement_image(client: Atelier, api_key: str, png: bytes, png_path: Path, proxy: FaultProxy) -> None:
    data_url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    reference = client.tools.remove_background(data_url, replacement=data_url, model="portrait-selfie")
    assert reference.replacement == "image"
    with Atelier(api_key=api_key, base_url=proxy.url) as observed:
        as_files = observed.tools.remove_background(png, replacement=png_path, model="portrait-selfie")
        beside_url = observed.tools.remove_background(data_url, replacement=png, model="portrait-selfie")
        result_image = observed.tools.remove_background(png_path, replacement=Image(url=data_url, mime_type="image/png", width=24, height=16), model="portrait-selfie")
    for result in (as_files, beside_url, result_image):
        assert result.image.url == reference.image.url
    assert _content_types(proxy) == ["multipart/form-data", "application/json", "multipart/form-data"]


def test_jobs_send_a_local_image_as_a_form(api_key: str, png: bytes, proxy: FaultProxy) -> None:
    with Atelier(api_key=api_key, base_url=proxy.url) as observed:
        job = observed.jobs.create("tools.upscale", image=png, scale=2, model="lanczos")
        result = job.wait()
    assert isinstance(result, UpscaleResult) and (result.image.width, result.image.height) == (48, 32)
    assert _content_types(proxy) == ["multipart/form-data"]


def test_file_object_and_save(client: Atelier, png_path: Path, tmp_path: Path) -> None:
    with png_path.open("rb") as handle:
        result = client.tools.upscale(handle, scale=3, output_format="webp")
    saved = result.image.save(tmp_path / "big.webp")
    assert saved.read_bytes()[8:12] == b"WEBP"
    assert result.image.mime_type == "image/webp"


def test_pillow_images_in_and_out(client: Atelier) -> None:
    pil = pytest.importorskip("PIL.Image")
    picture = pil.new("RGB", (20, 10), (200, 40, 40))
    result = client.tools.upscale(picture, scale=2)
    out = result.image.to_pillow()
    assert out.size == (40, 20)
    assert out.getpixel((20, 10))[:3] == (200, 40, 40)


def test_style_transfer(client: Atelier, png: bytes) -> None:
    result = client.tools.style_transfer(png, style="candy-lite", strength=0.5)
    assert result.style == "candy-lite"
    assert (result.image.width, result.image.height) == (24, 16)


def test_remove_background(client: Atelier, png: bytes) -> None:
    result = client.tools.remove_background(png, replacement="white", model="portrait-selfie")
    assert (result.model, result.replacement) == ("portrait-selfie", "color:#ffffff")
    assert result.image.to_bytes().startswith(PNG_SIGNATURE)


def test_prompt_improve(client: Atelier) -> None:
    result = client.prompts.improve("a cat on a roof", variants=2, seed=3)
    assert (result.model, result.original, result.seed) == ("prompt-builtin", "a cat on a roof", 3)
    assert len(result.prompt) > len("a cat on a roof")
    assert len(result.variants) == 2 and result.variants[0].prompt == result.prompt
    assert isinstance(result.variants[0].style_terms, list)


def test_models_list_needs_no_key(base_url: str) -> None:
    with Atelier(api_key="", base_url=base_url) as anonymous:
        models = anonymous.models.list()
    installed = {model.id for model in models.data if model.installed}
    assert {"lanczos", "cvae-quickdraw", "candy-lite"} <= installed
    assert models.rate_limit is None and models.request_id


def test_health_probes(client: Atelier) -> None:
    assert client.health.live().status == "ok"
    ready = client.health.ready()
    assert ready.status in ("ready", "not ready") and ready.ready == (ready.status == "ready")
    assert ready.ready, ready.not_ready
    assert any(check["name"] == "workers" for check in ready.checks)


def test_environment_fallbacks(monkeypatch: pytest.MonkeyPatch, base_url: str, api_key: str) -> None:
    monkeypatch.setenv("ATELIER_API_KEY", api_key)
    monkeypatch.setenv("ATELIER_BASE_URL", base_url)
    with Atelier() as from_env:
        assert from_env.prompts.improve("a boat").original == "a boat"


def test_authentication_error(base_url: str) -> None:
    with Atelier(api_key="atl_wrong", base_url=base_url) as wrong, pytest.raises(AuthenticationError) as caught:
        wrong.prompts.improve("x")
    assert (caught.value.status, caught.value.code) == (401, "UNAUTHORIZED")
    assert caught.value.request_id and len(caught.value.message) > 10


def test_a_large_upload_refused_unread_gets_its_answer(base_url: str, client: Atelier) -> None:
    # httpx sends the whole body before it reads the answer: the server must take the rest of an
    # upload it refuses before closing, or httpx reports a broken pipe instead of the refusal.
    large = PNG_SIGNATURE + bytes(20 * 2**20)
    with Atelier(api_key="atl_wrong", base_url=base_url) as wrong, pytest.raises(AuthenticationError) as caught:
        wrong.tools.upscale(large, scale=2)
    assert (caught.value.status, caught.value.code) == (401, "UNAUTHORIZED")
    # Bytes go as a multipart form: 31 MiB is refused as the file passes the 25 MiB image limit, the
    # rest of the upload taken and thrown away; 41 MiB is over the 40 MiB body limit from its length.
    with pytest.raises(BadRequestError) as too_large:
        client.tools.upscale(PNG_SIGNATURE + bytes(31 * 2**20), scale=2)
    assert (too_large.value.status, too_large.value.code) == (413, "IMAGE_TOO_LARGE")
    with pytest.raises(BadRequestError) as over_body:
        client.tools.upscale(PNG_SIGNATURE + bytes(41 * 2**20), scale=2)
    assert (over_body.value.status, over_body.value.code) == (413, "PAYLOAD_TOO_LARGE")
    assert client.prompts.improve("a lighthouse").original == "a lighthouse"


def test_bad_request_names_the_field(client: Atelier, png: bytes) -> None:
    with pytest.raises(BadRequestError) as caught:
        client.tools.upscale(png, scale=9)
    assert (caught.value.status, caught.value.code) == (400, "INVALID_INPUT")
    assert "scale" in [issue.path for issue in caught.value.issues]


def test_not_found(client: Atelier) -> None:
    with pytest.raises(NotFoundError) as caught:
        client.jobs.get("job_does_not_exist")
    assert (caught.value.status, caught.value.code) == (404, "NOT_FOUND")


def test_model_not_installed_is_not_retried(base_url: str, api_key: str, proxy: FaultProxy) -> None:
    with Atelier(api_key=api_key, base_url=base_url) as direct:
        missing = next(model.id for model in direct.models.list().data if model.task == "generate" and not model.installed)
    with Atelier(api_key=api_key, base_url=proxy.url) as client, pytest.raises(ServiceUnavailableError) as caught:
        client.images.generate("an owl", model=missing)
    assert (caught.value.status, caught.value.code) == (503, "MODEL_NOT_INSTALLED")
    assert len(proxy.posts()) == 1


def test_spent_quota_raises_rate_limit_error_with_reset_time(tiny_key: str, proxy: FaultProxy) -> None:
    with Atelier(api_key=tiny_key, base_url=proxy.url) as client:
        first = client.prompts.improve("a fox")
        assert first.rate_limit is not None and (first.rate_limit.limit, first.rate_limit.remaining) == (1, 0)
        started = time.monotonic()
        with pytest.raises(RateLimitError) as caught:
            client.prompts.improve("a fox")
    assert time.monotonic() - started < 2
    error = caught.value
    assert (error.status, error.code) == (429, "RATE_LIMITED")
    assert error.retry_after is not None and error.retry_after > 60
    assert error.reset_at is not None and error.reset_at.timestamp() > time.time() + 60
    assert len(proxy.posts()) == 2


def test_other_statuses_map_to_their_errors(api_key: str, proxy: FaultProxy) -> None:
    with Atelier(api_key=api_key, base_url=proxy.url, max_retries=0) as client:
        proxy.queue({"kind": "status", "status": 403, "body": {"code": "FORBIDDEN", "message": "Not this key.", "requestId": "r403"}})
        with pytest.raises(PermissionDeniedError):
            client.models.list()
        proxy.queue({"kind": "status", "status": 409, "body": {"code": "CONFLICT", "message": "In flight.", "requestId": "r409"}})
        with pytest.raises(ConflictError) as conflict:
            client.models.list()
        assert conflict.value.request_id == "r409"
        proxy.queue({"kind": "status", "status": 500, "headers": {"content-type": "text/plain"}, "body": "boom"})
        with pytest.raises(InternalServerError) as internal:
            client.models.list()
        assert (internal.value.status, internal.value.code, internal.value.request_id) == (500, "HTTP_500", "proxy-fault")


def test_retry_after_is_honoured_with_one_idempotency_key(api_key: str, proxy: FaultProxy) -> None:
    proxy.queue({"kind": "status", "status": 429, "headers": {"retry-after": "1"}, "body": {"code": "RATE_LIMITED", "message": "Slow down.", "requestId": "r"}})
    started = time.monotonic()
    with Atelier(api_key=api_key, base_url=proxy.url) as client:
        assert client.prompts.improve("a heron").original == "a heron"
    assert time.monotonic() - started >= 1
    keys = [request["headers"].get("idempotency-key") for request in proxy.posts()]
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]


def test_503_then_success_and_drops_then_success(api_key: str, png: bytes, proxy: FaultProxy) -> None:
    with Atelier(api_key=api_key, base_url=proxy.url) as client:
        proxy.queue({"kind": "status", "status": 503})
        assert client.tools.upscale(png).image.width == 48
        assert len(proxy.posts()) == 2
        proxy.reset()
        proxy.queue({"kind": "drop"}, {"kind": "drop"})
        assert client.tools.upscale(png, idempotency_key="py-1").image.width == 48
        assert [request["headers"].get("idempotency-key") for request in proxy.posts()] == ["py-1"] * 3


def test_gives_up_after_max_retries(api_key: str, proxy: FaultProxy) -> None:
    proxy.queue({"kind": "drop"}, {"kind": "drop"}, {"kind": "drop"})
    with Atelier(api_key=api_key, base_url=proxy.url, max_retries=1) as client, pytest.raises(APIConnectionError) as caught:
        client.models.list()
    assert caught.value.status is None
    assert len(proxy.seen()) == 2


def test_timeouts(api_key: str, proxy: FaultProxy) -> None:
    # The answer is held far longer than the timeout, so giving up well before it shows the timeout
    # fired, however busy the machine.
    proxy.queue({"kind": "delay", "ms": 10000})
    started = time.monotonic()
    with Atelier(api_key=api_key, base_url=proxy.url, timeout=0.3, max_retries=0) as client, pytest.raises(APITimeoutError):
        client.models.list()
    assert time.monotonic() - started < 6
    proxy.reset()
    # The retry is a real call to the service and must answer within the timeout: on a machine busy
    # with other test files that took more than 0.6 s, so the timeout leaves it room, and the held
    # first answer stays well beyond it.
    proxy.queue({"kind": "delay", "ms": 6000})
    with Atelier(api_key=api_key, base_url=proxy.url, timeout=2.0, max_retries=1) as client:
        assert client.models.list().object == "list"
    assert len(proxy.seen()) == 2
    proxy.reset()
    proxy.queue({"kind": "delay", "ms": 1500})
    with Atelier(api_key=api_key, base_url=proxy.url) as client, pytest.raises(APITimeoutError):
        client.models.list(timeout=0.2, max_retries=0)
