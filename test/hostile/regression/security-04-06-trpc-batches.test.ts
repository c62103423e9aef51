/**
 * Security review, items 4 and 6: tRPC batches (`/trpc/a,b,...?batch=1`), over raw HTTP against one
 * service.
 * - Item 4: the operation label was the joined procedure list, decided before authentication, so
 *   every distinct unauthenticated batch path added histogram series; now every batch counts as
 *   `trpc.batch`, and a batch is at most LIMITS.trpcBatchCalls.max calls long.
 * - Item 6: a batch body that is not an object (`["x"]`, `[]`) answered 500 and logged a stack
 *   trace; now it is 400 INVALID_INPUT like every other bad input, with nothing logged as an error.
 */
import fs from "node:fs";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../core/config.js";
import { LIMITS } from "../../../core/limits.js";
import { startAtelier, type RunningAtelier } from "../../../bin/start-atelier.js";
import { startMetricsServer, type MetricsServer } from "../../../observability/metrics-server.js";
import { freeLoopbackPort } from "../../support/free-port.js";
import { makeTempDir } from "../../support/temp-dir.js";
import { errorCodeOf, rawRequest, type RawAnswer } from "../support/hostile-service.js";

const METERED = ["tools.upscale", "tools.styleTransfer", "tools.backgroundRemove", "generate", "prompt.improve"];

let atelier: RunningAtelier;
let metrics: MetricsServer;
let dataDir: string;
let key: string;
const logLines: { level: number; msg: string; [field: string]: unknown }[] = [];

beforeAll(async () => {
  dataDir = makeTempDir("test");
  const config = loadConfig({
    HOST: "127.0.0.1",
    PORT: "0",
    ATELIER_DATA_DIR: dataDir,
    ATELIER_METRICS_PORT: String(await freeLoopbackPort()),
    ATELIER_PROVISION_MODELS: "false",
  });
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) logLines.push(JSON.parse(line) as (typeof logLines)[number]);
      callback();
    },
  });
  const logger = pino({ level: "info" }, sink);
  atelier = await startAtelier(config, logger);
  metrics = (await startMetricsServer(config.metrics, logger))!;
  key = (await atelier.services.keys.create({ name: "batches", hourlyLimit: 100_000 })).key;
});

