/**
 * Paused readers of a finished job's multi-MB result: every open result download, event stream and
 * job lookup must hold a chunk of the result, not a copy of it, while its client does not read. The
 * service runs in its own process, so its resident memory is measured alone, and many raw sockets
 * that never read past the response's start ask for the result at once. Each key may hold only so
 * many event streams and result downloads open: one more is 429 with `Retry-After`, and a place
 * frees up when a stream closes.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../core/config.js";
import { seededRandom } from "../../../core/seeded-random.js";
import { openApiKeyStore } from "../../../server/keys/open-api-key-store.js";
import { dataUrl } from "../../support/test-images.js";
import { makeTempDir } from "../../support/temp-dir.js";
import { mainProcessEnv, startMainProcess } from "../../support/main-process.js";

const MiB = 1024 * 1024;
/** Readers of each kind (raw result, event stream, job lookup) in the memory test. */
const READERS_PER_KIND = 40;
/** The caps of the service under test: the memory test's readers fit; the cap test fills its key's. */
const CAP = READERS_PER_KIND;

const dataDir = makeTempDir("test");
let child: ChildProcess | undefined;
let port = 0;
/** Two keys with a finished job each: the cap test's streams never share a key with the memory test's. */
const jobs: { key: string; id: string; resultBytes: number }[] = [];

afterAll(() => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The child's resident memory in MiB (Linux). */
function residentMiB(pid: number): number {
  const line = fs.readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((entry) => entry.startsWith("VmRSS:"))!;
  return Number(/(\d+)/.exec(line)![1]) / 1024;
}

/** A PNG of seeded noise: it barely compresses, so its upscale is a result of several MB. */
async function noisePng(side: number): Promise<Buffer> {
  const random = seededRandom(10);
  const pixels = Buffer.alloc(side * side * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = Math.floor(random.uniform() * 256);
  return sharp(pixels, { raw: { width: side, height: side, channels: 3 } }).png().toBuffer();
}

interface OpenReader {
  socket: net.Socket;
  /** Everything read before pausing, as latin1. */
  head: string;
}

/**
 * A raw GET that reads until `marker` has arrived (or the server has closed the connection) and
 * then stops reading: the kernel buffers fill and the server's writes wait.
 */
function pausedReader(path: string, key: string, marker: string): Promise<OpenReader> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let head = "";
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no ${JSON.stringify(marker)} from GET ${path} within 30 s; got ${JSON.stringify(head.slice(0, 300))}`));
    }, 30_000);
    const done = () => {
      clearTimeout(giveUp);
      socket.off("data", onData);
      resolve({ socket, head });
    };
    const onData = (data: Buffer) => {
      head += data.toString("latin1");
      if (!head.includes(marker)) return;
      socket.pause();
      done();
    };
    socket.on("data", onData);
    socket.on("error", () => undefined);
    socket.once("end", done);
    socket.write(`GET /api${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  });
}

const statusOf = (head: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);

/** Opens `count` paused readers of `path`, a few at a time. */
async function openReaders(count: number, path: string, key: string, marker: string): Promise<OpenReader[]> {
  const readers: OpenReader[] = [];
  while (readers.length < count) readers.push(...(await Promise.all(Array.from({ length: Math.min(20, count - readers.length) }, () => pausedReader(path, key, marker)))));
  return readers;
}

async function api(path: string, key: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/api${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) } });
}

