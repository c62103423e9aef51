/**
 * Every REST operation and the client method that calls it: the one table the resources take their
 * paths from, and the one the coverage test compares with the served OpenAPI document. Paths are
 * full paths on the server, as in the document.
 */
export const OPERATIONS = [
  { method: "POST", path: "/api/v1/generate", client: "images.generate" },
  { method: "POST", path: "/api/v1/tools/upscale", client: "tools.upscale" },
  { method: "POST", path: "/api/v1/tools/style-transfer", client: "tools.styleTransfer" },
  { method: "POST", path: "/api/v1/tools/background-remove", client: "tools.removeBackground" },
  { method: "POST", path: "/api/v1/prompt/improve", client: "prompts.improve" },
  { method: "GET", path: "/api/v1/models", client: "models.list" },
  // Probes at the server's root, outside `/api`.
  { method: "GET", path: "/healthz", client: "health.live" },
  { method: "GET", path: "/readyz", client: "health.ready" },
  // Jobs: need a server that serves them.
  { method: "GET", path: "/api/v1/jobs", client: "jobs.list" },
  { method: "GET", path: "/api/v1/jobs/{id}", client: "jobs.get" },
  { method: "DELETE", path: "/api/v1/jobs/{id}", client: "jobs.cancel" },
  { method: "GET", path: "/api/v1/jobs/{id}/events", client: "jobs.events" },
  { method: "GET", path: "/api/v1/jobs/{id}/result", client: "jobs.result" },
  { method: "GET", path: "/api/v1/webhooks/secret", client: "webhooks.secret" },
  { method: "POST", path: "/api/v1/webhooks/secret", client: "webhooks.rotateSecret" },
] as const;

export type Operation = (typeof OPERATIONS)[number];
export type ClientMethodName = Operation["client"];

/** The POST operations a job can run, by client method name. */
export type JobOperation = Exclude<Extract<Operation, { method: "POST" }>["client"], "webhooks.rotateSecret">;

export function pathOf(client: ClientMethodName): string {
  return OPERATIONS.find((operation) => operation.client === client)!.path;
}

/** `/api/v1/jobs/{id}` with its parameter filled in. */
export function fillPath(template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
}
