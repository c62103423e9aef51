#!/usr/bin/env bash
# Natural photographs for tests and benchmarks, taken offline from Debian's python3-skimage package
# (its data/ folder: astronaut, chelsea, coffee, rocket, motorcycle; public-domain or CC0 images).
# The package is only unpacked into a cache folder, never installed.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${ATELIER_TEST_PHOTOS:-data/test-photos}"
if [ -f "$target/chelsea.png" ]; then exit 0; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download python3-skimage >/dev/null 2>&1) || {
  apt-get update -qq >/dev/null && (cd "$work" && apt-get download python3-skimage >/dev/null)
}
dpkg -x "$work"/python3-skimage_*.deb "$work/unpacked"
mkdir -p "$target"
for photo in astronaut.png chelsea.png coffee.png rocket.jpg motorcycle_left.png camera.png; do
  cp "$work/unpacked/usr/lib/python3/dist-packages/skimage/data/$photo" "$target/"
done
echo "test photos in $target"
