"""Images in and out: whatever the caller has (a path, bytes, a file object, a URL, a Pillow image)
as a request carries it (a URL in the JSON body, or local content as a file of a multipart form),
and response images with helpers to get bytes or save them."""

from __future__ import annotations

import base64
import importlib
import io
import json
import os
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Dict, Mapping, Optional, Protocol, Tuple, Union, runtime_checkable



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


ReplacementImage = Union["os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes], Image, PillowImage]
"""An image for ``remove_background``'s ``replacement``: an :data:`ImageInput` but a string (a string
there is text: a colour, a URL, ``blur``, a description)."""

FilePart = Tuple[str, bytes, str]
"""A multipart form's file part as httpx takes it: file name, bytes, media type."""


def _local_file(image: ImageInput) -> Optional[Tuple[str, bytes]]:
    """Local content as (file name, bytes); None for an image the API takes as a URL."""
    if isinstance(image, Image):
        return None
    if isinstance(image, str):
        lowered = image[:8].lower()
        if lowered.startswith(("http://", "https://", "data:")):
            return None
        path = Path(urllib.request.url2pathname(urllib.parse.urlparse(image).path)) if lowered.startswith("file:") else Path(image)
        return path.name, path.read_bytes()
    if isinstance(image, os.PathLike):
        path = Path(image)
        return path.name, path.read_bytes()
    if isinstance(image, (bytes, bytearray, memoryview)):
        return "image", bytes(image)
    if isinstance(image, PillowImage):
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return "image.png", buffer.getvalue()
    if hasattr(image, "read"):
        data = image.read()
        if not isinstance(data, bytes):
            raise TypeError("A file object must be opened in binary mode ('rb').")
        name = getattr(image, "name", None)
        return (Path(name).name if isinstance(name, str) else "image"), data
    raise TypeError(
        "An image must be a path, an http(s) or data URL, bytes, a binary file object, a result image or a Pillow image."
    )


def to_image_url(image: ImageInput) -> str:
    """The ``imageUrl`` for any :data:`ImageInput`: URLs pass through, local content goes inline as a data URL."""
    local = _local_file(image)
    if local is not None:
        return bytes_to_data_url(local[1])
    return image.url if isinstance(image, Image) else str(image)


def to_image_part(image: ImageInput) -> Union[str, FilePart]:
    """A URL for the JSON body, or local content as a file part (sent as it is, without base64)."""
    local = _local_file(image)
    if local is None:
        return to_image_url(image)
    name, data = local
    return name, data, sniff_image_type(data)


def _file_of_data_url(url: str) -> Optional[FilePart]:
    """A base64 data URL as the file it holds; None for any other URL."""
    header, sep, payload = url.partition(",")
    if not url[:5].lower() == "data:" or not sep or not header.lower().endswith(";base64"):
        return None
    return "replacement", base64.b64decode(payload), header[5:].split(";")[0]


def image_request(
    body: Dict[str, Any], image: ImageInput, replacement: Optional[Union[str, ReplacementImage]] = None
) -> Tuple[Dict[str, Any], Optional[Dict[str, FilePart]]]:
    """The JSON body with ``imageUrl``, or, for a local image, a multipart form: the fields and the files.

    The form carries the file as it is, which spares base64 (a third more bytes, and the encoding on
    both sides). ``replacement`` text is a field like the others; an image there is a second file of
    the form, or a data URL beside an image URL (the form has no ``imageUrl``)."""
    if isinstance(replacement, str):
        body["replacement"] = replacement
    source = to_image_part(image)
    backdrop = None if replacement is None or isinstance(replacement, str) else to_image_part(replacement)
    if isinstance(source, str):
        body["imageUrl"] = source
        if backdrop is not None:
            body["replacement"] = backdrop if isinstance(backdrop, str) else bytes_to_data_url(backdrop[1])
        return body, None
    files: Dict[str, FilePart] = {"image": source}
    if isinstance(backdrop, str):
        # A data URL is longer than a form field may be: its bytes go as a file.
        as_file = _file_of_data_url(backdrop)
        if as_file is None:
            body["replacement"] = backdrop
        else:
            files["replacement"] = as_file
    elif backdrop is not None:
        files["replacement"] = backdrop
    return body, files


def form_fields(body: Mapping[str, Any]) -> Dict[str, str]:
    """A body's fields as a form's text: strings as they are, anything else as its JSON (``true``, ``0.8``)."""
    return {name: value if isinstance(value, str) else json.dumps(value) for name, value in body.items()}
