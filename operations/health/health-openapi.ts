/**
 * The health endpoints' entries for the OpenAPI document. They live at the root, not under the
 * API's `/api` base, so each path names its own server.
 */
import { HEALTH_PATH, READY_PATH } from "./health-routes.js";

const check = {
  type: "object",
  required: ["name", "ok", "critical", "ms"],
  properties: {
    name: { type: "string", description: "`workers`, `keys`, `redis`, `models-folder` or `provisioning`." },
    ok: { type: "boolean" },
    critical: { type: "boolean", description: "False for checks that are reported but never make the process unready." },
    detail: { type: "string", description: "What was found: addresses, a reason, progress." },
    info: { type: "object", additionalProperties: true },
    ms: { type: "integer", description: "Time the check took." },
  },
};

const readiness = {
  type: "object",
  required: ["status", "ready", "notReady", "checks"],
  properties: {
    status: { type: "string", enum: ["ready", "not ready"] },
    ready: { type: "boolean" },
    notReady: {
      type: "array",
      description: "What is not ready: failed critical checks, and `shutdown` while the process drains.",
      items: { type: "object", required: ["name", "detail"], properties: { name: { type: "string" }, detail: { type: "string" } } },
    },
    checks: { type: "array", items: check },
  },
};

const root = [{ url: "/", description: "Health endpoints are served at the root, outside `/api`." }];
const json = (schema: object, examples: Record<string, { summary: string; value: unknown }>) => ({ "application/json": { schema, examples } });

const readyExample = {
  status: "ready",
  ready: true,
  notReady: [],
  checks: [{ name: "workers", ok: true, critical: true, detail: "127.0.0.1:50051 serving", ms: 3 }],
};

export const HEALTH_OPENAPI_PATHS = {
  [HEALTH_PATH]: {
    servers: root,
    get: {
      operationId: "healthz",
      tags: ["health"],
      summary: "Liveness",
      description: "200 while the process runs and answers HTTP. No key needed; not counted against any quota.",
      security: [],
      responses: {
        "200": {
          description: "Alive.",
          content: json(
            { type: "object", required: ["status"], properties: { status: { type: "string", enum: ["ok"] }, uptimeSeconds: { type: "integer" } } },
            { success: { summary: "The process is alive", value: { status: "ok", uptimeSeconds: 42 } } },
          ),
        },
      },
    },
  },
  [READY_PATH]: {
    servers: root,
    get: {
      operationId: "readyz",
      tags: ["health"],
      summary: "Readiness",
      description:
        "200 when the workers answer the gRPC health service, the key store and Redis (when configured) are reachable and the models folder is readable; " +
        "503 with the list of what is not ready, and while the process shuts down. Reports first-start model provisioning progress. No key needed; not counted against any quota.",
      security: [],
      responses: {
        "200": { description: "Ready.", content: json(readiness, { success: { summary: "Every critical check passes", value: readyExample } }) },
        "503": {
          description: "Not ready; `notReady` says why. Carries `Retry-After`.",
          content: json(readiness, {
            notReady: {
              summary: "The workers do not answer",
              value: {
                status: "not ready",
                ready: false,
                notReady: [{ name: "workers", detail: "127.0.0.1:50051 unreachable" }],
                checks: [{ name: "workers", ok: false, critical: true, detail: "127.0.0.1:50051 unreachable", ms: 1000 }],
              },
            },
          }),
        },
      },
    },
  },
};
