/**
 * The served OpenAPI document as standard tools read it: Stoplight Prism's validating proxy stands
 * in front of a real Atelier, finds each request's operation in the document and checks the answer
 * against it. Prism reports a mismatch in an `sl-violations` header, and answers itself (with a
 * `problem+json` body of its own) when it cannot place a request in the document at all, as it did
 * when the health endpoints named a server of their own.
 *
 * Every documented example goes through it: each operation's success example, and each error
 * example that a client request can cause (by its `x-request` body, or by the request that causes
 * its kind: no key, a spent key, bad JSON...). The service has no models installed, so an example
 * that needs one answers the documented MODEL_NOT_INSTALLED instead. One Prism serves every example.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_KINDS, type ErrorCode } from "../../core/errors.js";
import { freeLoopbackPort } from "../support/free-port.js";
import { startTestService, type TestService } from "../support/test-service.js";

/** Kinds no single request of a client causes on a healthy server (test/contract and test/jobs cover their shapes). */
const NOT_SENT = new Set<ErrorCode>(["INTERNAL", "WORKER_UNAVAILABLE", "OVERLOADED", "STORE_UNAVAILABLE", "DEADLINE_EXCEEDED", "IMAGE_TOO_LARGE", "SOURCE_FETCH_FAILED",
  "JOB_CONFLICT", "IDEMPOTENCY_MISMATCH", "TOO_MANY_JOBS", "TOO_MANY_STREAMS", "RESULT_GONE",
  // Prism answers these itself before forwarding: a method the document does not list (405), and
  // a body that is not JSON under `application/json` (its own `invalid_json` 400).
  "METHOD_NOT_ALLOWED", "MALFORMED_JSON"]);
const MAX_BODY_BYTES = 64 * 1024;
const HTTP_METHODS = ["get", "post", "put", "patch", "delete"];

interface Example {
  value: unknown;
  "x-request"?: unknown;
  "x-headers"?: Record<string, string>;
}
interface Operation {
  operationId: string;
  description?: string;
  parameters?: { in: string; name: string; example?: unknown }[];
  requestBody?: { content: Record<string, { examples?: Record<string, Example> }> };
  responses: Record<string, { content?: Record<string, { examples?: Record<string, Example> }> }>;
}
interface Document {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
}

let service: TestService;
let prism: ChildProcess;
let prismUrl: string;
let document: Document;
let key: string;
const prismOutput: string[] = [];

async function startPrism(documentFile: string, upstream: string): Promise<void> {
  const port = await freeLoopbackPort();
  prismUrl = `http://127.0.0.1:${port}`;
  const bin = path.resolve("node_modules", ".bin", "prism");
  prism = spawn(bin, ["proxy", documentFile, upstream, "--errors", "--validate-request=false", "--host", "127.0.0.1", "--port", String(port)], { stdio: ["ignore", "pipe", "pipe"] });
  prism.stdout!.on("data", (chunk: Buffer) => prismOutput.push(chunk.toString()));
  prism.stderr!.on("data", (chunk: Buffer) => prismOutput.push(chunk.toString()));
  const exited = new Promise<never>((_, reject) => prism.once("exit", (code) => reject(new Error(`prism exited with ${code}: ${prismOutput.join("")}`))));
  const listening = new Promise<void>((resolve) => {
    const check = () => (prismOutput.join("").includes("Prism is listening") ? resolve() : setTimeout(check, 100));
    check();
  });
  await Promise.race([listening, exited]);
}

