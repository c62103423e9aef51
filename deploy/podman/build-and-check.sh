#!/usr/bin/env bash
# Builds the Dockerfile with Debian's podman and checks the image: a container starts, its
# HEALTHCHECK command passes, /readyz answers and a real upscale works, as the unprivileged user.
#
# For machines that reach only the Debian and npm registries (no container registry): the base
# image the Dockerfile names (node:20-bookworm-slim) cannot be pulled, so a stand-in is made here
# with debootstrap (Debian bookworm, minbase) plus this machine's Node.js 20, its headers and npm, a
# `node` user (uid 1000) and this machine's CA bundle and npm cafile (for TLS-intercepting proxies). Where
# docker.io is reachable, plain `docker build -t atelier .` needs none of this.
#
# Needs root. Installs podman, runc and debootstrap when missing. crun (podman's default on Debian 12)
# refuses hybrid cgroup hierarchies, and the default container ulimits can exceed a sandbox's hard
# limits, so runc and a containers.conf without default ulimits are used.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
work=${ATELIER_IMAGE_WORK:-/var/tmp/atelier-image}
base=localhost/atelier-base:node20-bookworm
image=localhost/atelier:check
mkdir -p "$work"
export CONTAINERS_CONF="$work/containers.conf"
printf '[containers]\ndefault_ulimits = []\n' > "$CONTAINERS_CONF"
podman() { command podman --runtime runc "$@"; }

need=()
command -v podman >/dev/null || need+=(podman)
command -v runc >/dev/null || need+=(runc)
command -v debootstrap >/dev/null || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! podman image exists "$base"; then
  echo "== base image (debootstrap bookworm + this machine's node $(node --version))"
  rootfs="$work/rootfs"
  rm -rf "$rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >/dev/null
  cp "$(command -v node)" "$rootfs/usr/bin/node"
  npm_root=$(npm root -g)
  mkdir -p "$rootfs/usr/lib/node_modules" "$rootfs/usr/etc"
  cp -a "$npm_root/npm" "$rootfs/usr/lib/node_modules/"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/bin/npx"
  # Node's headers and nodedir: better-sqlite3 compiles offline instead of downloading them.
  mkdir -p "$rootfs/usr/include"
  cp -a "$(dirname "$(command -v node)")/../include/node" "$rootfs/usr/include/"
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  printf 'cafile=/etc/ssl/certs/ca-certificates.crt\nnodedir=/usr\n' > "$rootfs/usr/etc/npmrc"
  chroot "$rootfs" /bin/sh -c "groupadd --gid 1000 node && useradd --uid 1000 --gid node --create-home node"
  rm -rf "$rootfs/var/cache/apt/archives/"*.deb
  tar -C "$rootfs" -c . | podman import - "$base" >/dev/null
  rm -rf "$rootfs"
fi

echo "== podman build"
started=$(date +%s)
# Docker image format: the OCI format has no HEALTHCHECK.
podman build --format docker --network=host --build-arg NODE_IMAGE="$base" -t "$image" "$repo"
echo "built in $(( $(date +%s) - started )) s; size: $(podman image inspect "$image" --format '{{.Size}}') bytes"

echo "== run and check"
port=${ATELIER_IMAGE_PORT:-18480}
name=atelier-check-$$
podman run -d --name "$name" --network=host -e PORT="$port" -e ATELIER_METRICS_PORT=0 -e ATELIER_PROVISION_MODELS=false "$image" >/dev/null
trap 'podman rm -f "$name" >/dev/null 2>&1 || true' EXIT
for _ in $(seq 1 60); do
  podman exec "$name" node dist/bin/healthcheck-cli.js 2>/dev/null && break
  sleep 1
done
podman exec "$name" node dist/bin/healthcheck-cli.js
[ "$(podman exec "$name" id -u)" != 0 ] || { echo "the container runs as root" >&2; exit 1; }
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null
key=$(podman exec "$name" node dist/bin/keys-cli.js create --name image-check --json | node -e 'let s="";process.stdin.on("data",(c)=>s+=c).on("end",()=>console.log(JSON.parse(s).key))')
pixel='data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEElEQVQImWM4kWIERwzEcQBCchXhzfoe+QAAAABJRU5ErkJggg=='
status=$(curl -s -o /dev/null -w '%{http_code}' -H "authorization: Bearer $key" -H 'content-type: application/json' \
  -d "{\"imageUrl\":\"$pixel\",\"scale\":2,\"model\":\"esrgan-slim\"}" "http://127.0.0.1:$port/api/v1/tools/upscale")
[ "$status" = 200 ] || { echo "upscale answered $status" >&2; podman logs "$name" | tail -20 >&2; exit 1; }
echo "image OK: healthy, non-root, ready, upscales"
