/**
 * Soak: one service on loopback (a child process running `bin/service.ts`, so its resident memory
 * is its own) under mixed good and bad traffic for a while, printing every 10 s the requests, the
 * statuses, the p99 latency and the service's resident memory, then a summary. Bad traffic is the
 * hostile suite's: malformed and deeply nested JSON, wrong media types, missing and forged keys,
 * forbidden URLs, image bombs, oversized bodies, tRPC included.
 *
 *   npx tsx bench/soak.ts [seconds=300] [concurrency=8]
 *
 * Exit code 1 when any bad request got a 5xx (other than 503 MODEL_NOT_INSTALLED or 502 for an
 * unreachable source, which are server states, not faults) or a good one failed.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { openApiKeyStore } from "../server/keys/open-api-key-store.js";
import { freeLoopbackPort } from "../test/support/free-port.js";
import { dataUrl, gradientPng } from "../test/support/test-images.js";
import { pngBomb, useAmplificationSvg } from "../test/hostile/support/image-bombs.js";
import { errorCodeOf, NOT_A_FAULT } from "../test/hostile/support/hostile-service.js";
import { percentile } from "./support/figures.js";

const seconds = Number(process.argv[2] ?? 300);
const concurrency = Number(process.argv[3] ?? 8);

interface Call {
  name: string;
  good: boolean;
  method: string;
  path: string;
  headers: Record<string, string | number>;
  body?: string;
}

async function traffic(key: string): Promise<Call[]> {
  const json = { "content-type": "application/json", authorization: `Bearer ${key}` };
  const small = dataUrl(await gradientPng(32, 24));
  const post = (name: string, good: boolean, pathname: string, body: string, headers: Record<string, string | number> = json): Call => ({ name, good, method: "POST", path: pathname, headers, body });
  return [
    post("improve", true, "/api/v1/prompt/improve", JSON.stringify({ prompt: "a lighthouse at dusk" })),
    post("improve-trpc", true, "/trpc/prompt.improve", JSON.stringify({ prompt: "a red fox in snow" })),
    post("upscale", true, "/api/v1/tools/upscale", JSON.stringify({ imageUrl: small, scale: 2, model: "lanczos" })),
    { name: "models", good: true, method: "GET", path: "/api/v1/models", headers: {} },
    { name: "models-head", good: true, method: "HEAD", path: "/api/v1/models", headers: {} },
    post("malformed", false, "/api/v1/prompt/improve", '{"prompt":'),
    post("malformed-trpc", false, "/trpc/prompt.improve", '{"prompt":'),
    post("deep", false, "/api/v1/generate", `{"prompt":"x","a":${"[".repeat(5000)}${"]".repeat(5000)}}`),
    post("media-type", false, "/api/v1/prompt/improve", JSON.stringify({ prompt: "a cat" }), { ...json, "content-type": "application/json; charset=latin1" }),
    post("no-key", false, "/api/v1/tools/upscale", JSON.stringify({ imageUrl: small }), { "content-type": "application/json" }),
    post("forged-key", false, "/trpc/tools.upscale", JSON.stringify({ imageUrl: small }), { ...json, authorization: `Bearer ${key.slice(0, -2)}xx` }),
    post("ssrf", false, "/api/v1/tools/upscale", JSON.stringify({ imageUrl: "http://169.254.169.254/latest/meta-data/", scale: 2 })),
    post("ssrf-loopback", false, "/api/v1/tools/upscale", JSON.stringify({ imageUrl: "http://[::ffff:127.0.0.1]:1/x.png", scale: 2 })),
    post("png-bomb", false, "/api/v1/tools/upscale", JSON.stringify({ imageUrl: dataUrl(pngBomb(100_000, 100_000)), scale: 2 })),
    post("svg", false, "/api/v1/tools/upscale", JSON.stringify({ imageUrl: dataUrl(useAmplificationSvg(7), "image/svg+xml"), scale: 2 })),
    post("unknown-field", false, "/api/v1/tools/upscale", JSON.stringify({ imageUrl: small, scale: 2, output_format: "png" })),
    post("too-large", false, "/api/v1/tools/upscale", "{}", { ...json, "content-length": 2 ** 31 }),
  ];
}

function send(port: number, call: Call): Promise<{ status: number; code: string | undefined; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.request({ host: "127.0.0.1", port, method: call.method, path: call.path, headers: call.headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, code: errorCodeOf(Buffer.concat(chunks).toString()), ms: performance.now() - started }));
    });
    request.on("error", () => resolve({ status: 0, code: "CONNECTION", ms: performance.now() - started }));
    request.end(call.headers["content-length"] === 2 ** 31 ? undefined : call.body);
  });
}

function residentMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

const p99 = (values: number[]) => (values.length === 0 ? 0 : percentile(values, 0.99));

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-soak-"));
  const port = await freeLoopbackPort();
  const env = { ...process.env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn", ATELIER_DATA_DIR: dataDir };
  const keys = await openApiKeyStore(loadConfig(env), { logger: createLogger("silent") });
  const { key } = await keys.create({ name: "soak", hourlyLimit: 1_000_000 });
  await keys.close();

  const child = spawn(process.execPath, ["--import", "tsx", "bin/service.ts"], { env, stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on("line", (line) => line.includes("is listening") && resolve());
    child.once("exit", (code) => reject(new Error(`the service exited with ${code}`)));
  });
  const calls = await traffic(key);
  console.log(`soak: ${seconds} s, ${concurrency} clients, ${calls.length} kinds of call (${calls.filter((c) => c.good).length} good), service pid ${child.pid} on port ${port}`);
  console.log("   t  requests   req/s  p99 ms  RSS MiB  statuses");

  const totals = new Map<string, number>();
  const faults: string[] = [];
  const rss: number[] = [residentMiB(child.pid!)];
  let window: number[] = [];
  let allLatencies: number[] = [];
  let requests = 0;
  let lastRequests = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let next = 0;

  const report = setInterval(() => {
    const t = Math.round((performance.now() - started) / 1000);
    rss.push(residentMiB(child.pid!));
    const statuses = [...totals.entries()].sort().map(([status, count]) => `${status}:${count}`).join(" ");
    console.log(`${String(t).padStart(4)}  ${String(requests).padStart(8)}  ${String(Math.round((requests - lastRequests) / 10)).padStart(6)}  ${String(Math.round(p99(window))).padStart(6)}  ${String(rss.at(-1)).padStart(7)}  ${statuses}`);
    lastRequests = requests;
    allLatencies = allLatencies.concat(window).slice(-200_000);
    window = [];
  }, 10_000);

  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const call = calls[next++ % calls.length]!;
        const answer = await send(port, call);
        requests++;
        window.push(answer.ms);
        totals.set(String(answer.status), (totals.get(String(answer.status)) ?? 0) + 1);
        const fault = call.good ? answer.status !== 200 : answer.status >= 500 && !NOT_A_FAULT.has(answer.code ?? "");
        if (fault || answer.status === 0) faults.push(`${call.name} → ${answer.status} ${answer.code ?? ""}`);
      }
    }),
  );
  clearInterval(report);
  allLatencies = allLatencies.concat(window);
  rss.push(residentMiB(child.pid!));
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  fs.rmSync(dataDir, { recursive: true, force: true });

  const elapsed = (performance.now() - started) / 1000;
  console.log(`\nsummary: ${requests} requests in ${elapsed.toFixed(0)} s (${(requests / elapsed).toFixed(0)} req/s), p99 ${Math.round(p99(allLatencies))} ms`);
  console.log(`statuses: ${[...totals.entries()].sort().map(([status, count]) => `${status}:${count}`).join(" ")}`);
  console.log(`resident memory MiB: start ${rss[0]}, after the first interval ${rss[1] ?? rss[0]}, end ${rss.at(-1)}, max ${Math.max(...rss)}`);
  console.log(`faults (5xx for bad input, or a good call failing): ${faults.length}${faults.length > 0 ? `, first: ${[...new Set(faults)].slice(0, 5).join("; ")}` : ""}`);
  process.exit(faults.length > 0 ? 1 : 0);
}

await main();