beforeAll(async () => {
  service = await startTestService({ ATELIER_MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
  key = await service.createKey("prism", 10_000);
  const text = await (await fetch(`${service.url}/api/v1/openapi.json`)).text();
  document = JSON.parse(text) as Document;
  const file = path.join(service.dataDir, "openapi.json");
  fs.writeFileSync(file, text);
  await startPrism(file, service.url);
}, 120_000);
afterAll(async () => {
  prism?.kill();
  await service?.close();
});

interface Sent {
  method: string;
  body?: string;
  contentType?: string;
  key?: string | undefined;
  headers?: Record<string, string> | undefined;
}

interface Answer {
  status: number;
  body: unknown;
  violations: string | null;
  prismError: boolean;
}

/** Sends a request through Prism and reads what Prism made of the answer. */
async function throughPrism(url: string, request: Sent): Promise<Answer> {
  const headers: Record<string, string> = { ...request.headers };
  if (request.contentType) headers["content-type"] = request.contentType;
  if (request.key) headers.authorization = `Bearer ${request.key}`;
  const response = await fetch(`${prismUrl}${url}`, { method: request.method, headers, ...(request.body === undefined ? {} : { body: request.body }) });
  const text = await response.text();
  const contentType = response.headers.get("content-type") ?? "";
  const body: unknown = contentType.includes("json") ? JSON.parse(text) : text;
  // Prism's own answers: problem+json for requests it cannot place, `{error: {...}}` from its body reader.
  const prismError = contentType.includes("problem+json") || (typeof body === "object" && body !== null && "error" in body);
  return { status: response.status, body, violations: response.headers.get("sl-violations"), prismError };
}

function operations(): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]): [string, string, Operation] => [template, method.toUpperCase(), operation]),
  );
}

/** The operation's request example as JSON text, if it takes a body. */
const successBody = (operation: Operation) => {
  const value = operation.requestBody?.content["application/json"]?.examples?.success?.value;
  return value === undefined ? undefined : JSON.stringify(value);
};

/** The request that causes `code`, or undefined when no single client request can. */
async function provoking(url: string, method: string, operation: Operation, code: ErrorCode, example: Example): Promise<Sent | undefined> {
  const body = successBody(operation) ?? (operation.requestBody ? "{}" : undefined);
  const json = body === undefined ? {} : { body, contentType: "application/json" };
  if (example["x-request"] !== undefined) return { method, body: JSON.stringify(example["x-request"]), contentType: "application/json", key, headers: example["x-headers"] };
  switch (code) {
    case "UNAUTHORIZED":
      // A credential of the documented scheme that names no key: Prism checks only the scheme.
      return { method, ...json, key: "atl_nosuchkey_0000000000000000000000000000000000000" };
    case "KEY_EXPIRED": {
      const { key: expiring } = await service.services.keys.create({ name: `expired-${operation.operationId}`, expiresAt: new Date(Date.now() + 50) });
      await new Promise((resolve) => setTimeout(resolve, 100));
      return { method, ...json, key: expiring };
    }
    case "KEY_SCOPE_DENIED": {
      const other = operation.operationId === "prompt-improve" ? "generate" : "prompt.improve";
      const { key: scoped } = await service.services.keys.create({ name: `scoped-${operation.operationId}`, scopes: [other] });
      return { method, ...json, key: scoped };
    }
    case "RATE_LIMITED": {
      // A key whose one request an hour is spent (straight to the service, not through Prism).
      const spent = await service.createKey(`spent-${operation.operationId}`, 1);
      await fetch(`${service.url}${url}`, { method, headers: { authorization: `Bearer ${spent}` } });
      return { method, ...json, key: spent };
    }
    case "UNSUPPORTED_MEDIA_TYPE":
      return { method, body: body ?? "{}", contentType: "text/plain", key };
    case "MALFORMED_MULTIPART":
      return { method, body: "--x\r\n", contentType: "multipart/form-data", key };
    case "PAYLOAD_TOO_LARGE":
      return { method, body: JSON.stringify({ padding: "x".repeat(MAX_BODY_BYTES) }), contentType: "application/json", key };
    case "NOT_FOUND":
      return { method, key };
    case "INVALID_INPUT":
      return { method, key };
    default:
      return undefined;
  }
}

