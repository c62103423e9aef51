"""Training photographs from Debian's wallpaper packages, verified and cut into patches.

    python3 -m atelier_training.prepare_data                    # download, verify, cut (cache/)
    python3 -m atelier_training.prepare_data --write-manifest   # after editing sources.py

Each package is fetched with `apt-get download` and unpacked with `dpkg -x` into cache/debs and
cache/unpacked (never installed). Every image's sha256 must match data/manifest.tsv, which also
records its package, version and licence. Every photograph Atelier's tests and benchmarks evaluate on
(data/test-photos, taken from python3-skimage's data folder) is kept out: any candidate whose bytes or
whose pixels match one of python3-skimage's images is refused. Patches: 256 px tiles without overlap,
flat tiles (grey standard deviation under 8 levels) left out, written to cache/patches as PNG.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
from PIL import Image

from .sources import SOURCES, Source

Image.MAX_IMAGE_PIXELS = None  # the wallpapers are up to 5120x2880, well within memory
HERE = Path(__file__).resolve().parent.parent
MANIFEST = HERE / "data" / "manifest.tsv"
FIELDS = ["file", "package", "version", "licence", "sha256", "copyright"]
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff"}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def candidate_version(package: str) -> str:
    policy = subprocess.run(["apt-cache", "policy", package], check=True, capture_output=True, text=True).stdout
    for line in policy.splitlines():
        if line.strip().startswith("Candidate:"):
            version = line.split(":", 1)[1].strip()
            if version and version != "(none)":
                return version
    raise RuntimeError(f"apt has no candidate for {package}: run apt-get update")


def unpack(package: str, version: str, cache: Path) -> Path:
    target = cache / "unpacked" / f"{package}_{version}"
    if target.is_dir():
        return target
    debs = cache / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    if not list(debs.glob(f"{package}_*.deb")) or not any(_deb_version(d) == version for d in debs.glob(f"{package}_*.deb")):
        subprocess.run(["apt-get", "download", f"{package}={version}"], cwd=debs, check=True, capture_output=True)
    deb = next(d for d in debs.glob(f"{package}_*.deb") if _deb_version(d) == version)
    partial = target.parent / f"{target.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["dpkg", "-x", str(deb), str(partial)], check=True)
    partial.rename(target)
    return target


def _deb_version(deb: Path) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), "Version"], check=True, capture_output=True, text=True).stdout.strip()


def fingerprint(path: Path) -> np.ndarray:
    """A 32x32 grey thumbnail: identical pictures in another encoding or size give near-equal prints."""
    with Image.open(path) as image:
        image.draft("L", (256, 256))
        return np.asarray(image.convert("L").resize((32, 32), Image.Resampling.BOX), dtype=np.float32)


class EvaluationPhotos:
    """python3-skimage's images (where data/test-photos comes from) and the repository's test photos."""

    @staticmethod
    def from_debian(cache: Path, repo_photos: Path) -> "EvaluationPhotos":
        skimage = unpack("python3-skimage", candidate_version("python3-skimage"), cache)
        paths = [p for p in skimage.rglob("skimage/data/*") if p.suffix.lower() in IMAGE_SUFFIXES]
        if repo_photos.is_dir():
            paths += [p for p in repo_photos.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES]
        return EvaluationPhotos(paths)

    def __init__(self, paths: list[Path]) -> None:
        if not paths:
            raise RuntimeError("found none of the evaluation photographs to exclude")
        self.hashes = {sha256(p) for p in paths}
        self.prints = []
        for p in paths:
            try:
                self.prints.append((p.name, fingerprint(p)))
            except OSError:
                pass  # a format Pillow cannot read here; its bytes are still excluded by hash

    def match(self, path: Path) -> str | None:
        if sha256(path) in self.hashes:
            return "identical bytes"
        candidate = fingerprint(path)
        for name, print_ in self.prints:
            if float(np.mean(np.abs(candidate - print_))) < 3.0:
                return f"same picture as {name}"
        return None


def write_manifest(cache: Path) -> None:
    rows = []
    for source in SOURCES:
        version = candidate_version(source.package)
        root = unpack(source.package, version, cache)
        path = root / source.file
        rows.append({"file": source.file, "package": source.package, "version": version, "licence": source.licence, "sha256": sha256(path), "copyright": source.copyright})
    with MANIFEST.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {MANIFEST}")


def read_manifest() -> list[dict[str, str]]:
    with MANIFEST.open(newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def cut_patches(image_path: Path, out: Path, stem: str, size: int, min_std: float) -> int:
    with Image.open(image_path) as image:
        rgb = image.convert("RGB")
    grey = np.asarray(rgb.convert("L"), dtype=np.float32)
    count = 0
    for top in range(0, rgb.height - size + 1, size):
        for left in range(0, rgb.width - size + 1, size):
            if float(grey[top : top + size, left : left + size].std()) < min_std:
                continue
            rgb.crop((left, top, left + size, top + size)).save(out / f"{stem}_{top:05d}_{left:05d}.png", compress_level=1)
            count += 1
    return count


def prepare(cache: Path, repo_photos: Path, size: int, min_std: float) -> dict[str, object]:
    rows = read_manifest()
    evaluation = EvaluationPhotos.from_debian(cache, repo_photos)
    patches = cache / "patches"
    patches.mkdir(parents=True, exist_ok=True)
    for old in patches.glob("*.png"):
        old.unlink()
    used, excluded, counts = [], [], {}
    for row in rows:
        path = unpack(row["package"], row["version"], cache) / row["file"]
        actual = sha256(path)
        if actual != row["sha256"]:
            raise RuntimeError(f"{row['package']} {row['file']}: sha256 {actual} does not match the manifest's {row['sha256']}")
        reason = evaluation.match(path)
        if reason:
            excluded.append({"file": row["file"], "package": row["package"], "reason": reason})
            continue
        stem = f"{row['package']}__{Path(row['file']).stem}".replace("/", "_")
        counts[row["file"]] = cut_patches(path, patches, stem, size, min_std)
        used.append(row["file"])
    summary = {"images": len(used), "excluded": excluded, "patches": sum(counts.values()), "patch_size": size, "per_image": counts}
    (cache / "patches.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=HERE / "cache")
    parser.add_argument("--test-photos", type=Path, default=HERE.parent / "data" / "test-photos")
    parser.add_argument("--patch-size", type=int, default=256)
    parser.add_argument("--min-std", type=float, default=8.0)
    parser.add_argument("--write-manifest", action="store_true", help="pin sources.py's files at apt's candidate versions")
    args = parser.parse_args()
    if args.write_manifest:
        write_manifest(args.cache)
        return
    summary = prepare(args.cache, args.test_photos, args.patch_size, args.min_std)
    print(f"{summary['images']} images, {summary['patches']} patches of {args.patch_size} px; excluded: {summary['excluded'] or 'none'}")


if __name__ == "__main__":
    main()
