"""Fixtures for a real Atelier started by the test runner (test/clients/python-client.test.ts).

It passes, in the environment: ATELIER_TEST_BASE_URL (the service), ATELIER_TEST_PROXY_URL (a fault
proxy in front of it, driven over HTTP), ATELIER_TEST_KEY, ATELIER_TEST_TINY_KEY and ATELIER_TEST_TINY_KEY_2
(keys whose hourly limit is 1), and ATELIER_TEST_PNG (a small PNG file).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Iterator, List

import httpx
import pytest

from atelier import Atelier


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.exit(f"{name} is not set: run this suite through `npx vitest run test/clients/python-client.test.ts`.", returncode=2)
    return value


class FaultProxy:
    """Drives the fault proxy: faults for the next requests, and what reached it."""

    def __init__(self, url: str) -> None:
        self.url = url

    def queue(self, *faults: Dict[str, Any]) -> None:
        httpx.post(f"{self.url}/__proxy/faults", json=list(faults)).raise_for_status()

    def seen(self) -> List[Dict[str, Any]]:
        seen: List[Dict[str, Any]] = httpx.get(f"{self.url}/__proxy/seen").json()
        return seen

    def posts(self) -> List[Dict[str, Any]]:
        """The POSTs that reached the proxy (a server with jobs adds the GETs of a followed job)."""
        return [request for request in self.seen() if request["method"] == "POST"]

    def reset(self) -> None:
        httpx.post(f"{self.url}/__proxy/reset").raise_for_status()


@pytest.fixture(scope="session")
def base_url() -> str:
    return _env("ATELIER_TEST_BASE_URL")


@pytest.fixture(scope="session")
def api_key() -> str:
    return _env("ATELIER_TEST_KEY")


@pytest.fixture(scope="session")
def tiny_key() -> str:
    return _env("ATELIER_TEST_TINY_KEY")


@pytest.fixture(scope="session")
def second_tiny_key() -> str:
    """Another key with a limit of 1, so the async suite does not depend on what the sync one spent."""
    return _env("ATELIER_TEST_TINY_KEY_2")


@pytest.fixture(scope="session")
def png_path() -> Path:
    return Path(_env("ATELIER_TEST_PNG"))


@pytest.fixture(scope="session")
def png(png_path: Path) -> bytes:
    return png_path.read_bytes()


@pytest.fixture()
def proxy() -> Iterator[FaultProxy]:
    fault_proxy = FaultProxy(_env("ATELIER_TEST_PROXY_URL"))
    fault_proxy.reset()
    yield fault_proxy
    fault_proxy.reset()


@pytest.fixture()
def client(base_url: str, api_key: str) -> Iterator[Atelier]:
    with Atelier(api_key=api_key, base_url=base_url) as atelier:
        yield atelier