/** The URL to call for a path template: a real job's id, or one that names no job. */
function urlOf(template: string, jobId: string, code?: ErrorCode): string {
  const filled = template.replace("{id}", code === "NOT_FOUND" ? "job_doesnotexist00000000000" : jobId);
  // GET list and event stream: a query the schema refuses gives their INVALID_INPUT.
  if (code === "INVALID_INPUT" && template.endsWith("/jobs")) return `${filled}?limit=0`;
  if (code === "INVALID_INPUT" && template.endsWith("/events")) return `${filled}?include=everything`;
  return filled;
}

describe("the served OpenAPI document through Stoplight Prism's validating proxy", () => {
  it("describes every answer to every documented example with one server and full paths", async () => {
    expect(document.servers).toHaveLength(1);
    expect(operations().length).toBeGreaterThanOrEqual(13);
    // A finished job for the jobs paths' examples.
    const accepted = await throughPrism("/api/v1/prompt/improve", { method: "POST", body: JSON.stringify({ prompt: "a heron" }), contentType: "application/json", key, headers: { prefer: "respond-async" } });
    expect([accepted.status, accepted.violations, accepted.prismError]).toEqual([202, null, false]);
    const jobId = (accepted.body as { id: string }).id;
    await expect.poll(async () => ((await throughPrism(`/api/v1/jobs/${jobId}`, { method: "GET", key })).body as { status: string }).status, { timeout: 30_000 }).toBe("succeeded");

    const problems: string[] = [];
    const notSent = new Set<ErrorCode>();
    let sent = 0;
    // Cancelling comes last: it ends the job the other examples read.
    const ordered = operations().sort(([, a], [, b]) => Number(a === "DELETE") - Number(b === "DELETE"));
    for (const [template, method, operation] of ordered) {
      const needsModels = (operation.description ?? "").includes("npm run models -- pull");
      const check = (what: string, answer: Answer, expected: { status?: number; code?: ErrorCode }) => {
        sent += 1;
        if (answer.violations) problems.push(`${what}: sl-violations ${answer.violations}`);
        if (answer.prismError) problems.push(`${what}: Prism answered itself ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
        const code = (answer.body as { code?: ErrorCode } | null)?.code;
        const modelMissing = needsModels && code === "MODEL_NOT_INSTALLED";
        if (expected.code && code !== expected.code && !modelMissing) problems.push(`${what}: answered ${answer.status} ${code} ${JSON.stringify(answer.body).slice(0, 200)}, expected ${expected.code}`);
        if (expected.status && answer.status !== expected.status && !modelMissing) problems.push(`${what}: answered ${answer.status} ${code ?? ""}, expected ${expected.status}`);
      };

      const body = successBody(operation);
      const success = await throughPrism(urlOf(template, jobId), { method, key, ...(body === undefined ? {} : { body, contentType: "application/json" }) });
      // Cancelling a finished job is a documented conflict; every other success example succeeds.
      check(`${method} ${template} success`, success, method === "DELETE" ? { code: "JOB_CONFLICT" } : { status: 200 });

      for (const [status, response] of Object.entries(operation.responses)) {
        if (status.startsWith("2")) continue;
        for (const [name, example] of Object.entries(response.content?.["application/json"]?.examples ?? {})) {
          const code = name as ErrorCode;
          if (!(code in ERROR_KINDS)) continue; // readiness's 503 describes a server state, not a request
          const url = urlOf(template, jobId, code);
          const request = NOT_SENT.has(code) ? undefined : await provoking(url, method, operation, code, example);
          if (!request) {
            notSent.add(code);
            continue;
          }
          const answer = await throughPrism(url, request);
          check(`${method} ${template} ${status} ${code}`, answer, { status: Number(status), code });
        }
      }
    }
    expect(problems, prismOutput.join("").split("\n").filter((line) => /error|violation/i.test(line)).slice(-20).join("\n")).toEqual([]);
    expect([...notSent].filter((code) => !NOT_SENT.has(code)), "error examples no request provoked").toEqual([]);
    // Thirteen operations, most with several kinds a request causes: a walk that sent few walked nothing.
    expect(sent).toBeGreaterThan(60);
  }, 180_000);
});
