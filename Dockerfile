# syntax=docker/dockerfile:1
# Atelier: one image for the router (`node dist/bin/service.js`, the default) and the gRPC workers
# (`node dist/bin/workers.js`). Build: docker build -t atelier .
# The runtime stage holds the compiled dist/ and production dependencies only, runs as the
# unprivileged `node` user, and keeps keys/quota data and model weights on volumes.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# better-sqlite3 compiles its native module from source (no prebuilt download): a toolchain here only.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY . .
# Compile to dist/, then drop dev dependencies (and typescript, installed only as a peer dependency).
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/typescript

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    ATELIER_METRICS_HOST=0.0.0.0 \
    ATELIER_METRICS_PORT=9464 \
    ATELIER_WORKER_HOST=0.0.0.0 \
    ATELIER_WORKER_PORT=50051 \
    ATELIER_DATA_DIR=/data \
    ATELIER_MODELS_DIR=/models \
    MALLOC_MMAP_THRESHOLD_=1048576 \
    MALLOC_ARENA_MAX=2 \
    GLIBC_TUNABLES=glibc.malloc.hugetlb=1
# The two MALLOC_ settings let glibc hand memory onnxruntime frees back to the system, and the
# tunable keeps the image-sized buffers that then come fresh from the system cheap to touch (see
# workers/onnx/allocator-settings.ts); npm start sets them too, and glibc reads them only at start.
# The image serves metrics (ATELIER_METRICS_PORT) on every interface of the container
# (ATELIER_METRICS_HOST) for a Prometheus in another container or pod: /metrics has no
# authentication, so publish 9464 to that network only, never to the internet.
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data /models && chown node:node /data /models
USER node
VOLUME ["/data", "/models"]
# 8080 REST/tRPC (router), 9464 Prometheus metrics, 50051 gRPC (workers).
EXPOSE 8080 9464 50051
# Workers override this with `healthcheck-cli.js worker` (gRPC health); see deploy/compose.yaml.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "dist/bin/healthcheck-cli.js"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/bin/service.js"]
