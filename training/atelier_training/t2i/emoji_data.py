"""The text-to-image training set: Noto Color Emoji rendered at 64x64 on white, with CLDR captions.

Sources (Debian packages, installed with apt-get; their versions and file hashes go in the manifest):
  fonts-noto-color-emoji  /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf  (fonts: OFL-1.1, images: Apache-2.0)
  unicode-cldr-core       common/annotations/en.xml and common/annotationsDerived/en.xml  (Unicode-DFS-2016)

Every annotated sequence the font draws as one glyph becomes one image: the glyph is drawn in colour
at the font's bitmap size, cut to its alpha box, centred on a square with a margin, composited on white
and reduced to 64x64 (Lanczos). Its words: the CLDR short name (`type="tts"`), the keywords, and colour
words measured from its opaque pixels. Skin-tone variants share their base emoji's class (the check's
classifier cannot tell tones apart at this size, nor is it asked to).

A held-out set of emoji (`HELDOUT_COUNT`, chosen by seed among base emoji) is evaluated on its short
name as the caption; training never shows those emoji with their full name, only with their keywords
and colours (captions.py), so the name is a caption the model has not seen.

  /usr/bin/python3 -m atelier_training.t2i.emoji_data            # writes cache/t2i/emoji-64.npz, data/t2i-*.json
"""

from __future__ import annotations

import argparse
import colorsys
import hashlib
import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import PIL
from PIL import Image, ImageDraw, ImageFont

FONT = Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")
CLDR = Path("/usr/share/unicode/cldr/common")
ANNOTATIONS = [CLDR / "annotations/en.xml", CLDR / "annotationsDerived/en.xml"]
SOURCES = [
    {"package": "fonts-noto-color-emoji", "files": [str(FONT)], "licence": "OFL-1.1 (font), Apache-2.0 (images), per debian/copyright"},
    {"package": "unicode-cldr-core", "files": [str(path) for path in ANNOTATIONS], "licence": "Unicode-DFS-2016"},
]
# The font's only bitmap strike; a glyph is drawn at this size and then reduced.
FONT_SIZE = 109
SIZE = 64
# A single glyph advances about one em; a sequence the font cannot join draws as several glyphs.
MAX_SINGLE_ADVANCE = 1.5 * FONT_SIZE
MARGIN = 0.06
SKIN_TONES = {chr(cp) for cp in range(0x1F3FB, 0x1F400)}
VARIATION_SELECTOR = "\ufe0f"
HELDOUT_COUNT = 50
SEED = 20261128

TRAINING_DIR = Path(__file__).resolve().parents[2]
DEFAULT_OUT = TRAINING_DIR / "cache" / "t2i" / "emoji-64.npz"
MANIFEST = TRAINING_DIR / "data" / "t2i-emoji-manifest.json"
HELDOUT = TRAINING_DIR / "data" / "t2i-heldout-captions.json"


@dataclass
class Annotation:
    sequence: str
    name: str
    keywords: list[str]


def read_annotations(files: list[Path]) -> dict[str, Annotation]:
    """Short name and keywords per sequence; a later file adds sequences (the derived file: tones, flags, keycaps)."""
    found: dict[str, Annotation] = {}
    for file in files:
        for node in ElementTree.parse(file).getroot().iter("annotation"):
            sequence = node.get("cp") or ""
            text = (node.text or "").strip()
            if not sequence or not text:
                continue
            entry = found.setdefault(sequence, Annotation(sequence, "", []))
            if node.get("type") == "tts":
                entry.name = text
            else:
                entry.keywords = [word.strip() for word in text.split("|") if word.strip()]
    return {sequence: entry for sequence, entry in found.items() if entry.name}


def class_key(sequence: str) -> str:
    return "".join(char for char in sequence if char not in SKIN_TONES and char != VARIATION_SELECTOR)


