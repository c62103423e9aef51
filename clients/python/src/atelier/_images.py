"""Images in and out: whatever the caller has (a path, bytes, a file object, a URL, a Pillow image)
as the ``imageUrl`` the API takes, and response images with helpers to get bytes or save them."""

from __future__ import annotations

import base64
import importlib
import io
import os
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Mapping, Protocol, Union, runtime_checkable



@runtime_checkable
class PillowImage(Protocol):
    """What the client needs of a ``PIL.Image.Image`` (duck-typed, so Pillow stays optional)."""

    mode: str

    def save(self, fp: Any, format: Any = ..., **params: Any) -> None: ...


@dataclass(frozen=True)
class Image:
    """An image in a response, as a ``data:`` URL with its media type and size."""

    url: str
    mime_type: str
    width: int
    height: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Image":
        return cls(url=data["url"], mime_type=data["mimeType"], width=data["width"], height=data["height"])

    def to_bytes(self) -> bytes:
        """The encoded image (PNG, JPEG or WebP, as ``mime_type`` says)."""
        header, sep, payload = self.url.partition(",")
        if not self.url.startswith("data:") or not sep:
            raise ValueError("This image is not a data URL; fetch its url instead.")
        if header.endswith(";base64"):
            return base64.b64decode(payload)
        return urllib.parse.unquote_to_bytes(payload)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> Path:
        """Writes the image to ``path`` and returns it."""
        target = Path(path)
        target.write_bytes(self.to_bytes())
        return target

    def to_pillow(self) -> Any:
        """The image as a ``PIL.Image.Image`` (needs Pillow: ``pip install atelier-client[pillow]``)."""
        try:
            # Imported by name so Pillow stays optional for users and for type checking.
            pil_image = importlib.import_module("PIL.Image")
        except ImportError as error:  # pragma: no cover - depends on the environment
            raise ImportError("to_pillow() needs Pillow: pip install 'atelier-client[pillow]'") from error
        picture = pil_image.open(io.BytesIO(self.to_bytes()))
        picture.load()
        return picture


ImageInput = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes], Image, PillowImage]
"""A path, an ``http(s)://`` or ``data:`` URL, bytes, a binary file object, a previous result image,
or a Pillow image."""

_SIGNATURES = (
    (b"\x89PNG", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF8", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
    (b"BM", 0, "image/bmp"),
    (b"II*\x00", 0, "image/tiff"),
    (b"MM\x00*", 0, "image/tiff"),
    (b"ftypavif", 4, "image/avif"),
)


def sniff_image_type(data: bytes) -> str:
    """The media type from the first bytes; unknown kinds are sent as PNG and refused by the server if not an image."""
    for signature, offset, mime in _SIGNATURES:
        if data[offset : offset + len(signature)] == signature:
            return mime
    return "image/png"


def bytes_to_data_url(data: bytes) -> str:
    return f"data:{sniff_image_type(data)};base64,{base64.b64encode(data).decode('ascii')}"


def to_image_url(image: ImageInput) -> str:
    """The ``imageUrl`` for any :data:`ImageInput`: URLs pass through, local content goes inline."""
    if isinstance(image, Image):
        return image.url
    if isinstance(image, str):
        lowered = image[:8].lower()
        if lowered.startswith(("http://", "https://", "data:")):
            return image
        if lowered.startswith("file:"):
            return bytes_to_data_url(Path(urllib.request.url2pathname(urllib.parse.urlparse(image).path)).read_bytes())
        return bytes_to_data_url(Path(image).read_bytes())
    if isinstance(image, os.PathLike):
        return bytes_to_data_url(Path(image).read_bytes())
    if isinstance(image, (bytes, bytearray, memoryview)):
        return bytes_to_data_url(bytes(image))
    if isinstance(image, PillowImage):
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return bytes_to_data_url(buffer.getvalue())
    if hasattr(image, "read"):
        data = image.read()
        if not isinstance(data, bytes):
            raise TypeError("A file object must be opened in binary mode ('rb').")
        return bytes_to_data_url(data)
    raise TypeError(
        "An image must be a path, an http(s) or data URL, bytes, a binary file object, a result image or a Pillow image."
    )
