"""A Server-Sent Events reader fed line by line (sync and async streams share it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional


@dataclass(frozen=True)
class ServerSentEvent:
    id: Optional[str]
    event: str
    data: str


class EventDecoder:
    """The WHATWG event-stream rules: ``id``/``event``/``data`` fields, a blank line dispatches."""

    def __init__(self) -> None:
        self._data: List[str] = []
        self._event = ""
        self.last_id: Optional[str] = None

    def feed(self, line: str) -> Optional[ServerSentEvent]:
        line = line.rstrip("\r\n")
        if line == "":
            event = ServerSentEvent(self.last_id, self._event or "message", "\n".join(self._data)) if self._data else None
            self._data, self._event = [], ""
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self.last_id = value
        return None