beforeAll(async () => {
  const env = mainProcessEnv(dataDir, {
    LOG_LEVEL: "warn",
    ATELIER_CONSOLE: "off",
    ATELIER_JOB_MAX_EVENT_STREAMS_PER_KEY: String(CAP),
    ATELIER_JOB_MAX_RESULT_DOWNLOADS_PER_KEY: String(CAP),
  });
  const keys = await openApiKeyStore(loadConfig(env));
  const made = [(await keys.create({ name: "memory", hourlyLimit: null })).key, (await keys.create({ name: "cap", hourlyLimit: null })).key];
  await keys.close();

  const started = await startMainProcess(env);
  child = started.child;
  const { url } = started;
  port = Number(new URL(url).port);

  const imageUrl = dataUrl(await noisePng(400));
  const finished = async (key: string) => {
    const accepted = await api("/v1/tools/upscale", key, {
      method: "POST",
      headers: { "content-type": "application/json", prefer: "respond-async" },
      body: JSON.stringify({ imageUrl, scale: 3, model: "lanczos" }),
    });
    expect(accepted.status).toBe(202);
    const { id } = (await accepted.json()) as { id: string };
    // The event stream ends with the result: the job has finished.
    expect(await (await api(`/v1/jobs/${id}/events`, key)).text()).toContain("event: result");
    const result = await api(`/v1/jobs/${id}/result`, key);
    expect(result.status).toBe(200);
    return { key, id, resultBytes: (await result.arrayBuffer()).byteLength };
  };
  jobs.push(...(await Promise.all(made.map(finished))));
}, 60_000);

describe("paused readers of a multi-MB result", () => {
  it("hold a chunk each, not the result: the router's memory grows far less than readers x result", async () => {
    const { key, id, resultBytes } = jobs[0]!;
    expect(resultBytes).toBeGreaterThan(3 * MiB);
    // One of each read whole first, so what is measured is the readers, not first use.
    await (await api(`/v1/jobs/${id}`, key)).arrayBuffer();
    const before = residentMiB(child!.pid!);

    const readers = [
      ...(await openReaders(READERS_PER_KIND, `/v1/jobs/${id}/result`, key, "\r\n\r\n")),
      ...(await openReaders(READERS_PER_KIND, `/v1/jobs/${id}/events?include=result`, key, "event: result\ndata: ")),
      ...(await openReaders(READERS_PER_KIND, `/v1/jobs/${id}`, key, "\r\n\r\n")),
    ];
    try {
      for (const reader of readers) expect(statusOf(reader.head)).toBe(200);
      // The peak over a second, while every reader is stalled mid-result.
      let peak = 0;
      for (let sample = 0; sample < 5; sample++) {
        peak = Math.max(peak, residentMiB(child!.pid!));
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const grownMiB = peak - before;
      const copiesMiB = (readers.length * resultBytes) / MiB;
      console.log(`${readers.length} paused readers of a ${(resultBytes / MiB).toFixed(1)} MiB result: resident memory ${before.toFixed(0)} -> ${peak.toFixed(0)} MiB (a copy each would be ${copiesMiB.toFixed(0)} MiB)`);
      expect(grownMiB).toBeLessThan(copiesMiB / 8);
    } finally {
      for (const reader of readers) reader.socket.destroy();
    }
  }, 60_000);

  it("answers 429 with Retry-After once a key's streams or downloads are at the cap, and frees a place when one closes", async () => {
    const { key, id } = jobs[1]!;
    for (const [path, marker] of [
      [`/v1/jobs/${id}/result`, "\r\n\r\n"],
      [`/v1/jobs/${id}/events?include=result`, "event: result\ndata: "],
    ] as const) {
      const readers = await openReaders(CAP, path, key, marker);
      try {
        for (const reader of readers) expect(statusOf(reader.head)).toBe(200);
        const refused = await api(path, key);
        expect(refused.status).toBe(429);
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        const body = (await refused.json()) as { code: string; message: string };
        expect(body.code).toBe("TOO_MANY_STREAMS");
        expect(body.message).toMatch(/ATELIER_JOB_MAX_(EVENT_STREAMS|RESULT_DOWNLOADS)_PER_KEY/);

        readers.pop()!.socket.destroy();
        const deadline = Date.now() + 10_000;
        let again: Response;
        while ((again = await api(path, key)).status === 429 && Date.now() < deadline) {
          await again.arrayBuffer();
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(again.status).toBe(200);
        expect((await again.arrayBuffer()).byteLength).toBeGreaterThan(3 * MiB);
      } finally {
        for (const reader of readers) reader.socket.destroy();
      }
    }
  }, 60_000);
});
