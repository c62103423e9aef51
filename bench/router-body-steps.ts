/**
 * The router's work on a large image call, step by step, in one process: the longest time each way
 * of doing it holds the event loop (the longest gap between turns of a ticker), in one piece
 * (JSON.parse of the body, one regular expression and one decode of the base64, one encode, one
 * JSON.stringify: the router before issue 19) and in slices (the router now: json-body's scanner,
 * the image source's data URL decoding, image-io's encoding). Interleaved runs, medians: on a busy
 * machine the figures are inflated alike, and the ratio is what to read.
 *
 *   npx tsx bench/router-body-steps.ts [--runs N]
 */
import crypto from "node:crypto";
import os from "node:os";
import { setImmediate as nextTurn } from "node:timers/promises";
import { parseArgs } from "node:util";
import { encodeBase64 } from "../core/base64-slices.js";
import { JsonBodyScanner, longStringTexts, parseScannedJson } from "../facade/json-body-scanner.js";
import { fetchImage } from "../server/image-source/fetch-image.js";

const { values } = parseArgs({ options: { runs: { type: "string" } } });
const RUNS = Number(values.runs ?? 5);
const load = () => os.loadavg().map((value) => value.toFixed(1)).join(" ");
const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)]!;

/**
 * The longest event-loop block while `work` runs, and its wall time, in ms: a ticker re-queues
 * itself with setImmediate and records the longest gap between its turns (a step done in one piece
 * is one gap as long as the step; sliced work yields to it between slices).
 */
async function measure(work: () => Promise<unknown> | unknown): Promise<{ blockMs: number; wallMs: number }> {
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
  const started = performance.now();
  await work();
  const wallMs = performance.now() - started;
  await nextTurn();
  ticking = false;
  await nextTurn();
  return { blockMs: longest, wallMs };
}

const image = crypto.randomBytes(18 * 2 ** 20); // a 12 MP PNG is about this size
const body = Buffer.from(JSON.stringify({ imageUrl: `data:image/png;base64,${image.toString("base64")}`, model: "portrait-selfie" }));
const chunks: Buffer[] = [];
for (let at = 0; at < body.length; at += 64 * 1024) chunks.push(body.subarray(at, at + 64 * 1024));
const options = { maxBytes: 64 * 2 ** 20 } as Parameters<typeof fetchImage>[1];
const utf8 = new TextDecoder("utf-8", { fatal: true });
const imageUrl = (JSON.parse(body.toString()) as { imageUrl: string }).imageUrl;

const steps: Record<string, Record<"one piece" | "slices", () => Promise<unknown> | unknown>> = {
  "parse a 24 MB body": {
    "one piece": () => JSON.parse(utf8.decode(Buffer.concat(chunks))),
    slices: async () => {
      const scanner = new JsonBodyScanner(64 * 1024);
      for (const chunk of chunks) {
        scanner.scan(chunk);
        await nextTurn(); // chunks arrive one by one from the socket
      }
      const whole = Buffer.concat(chunks);
      return parseScannedJson(whole, 0, scanner.longStrings, await longStringTexts(whole, scanner.longStrings));
    },
  },
  "check and decode its data URL": {
    "one piece": () => {
      const payload = imageUrl.slice(imageUrl.indexOf(",") + 1);
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(payload)) throw new Error("bad");
      return Buffer.from(payload, "base64");
    },
    slices: () => fetchImage(imageUrl, options),
  },
  "encode an 18 MB result": {
    "one piece": () => `data:image/png;base64,${Buffer.from(image).toString("base64")}`,
    slices: async () => `data:image/png;base64,${await encodeBase64(image)}`,
  },
};

console.log(`${os.cpus()[0]?.model ?? "cpu"} x${os.availableParallelism()}, node ${process.version}; load ${load()}; ${RUNS} runs, interleaved`);
const results = new Map<string, { blockMs: number; wallMs: number }[]>();
for (let run = 0; run < RUNS; run++) {
  for (const [step, ways] of Object.entries(steps)) {
    for (const [way, work] of Object.entries(ways)) {
      const key = `${step} | ${way}`;
      results.set(key, [...(results.get(key) ?? []), await measure(work)]);
    }
  }
}
console.log("\n| step | done | longest block ms (median) | wall ms (median) |\n|---|---|---|---|");
for (const [key, runs] of results) {
  const [step, way] = key.split(" | ");
  console.log(`| ${step} | ${way} | ${median(runs.map((r) => r.blockMs)).toFixed(1)} | ${median(runs.map((r) => r.wallMs)).toFixed(0)} |`);
}
console.log(`\nload ${load()}`);
