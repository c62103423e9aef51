"""Every REST operation and the client method that calls it: the table the clients take their paths
from, and the one the coverage test compares with the served OpenAPI document (paths under ``/api``)."""

from __future__ import annotations

from typing import Tuple

OPERATIONS: Tuple[Tuple[str, str, str], ...] = (
    ("POST", "/v1/generate", "images.generate"),
    ("POST", "/v1/tools/upscale", "tools.upscale"),
    ("POST", "/v1/tools/style-transfer", "tools.style_transfer"),
    ("POST", "/v1/tools/background-remove", "tools.remove_background"),
    ("POST", "/v1/prompt/improve", "prompts.improve"),
    ("GET", "/v1/models", "models.list"),
    # Probes at the server's root, outside /api (see ROOT_PATHS).
    ("GET", "/healthz", "health.live"),
    ("GET", "/readyz", "health.ready"),
    # Jobs (issue 16): need a server that serves them.
    ("GET", "/v1/jobs", "jobs.list"),
    ("GET", "/v1/jobs/{id}", "jobs.get"),
    ("DELETE", "/v1/jobs/{id}", "jobs.cancel"),
    ("GET", "/v1/jobs/{id}/events", "jobs.events"),
    ("GET", "/v1/jobs/{id}/result", "jobs.result"),
    ("GET", "/v1/webhooks/secret", "webhooks.secret"),
    ("POST", "/v1/webhooks/secret", "webhooks.rotate_secret"),
)


def path_of(method_name: str) -> str:
    for _, path, name in OPERATIONS:
        if name == method_name:
            return path
    raise KeyError(method_name)


ROOT_PATHS = frozenset({"/healthz", "/readyz"})
"""Paths served at the server's root rather than under ``/api``."""