afterAll(async () => {
  await metrics?.close();
  await atelier?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const post = (path: string, body: string, headers: Record<string, string> = {}): Promise<RawAnswer> =>
  rawRequest(atelier.port, "POST", path, { "content-type": "application/json", ...headers }, body);

/** The label sets of every series of the request metrics in one scrape. */
async function requestSeries(): Promise<string[]> {
  const response = await fetch(metrics.url);
  expect(response.status).toBe(200);
  const text = await response.text();
  return text.split("\n").filter((line) => /^atelier_(http_request|quota_rejection)\w*\{/.test(line)).map((line) => line.slice(0, line.lastIndexOf(" ")));
}

/** The `n`-th distinct batch path over the metered procedures (its digits in base 5), of two or more calls. */
function batchPath(n: number): string {
  const names: string[] = [];
  for (let rest = n + METERED.length; rest > 0; rest = Math.floor(rest / METERED.length)) names.push(METERED[rest % METERED.length]!);
  return `/trpc/${names.join(",")}?batch=1`;
}

describe("tRPC batch metric labels come from a closed set", () => {
  it("leaves the series count unchanged by many distinct unauthenticated batches", async () => {
    const paths = Array.from({ length: 40 }, (_, n) => batchPath(n));
    expect(new Set(paths).size).toBe(paths.length);
    for (const path of paths) expect(path.split(",").length).toBeLessThanOrEqual(LIMITS.trpcBatchCalls.max);
    // The first refusal of each kind creates its series.
    expect((await post(batchPath(1000), "{}")).status).toBe(401);
    expect((await post(`/trpc/${Array(LIMITS.trpcBatchCalls.max + 1).fill("generate").join(",")}?batch=1`, "{}")).status).toBe(400);
    const before = await requestSeries();

    for (const path of paths) {
      const answer = await post(path, "{}");
      expect(answer.status, path).toBe(401);
      expect(errorCodeOf(answer.body)).toBe("UNAUTHORIZED");
    }
    for (let length = LIMITS.trpcBatchCalls.max + 1; length < LIMITS.trpcBatchCalls.max + 20; length++) {
      expect((await post(`/trpc/${Array(length).fill("prompt.improve").join(",")}?batch=1`, "{}")).status).toBe(400);
    }
    const after = await requestSeries();
    expect(after.filter((series) => !before.includes(series))).toEqual([]);
    expect(after.length).toBe(before.length);
    expect(after).toContain('atelier_http_requests_total{operation="trpc.batch",transport="trpc",status="401"}');
  });

  it("labels a single tRPC call by its procedure and an unknown one as unknown", async () => {
    await post("/trpc/prompt.improve", "{}");
    await post("/trpc/no.such.procedure", "{}");
    const series = await requestSeries();
    expect(series.some((line) => line.startsWith('atelier_http_requests_total{operation="prompt.improve",transport="trpc",status="401"}'))).toBe(true);
    expect(series.some((line) => line.includes("no.such.procedure"))).toBe(false);
  });
});

describe("tRPC batch length is capped", () => {
  it(`refuses a batch of more than ${LIMITS.trpcBatchCalls.max} calls with one 400, before the key is checked`, async () => {
    const length = LIMITS.trpcBatchCalls.max + 1;
    const answer = await post(`/trpc/${Array(length).fill("prompt.improve").join(",")}?batch=1`, JSON.stringify({ 0: { prompt: "a cat" } }));
    expect(answer.status).toBe(400);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    const body = JSON.parse(answer.body) as { error: { data: { code: string; message: string; requestId: string } } };
    expect(body.error.data.code).toBe("INVALID_INPUT");
    expect(body.error.data.message).toBe(`Invalid request: expected at most ${LIMITS.trpcBatchCalls.max} calls in a tRPC batch but received ${length}.`);
    expect(body.error.data.requestId).toBe(answer.headers["x-request-id"]);
  });

  it("answers a batch as long as a URL allows with one small error, not one per call", async () => {
    const answer = await post(`/trpc/${Array(1500).fill("generate").join(",")}?batch=1`, "{}", { authorization: `Bearer ${key}` });
    expect(answer.status).toBe(400);
    expect(errorCodeOf(answer.body)).toBe("INVALID_INPUT");
    expect(answer.body.length).toBeLessThan(2000);
  });

  it(`passes a batch of exactly ${LIMITS.trpcBatchCalls.max} calls on to authentication`, async () => {
    const answer = await post(`/trpc/${Array(LIMITS.trpcBatchCalls.max).fill("prompt.improve").join(",")}?batch=1`, "{}");
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toHaveLength(LIMITS.trpcBatchCalls.max);
  });
});

describe("tRPC batch bodies that are not an object", () => {
  const CASES: [body: string, path: string][] = [
    ['["x"]', "/trpc/prompt.improve?batch=1"],
    ["[]", "/trpc/prompt.improve?batch=1"],
    ['["x"]', "/trpc/prompt.improve,prompt.improve?batch=1"],
    ['"x"', "/trpc/prompt.improve?batch=1"],
    ["null", "/trpc/prompt.improve?batch=1"],
    ["7", "/trpc/prompt.improve?batch=1"],
    // The same bodies outside a batch reach the procedure's own schema.
    ['"x"', "/trpc/prompt.improve"],
    ["[]", "/trpc/prompt.improve"],
  ];

  it.each(CASES)("answers %s on %s with 400 INVALID_INPUT and logs no error", async (body, path) => {
    const logged = logLines.length;
    const answer = await post(path, body, { authorization: `Bearer ${key}` });
    expect(answer.status, answer.body).toBe(400);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    const parsed = JSON.parse(answer.body) as unknown;
    const errors = (Array.isArray(parsed) ? parsed : [parsed]) as { error: { data: { code: string; requestId: string } } }[];
    expect(errors.length).toBeGreaterThan(0);
    for (const { error } of errors) {
      expect(error.data.code).toBe("INVALID_INPUT");
      expect(error.data.requestId).toBe(answer.headers["x-request-id"]);
    }
    expect(answer.body).not.toMatch(/\bat \S+ \(|stack/i);
    const lines = logLines.slice(logged);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(JSON.stringify(lines)).not.toMatch(/"stack"/);
    expect(lines.find((line) => line.msg === "request")).toMatchObject({ status: 400 });
  });

  it("reads a body that is a JSON string as that string, never as JSON text of its own", async () => {
    const answer = await post("/trpc/prompt.improve", JSON.stringify(JSON.stringify({ prompt: "a cat" })), { authorization: `Bearer ${key}` });
    expect(answer.status, answer.body).toBe(400);
    const { error } = JSON.parse(answer.body) as { error: { data: { code: string; message: string } } };
    expect(error.data.code).toBe("INVALID_INPUT");
    expect(error.data.message).toMatch(/^Invalid request: Expected a JSON object .* but received "/);
  });

  it("answers a batch mixing a query and a mutation, which tRPC refuses as a whole, with 400 JSON", async () => {
    const logged = logLines.length;
    const answer = await post("/trpc/prompt.improve,models.list?batch=1", JSON.stringify({ 0: { prompt: "a cat" } }), { authorization: `Bearer ${key}` });
    expect(answer.status, answer.body).toBe(400);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    expect(errorCodeOf(answer.body)).toBe("INVALID_INPUT");
    expect(logLines.slice(logged).filter((line) => line.level >= 50)).toEqual([]);
  });
});
