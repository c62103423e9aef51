"""Every operation in the served OpenAPI document has a method in both Python clients, taking every
request field as a keyword and exposing every response field: a test that fails when the client
falls behind the document."""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any, Dict, List, Tuple

import httpx

from atelier import OPERATIONS, AsyncAtelier, Atelier
from atelier._models import RESULT_TYPES, Liveness, ModelList, Readiness, Result, WebhookSecret, snake_case


def _document(base_url: str) -> Dict[str, Any]:
    document: Dict[str, Any] = httpx.get(f"{base_url}/api/v1/openapi.json").json()
    return document


def _served_operations(document: Dict[str, Any]) -> List[Tuple[str, str, Dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]


def _normalise(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


def _method(client: object, dotted: str) -> Any:
    target: Any = client
    for part in dotted.split("."):
        target = getattr(target, part)
    return target


def test_every_served_operation_has_a_method_in_both_clients(base_url: str) -> None:
    table = {(method, _normalise(path)): name for method, path, name in OPERATIONS}
    sync, asynchronous = Atelier(base_url=base_url), AsyncAtelier(base_url=base_url)
    served = _served_operations(_document(base_url))
    assert len(served) >= 6
    for method, path, _ in served:
        name = table.get((method, _normalise(path)))
        assert name, f"{method} {path} is served but has no client method"
        assert callable(_method(sync, name)), f"Atelier.{name}"
        assert callable(_method(asynchronous, name)), f"AsyncAtelier.{name}"
        assert inspect.iscoroutinefunction(_method(asynchronous, name)) or inspect.isasyncgenfunction(_method(asynchronous, name)), f"AsyncAtelier.{name} is not async"


def test_request_fields_are_keywords_and_response_fields_are_attributes(base_url: str) -> None:
    table = {(method, path): name for method, path, name in OPERATIONS}
    for method, path, operation in _served_operations(_document(base_url)):
        name = table.get((method, path))
        if name is None or name.startswith("jobs."):
            continue
        body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
        for client in (Atelier(base_url=base_url), AsyncAtelier(base_url=base_url)):
            parameters = inspect.signature(_method(client, name)).parameters
            for field in body.get("properties", {}):
                expected = "image" if field == "imageUrl" else snake_case(field)
                assert expected in parameters, f"{type(client).__name__}.{name} lacks the request field {field} ({expected})"
        response = operation["responses"]["200"]["content"]["application/json"]["schema"]
        others: Dict[str, type] = {"models.list": ModelList, "health.live": Liveness, "health.ready": Readiness, "webhooks.secret": WebhookSecret, "webhooks.rotate_secret": WebhookSecret}
        kind: type = RESULT_TYPES[name] if name in RESULT_TYPES else others.get(name, Result)
        attributes = {item.name for item in dataclasses.fields(kind)}
        for field in response.get("required", []):
            assert snake_case(field) in attributes, f"{kind.__name__} lacks the response field {field}"
