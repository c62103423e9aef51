/**
 * The router's side of a 12 MP image call, step by step, in one process: the CPU time of each step
 * and the longest event-loop block it makes (the longest gap between turns of a ticker), for the
 * request (reading and parsing a 24 MB body, its data URL made into text, zod, the key and quota
 * lookups, decoding the image) and the answer (a 24 MB data URL written as JSON). Where a step was
 * done a simpler, slower way at first, that way is measured beside it ("before").
 * Interleaved runs, medians; CPU time is the process's (process.cpuUsage), which load does not inflate.
 *
 *   npx tsx bench/router-body-steps.ts [--runs N]
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { parseArgs } from "node:util";
import { isUtf8 } from "node:buffer";
import { base64Slices, decodeBase64, encodeBase64, someSlice } from "../core/base64-slices.js";
import { isUtf8Around, JsonBodyScanner, longStringTexts, parseScannedJson } from "../facade/json-body-scanner.js";
import { fetchImage, type FetchImageOptions } from "../server/image-source/fetch-image.js";
import { AddressPolicy } from "../server/image-source/address-policy.js";
import { SqliteApiKeyStore } from "../server/keys/sqlite-api-key-store.js";
import { backgroundRemoveInput } from "../contract/schemas/background-remove.js";
import { createSqliteQuotaStore } from "../server/quota/sqlite-quota-store.js";
import { loadAverage as load, median } from "./support/figures.js";

const { values } = parseArgs({ options: { runs: { type: "string" } } });
const RUNS = Number(values.runs ?? 5);
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** CPU time of `work`, and the longest gap between turns of a ticker while it runs, in ms. */
async function measure(work: () => Promise<unknown> | unknown): Promise<{ blockMs: number; cpuMs: number }> {
  let last = performance.now();
  let longest = 0;
  let ticking = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  await nextTurn();
  const started = cpuMs();
  await work();
  const spent = cpuMs() - started;
  await nextTurn();
  ticking = false;
  await nextTurn();
  return { blockMs: longest, cpuMs: spent };
}

const image = crypto.randomBytes(18 * 2 ** 20); // a 12 MP PNG is about this size
const body = Buffer.from(JSON.stringify({ imageUrl: `data:image/png;base64,${image.toString("base64")}`, model: "portrait-selfie" }));
const chunks: Buffer[] = [];
for (let at = 0; at < body.length; at += 64 * 1024) chunks.push(body.subarray(at, at + 64 * 1024));
const scanner = new JsonBodyScanner(64 * 1024);
for (const chunk of chunks) scanner.scan(chunk);
const spans = scanner.longStrings;
const texts = await longStringTexts(body, spans);
const input = parseScannedJson(body, 0, spans, texts) as { imageUrl: string };
const flatUrl = body.toString("latin1", spans[0]!.start, spans[0]!.end);
const urlBytes = body.subarray(spans[0]!.start, spans[0]!.end);
const fetchOptions: FetchImageOptions = { maxBytes: 64 * 2 ** 20, timeoutMs: 1000, maxRedirects: 0, addressPolicy: new AddressPolicy([]) };

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-bench-body-steps-"));
const keys = SqliteApiKeyStore.open(dataDir);
const key = (await keys.create({ name: "bench", hourlyLimit: null })).key;
const quota = await createSqliteQuotaStore(dataDir, 3600);

/** The check and decoding of a data URL the simpler, slower way: a regular expression per slice for whitespace and for the alphabet. */
async function decodeAsBefore(url: string): Promise<Buffer> {
  const payload = url.slice(url.indexOf(",") + 1);
  if (await someSlice(payload, (slice) => /\s/.test(slice))) throw new Error("whitespace");
  if (await someSlice(payload, (slice) => /[^A-Za-z0-9+/]/.test(slice.replace(/=+$/, "")))) throw new Error("not base64");
  return decodeBase64(payload);
}

/** Base64 of `bytes` a slice at a time, as facade/result-responses.ts writes an answer's image. */
async function encodeAsWritten(bytes: Buffer): Promise<number> {
  let length = 0;
  for await (const slice of base64Slices(bytes)) length += slice.length;
  return length;
}

type Way = () => Promise<unknown> | unknown;
const steps: [step: string, now: Way, before?: Way][] = [
  [
    "read and scan a 24 MB body (64 KB chunks)",
    async () => {
      const whole = Buffer.allocUnsafe(body.length);
      const scanning = new JsonBodyScanner(64 * 1024);
      let at = 0;
      for (const chunk of chunks) {
        at += chunk.copy(whole, at);
        scanning.scan(chunk);
        if (at % (2 * 2 ** 20) === 0) await nextTurn(); // a socket hands over up to ~2 MB per turn
      }
    },
  ],
  ["check UTF-8", () => isUtf8Around(body, spans), () => isUtf8(body)],
  ["its data URL as text", () => longStringTexts(body, spans), () => body.toString("latin1", spans[0]!.start, spans[0]!.end)],
  ["JSON.parse the rest, put the text back", () => parseScannedJson(body, 0, spans, texts)],
  ["zod: the operation's input schema", () => backgroundRemoveInput.parse(input)],
  ["the key's lookup (SQLite)", () => keys.authenticate(key, "tools.backgroundRemove")],
  ["the quota's count (SQLite)", () => quota.consume({ key: { id: "bench", limit: 1_000_000 } })],
  ["check and decode the data URL", () => fetchImage(input.imageUrl, fetchOptions, undefined, urlBytes), () => decodeAsBefore(flatUrl)],
  // Before, the procedure made the data URL and the facade encoded the bytes again as it wrote them.
  ["the answer's 24 MB data URL (JSON)", () => encodeAsWritten(image), async () => [await encodeBase64(image), await encodeAsWritten(image)]],
];

console.log(`${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}, node ${process.version}; load ${load()}; ${RUNS} runs, interleaved`);
const results = new Map<string, { blockMs: number; cpuMs: number }[]>();
for (let run = 0; run < RUNS; run++) {
  for (const [step, now, before] of steps) {
    for (const [way, work] of [["now", now], ["before", before]] as const) {
      if (!work) continue;
      const key = `${step} | ${way}`;
      results.set(key, [...(results.get(key) ?? []), await measure(work)]);
    }
  }
}
console.log("\n| step | way | CPU ms (median) | longest block ms (median) |\n|---|---|---|---|");
let total = 0;
for (const [key, runs] of results) {
  const [step, way] = key.split(" | ");
  const cpu = median(runs.map((r) => r.cpuMs));
  if (way === "now") total += cpu;
  console.log(`| ${step} | ${way} | ${cpu.toFixed(1)} | ${median(runs.map((r) => r.blockMs)).toFixed(1)} |`);
}
console.log(`\nthe steps now: ${total.toFixed(0)} ms of CPU per 12 MP call; load ${load()}`);
await keys.close();
await quota.close();
fs.rmSync(dataDir, { recursive: true, force: true });
