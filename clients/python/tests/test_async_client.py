"""The asynchronous client: the same operations and behaviour, awaited; cancellation by the caller."""

from __future__ import annotations

import asyncio
import base64
import time
from pathlib import Path
from typing import Any, Coroutine

import pytest

from atelier import APIConnectionError, AsyncAtelier, AuthenticationError, BadRequestError, RateLimitError

from conftest import FaultProxy


def run(coroutine: Coroutine[Any, Any, None]) -> None:
    asyncio.run(coroutine)


def test_every_operation(base_url: str, api_key: str, png: bytes, png_path: Path) -> None:
    async def main() -> None:
        async with AsyncAtelier(api_key=api_key, base_url=base_url) as client:
            generated, upscaled, styled, cutout, improved, models = await asyncio.gather(
                client.images.generate("an owl", seed=1),
                client.tools.upscale(png_path, scale=2),
                client.tools.style_transfer(png, style="candy-lite"),
                client.tools.remove_background(png, replacement="white", model="portrait-selfie"),
                client.prompts.improve("a cat on a roof"),
                client.models.list(),
            )
        assert generated.model == "cvae-quickdraw" and generated.image.to_bytes().startswith(b"\x89PNG")
        assert (upscaled.image.width, upscaled.image.height) == (48, 32)
        assert styled.style == "candy-lite"
        assert cutout.replacement == "color:#ffffff"
        assert improved.original == "a cat on a roof"
        assert any(model.id == "lanczos" and model.installed for model in models.data)
        assert upscaled.rate_limit is not None and upscaled.rate_limit.limit == 100

    run(main())


def test_local_images_go_as_a_multipart_form(base_url: str, api_key: str, png: bytes, png_path: Path, proxy: FaultProxy) -> None:
    async def main() -> None:
        async with AsyncAtelier(api_key=api_key, base_url=base_url) as direct:
            reference = await direct.tools.upscale("data:image/png;base64," + base64.b64encode(png).decode("ascii"), scale=3, model="lanczos")
        async with AsyncAtelier(api_key=api_key, base_url=proxy.url) as client:
            upscaled = await client.tools.upscale(png_path, scale=3, model="lanczos")
            replaced = await client.tools.remove_background(png, replacement=png_path, model="portrait-selfie")
        assert upscaled.image.url == reference.image.url
        assert replaced.replacement == "image"
        assert [request["headers"]["content-type"].split(";")[0] for request in proxy.posts()] == ["multipart/form-data"] * 2

    run(main())


def test_errors(base_url: str, api_key: str, png: bytes) -> None:
    async def main() -> None:
        async with AsyncAtelier(api_key="atl_wrong", base_url=base_url) as wrong:
            with pytest.raises(AuthenticationError):
                await wrong.prompts.improve("x")
        async with AsyncAtelier(api_key=api_key, base_url=base_url) as client:
            with pytest.raises(BadRequestError) as caught:
                await client.tools.upscale(png, scale=9)
            assert "scale" in [issue.path for issue in caught.value.issues]

    run(main())


def test_retries_through_faults(api_key: str, png: bytes, proxy: FaultProxy) -> None:
    async def main() -> None:
        async with AsyncAtelier(api_key=api_key, base_url=proxy.url) as client:
            proxy.queue({"kind": "status", "status": 503}, {"kind": "drop"})
            assert (await client.tools.upscale(png)).image.width == 48
            seen = proxy.posts()
            assert len(seen) == 3 and len({request["headers"]["idempotency-key"] for request in seen}) == 1
            proxy.reset()
            proxy.queue({"kind": "status", "status": 429, "headers": {"retry-after": "1"}, "body": {"code": "RATE_LIMITED", "message": "Wait.", "requestId": "r"}})
            started = time.monotonic()
            assert (await client.prompts.improve("a heron")).original == "a heron"
            assert time.monotonic() - started >= 1
        async with AsyncAtelier(api_key=api_key, base_url=proxy.url, max_retries=0) as once:
            proxy.queue({"kind": "drop"})
            with pytest.raises(APIConnectionError):
                await once.models.list()

    run(main())


def test_rate_limit_error(second_tiny_key: str, base_url: str) -> None:
    async def main() -> None:
        async with AsyncAtelier(api_key=second_tiny_key, base_url=base_url) as client:
            first = await client.prompts.improve("a fox")
            assert first.rate_limit is not None and first.rate_limit.remaining == 0
            with pytest.raises(RateLimitError) as caught:
                await client.prompts.improve("a fox")
            assert caught.value.status == 429 and caught.value.reset_at is not None

    run(main())


def test_cancelling_the_task_stops_the_call(api_key: str, proxy: FaultProxy) -> None:
    async def main() -> None:
        proxy.queue({"kind": "delay", "ms": 3000})
        async with AsyncAtelier(api_key=api_key, base_url=proxy.url) as client:
            started = time.monotonic()
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(client.models.list(), timeout=0.3)
            assert time.monotonic() - started < 1.5

    run(main())
