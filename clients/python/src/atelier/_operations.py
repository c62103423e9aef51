"""Every REST operation and the client method that calls it: the table the clients take their paths
from, and the one the coverage test compares with the served OpenAPI document (full paths on the server,
as in the document)."""

from __future__ import annotations

from typing import Tuple

OPERATIONS: Tuple[Tuple[str, str, str], ...] = (
    ("POST", "/api/v1/generate", "images.generate"),
    ("POST", "/api/v1/tools/upscale", "tools.upscale"),
    ("POST", "/api/v1/tools/style-transfer", "tools.style_transfer"),
    ("POST", "/api/v1/tools/background-remove", "tools.remove_background"),
    ("POST", "/api/v1/prompt/improve", "prompts.improve"),
    ("GET", "/api/v1/models", "models.list"),
    # Probes at the server's root, outside /api.
    ("GET", "/healthz", "health.live"),
    ("GET", "/readyz", "health.ready"),
    # Jobs: need a server that serves them.
    ("GET", "/api/v1/jobs", "jobs.list"),
    ("GET", "/api/v1/jobs/{id}", "jobs.get"),
    ("DELETE", "/api/v1/jobs/{id}", "jobs.cancel"),
    ("GET", "/api/v1/jobs/{id}/events", "jobs.events"),
    ("GET", "/api/v1/jobs/{id}/result", "jobs.result"),
    ("GET", "/api/v1/webhooks/secret", "webhooks.secret"),
    ("POST", "/api/v1/webhooks/secret", "webhooks.rotate_secret"),
)


def path_of(method_name: str) -> str:
    for _, path, name in OPERATIONS:
        if name == method_name:
            return path
    raise KeyError(method_name)