def render(font: ImageFont.FreeTypeFont, sequence: str) -> Image.Image | None:
    """The glyph on white at SIZE, or None when the font does not draw the sequence as one coloured glyph."""
    if font.getlength(sequence) > MAX_SINGLE_ADVANCE:
        return None
    canvas = Image.new("RGBA", (2 * FONT_SIZE, 2 * FONT_SIZE), (255, 255, 255, 0))
    ImageDraw.Draw(canvas).text((FONT_SIZE // 4, FONT_SIZE // 4), sequence, font=font, embedded_color=True)
    box = canvas.getchannel("A").getbbox()
    if box is None:
        return None
    glyph = canvas.crop(box)
    rgb = np.asarray(glyph.convert("RGB"), dtype=np.int16)
    # A missing glyph draws as an uncoloured box; emoji have colour.
    if np.ptp(rgb, axis=2).max() < 24:
        return None
    side = int(max(glyph.size) * (1 + 2 * MARGIN))
    square = Image.new("RGBA", (side, side), (255, 255, 255, 0))
    square.paste(glyph, ((side - glyph.width) // 2, (side - glyph.height) // 2))
    white = Image.new("RGBA", square.size, (255, 255, 255, 255))
    return Image.alpha_composite(white, square).convert("RGB").resize((SIZE, SIZE), Image.Resampling.LANCZOS)


def colour_name(r: float, g: float, b: float) -> str:
    hue, saturation, value = colorsys.rgb_to_hsv(r / 255, g / 255, b / 255)
    degrees = hue * 360
    if value < 0.2:
        return "black"
    if saturation < 0.18:
        return "white" if value > 0.85 else "gray"
    if degrees < 15 or degrees >= 345:
        return "red" if value > 0.45 else "brown"
    if degrees < 42:
        return "orange" if value > 0.7 else "brown"
    if degrees < 70:
        return "yellow"
    if degrees < 165:
        return "green"
    if degrees < 255:
        return "blue"
    if degrees < 290:
        return "purple"
    return "pink"


def colour_words(image: Image.Image) -> list[str]:
    """The colours covering at least a fifth of the drawn (non-white) pixels, most first, at most two."""
    pixels = np.asarray(image, dtype=np.int16).reshape(-1, 3)
    drawn = pixels[(pixels < 235).any(axis=1)]
    if len(drawn) == 0:
        return ["white"]
    counts: dict[str, int] = {}
    for r, g, b in drawn[:: max(1, len(drawn) // 400)]:
        name = colour_name(r, g, b)
        counts[name] = counts.get(name, 0) + 1
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [name for name, count in ranked if count >= 0.2 * total][:2] or [ranked[0][0]]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def package_version(package: str) -> str:
    return subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], check=True, capture_output=True, text=True).stdout


def choose_heldout(annotations: list[Annotation], rng: np.random.Generator, count: int) -> set[str]:
    """Base emoji (no tone, not a flag) whose keywords say something beyond the name; one per class."""
    candidates = sorted(
        {
            entry.sequence
            for entry in annotations
            if class_key(entry.sequence) == entry.sequence.replace(VARIATION_SELECTOR, "")
            and not entry.name.startswith("flag")
            and len([word for word in entry.keywords if word != entry.name]) >= 2
        }
    )
    return set(rng.choice(candidates, size=min(count, len(candidates)), replace=False).tolist())


def build(out: Path, limit: int | None = None) -> dict[str, object]:
    for path in [FONT, *ANNOTATIONS]:
        if not path.exists():
            sys.exit(f"{path} is missing: apt-get install fonts-noto-color-emoji unicode-cldr-core")
    font = ImageFont.truetype(str(FONT), FONT_SIZE)
    annotations = read_annotations(ANNOTATIONS)
    kept: list[tuple[Annotation, Image.Image]] = []
    skipped = 0
    for sequence in sorted(annotations):
        if limit is not None and len(kept) == limit:
            break
        image = render(font, sequence)
        if image is None:
            skipped += 1
            continue
        kept.append((annotations[sequence], image))
    rng = np.random.default_rng(SEED)
    # A smoke subset (--limit) holds out a quarter of its images.
    heldout = choose_heldout([entry for entry, _ in kept], rng, HELDOUT_COUNT if limit is None else max(1, limit // 4))
    keys = sorted({class_key(entry.sequence) for entry, _ in kept})
    class_of = {key: index for index, key in enumerate(keys)}
    images = np.stack([np.asarray(image, dtype=np.uint8) for _, image in kept])
    colours = [colour_words(image) for _, image in kept]
    arrays = {
        "images": images,
        "sequences": np.array([entry.sequence for entry, _ in kept]),
        "names": np.array([entry.name for entry, _ in kept]),
        "keywords": np.array(["|".join(entry.keywords) for entry, _ in kept]),
        "colours": np.array([",".join(words) for words in colours]),
        "classes": np.array([class_of[class_key(entry.sequence)] for entry, _ in kept], dtype=np.int32),
        "heldout": np.array([entry.sequence in heldout for entry, _ in kept]),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **arrays)
    heldout_rows = [
        {"caption": entry.name, "emoji": entry.sequence, "index": index, "class": int(arrays["classes"][index])}
        for index, (entry, _) in enumerate(kept)
        if entry.sequence in heldout
    ]
    summary = {
        "images": len(kept),
        "classes": len(keys),
        "heldout": len(heldout_rows),
        "annotated_sequences": len(annotations),
        "not_drawn_as_one_glyph": skipped,
        "size": SIZE,
        "images_sha256": hashlib.sha256(images.tobytes()).hexdigest(),
        "npz_bytes": out.stat().st_size,
    }
    return {"summary": summary, "heldout": heldout_rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--limit", type=int, help="render only the first this many images (smoke runs); the manifest is not written")
    args = parser.parse_args()
    result = build(args.out, args.limit)
    if args.limit is None:
        manifest = {
            "dataset": "Noto Color Emoji at 64x64 on white, CLDR English captions",
            "command": "/usr/bin/python3 -m atelier_training.t2i.emoji_data",
            "sources": [
                {
                    **source,
                    "version": package_version(str(source["package"])),
                    "sha256": {file: sha256(Path(file)) for file in source["files"]},  # type: ignore[union-attr]
                }
                for source in SOURCES
            ],
            "renderer": {"pillow": PIL.__version__, "font_size": FONT_SIZE, "margin": MARGIN, "resample": "lanczos"},
            **result["summary"],  # type: ignore[dict-item]
        }
        MANIFEST.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        HELDOUT.write_text(json.dumps(result["heldout"], indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(result["summary"]))


if __name__ == "__main__":
    main()
