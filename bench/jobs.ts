/**
 * Jobs benchmark: 200 small jobs from 10 keys through the real queue (SQLite, in-process gRPC
 * workers, HTTP), and the time the job machinery adds over the synchronous path.
 *
 *   npx tsx bench/jobs.ts [jobs=200] [keys=10]
 *
 * - throughput: every key submits its share with `Prefer: respond-async` as fast as it can (all keys
 *   at once); jobs per second from the first submission to the last job finished, and each key's
 *   longest wait in the queue (startedAt - createdAt) and longest turnaround (finishedAt - createdAt).
 *   Fair scheduling shows as similar maxima across keys.
 * - overhead: the same small operation (prompt improvement with the builtin engine: no model, about a
 *   millisecond of work) called synchronously and as a job answered in the same request
 *   (`Prefer: wait=10`), interleaved, one at a time; the median difference is what submitting,
 *   queueing, running and answering through a job costs (goal: under 5 ms), in wall time and in the
 *   process's CPU time, the steadier figure when other work shares the cores.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { startAtelier } from "../bin/start-atelier.js";
import { median, percentile } from "./support/figures.js";

const TOTAL = Number(process.argv[2] ?? 200);
const KEYS = Number(process.argv[3] ?? 10);
const OVERHEAD_RUNS = 200;

interface Job {
  id: string;
  status: string;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-bench-jobs-"));
  const config = loadConfig({ ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", ATELIER_DATA_DIR: dataDir, ATELIER_RATE_LIMIT_PER_HOUR: "1000000" });
  const atelier = await startAtelier(config, createLogger("silent"));
  const keys = await Promise.all(Array.from({ length: KEYS }, (_, i) => atelier.services.keys.create({ name: `bench-${i}` }).then((created) => created.key)));
  const post = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${atelier.url}/api/v1/prompt/improve`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const getJob = async (key: string, id: string) => (await (await fetch(`${atelier.url}/api/v1/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as Job;
  try {
    // Warm-up: the worker's engine, the HTTP connections, SQLite's statements.
    for (let i = 0; i < 20; i++) {
      await post(keys[0]!, { prompt: `warm ${i}` });
      await post(keys[0]!, { prompt: `warm ${i}` }, { prefer: "wait=10" });
    }

    // Throughput and fairness.
    const perKey = Math.ceil(TOTAL / KEYS);
    const started = performance.now();
    const submitted = await Promise.all(
      keys.map(async (key, k) => {
        const ids: string[] = [];
        for (let i = 0; i < perKey && k * perKey + i < TOTAL; i++) {
          const response = await post(key, { prompt: `a lighthouse number ${k}-${i}` }, { prefer: "respond-async" });
          if (response.status !== 202) throw new Error(`submission answered ${response.status}: ${await response.text()}`);
          ids.push(((await response.json()) as Job).id);
        }
        return { key, ids };
      }),
    );
    const finished = await Promise.all(
      submitted.map(async ({ key, ids }) => {
        const jobs: Job[] = [];
        for (const id of ids) {
          for (;;) {
            const job = await getJob(key, id);
            if (job.finishedAt) {
              jobs.push(job);
              break;
            }
            await new Promise((resolve) => setTimeout(resolve, 25));
          }
        }
        return jobs;
      }),
    );
    const elapsedS = (performance.now() - started) / 1000;
    const all = finished.flat();
    const failed = all.filter((job) => job.status !== "succeeded").length;
    const waits = finished.map((jobs) => Math.max(...jobs.map((job) => Date.parse(job.startedAt!) - Date.parse(job.createdAt))));
    const turnarounds = finished.map((jobs) => Math.max(...jobs.map((job) => Date.parse(job.finishedAt!) - Date.parse(job.createdAt))));
    console.log(`## Throughput: ${all.length} jobs from ${KEYS} keys (job concurrency ${config.jobs.concurrency}, ${os.availableParallelism()} cores)\n`);
    console.log(`- ${(all.length / elapsedS).toFixed(1)} jobs/s (${elapsedS.toFixed(2)} s from first submission to last finish), ${failed} not succeeded`);
    console.log(`- per-key longest queue wait, ms: ${waits.join(", ")} (spread ${Math.max(...waits) - Math.min(...waits)} ms)`);
    console.log(`- per-key longest turnaround, ms: ${turnarounds.join(", ")}\n`);

    // Overhead over the synchronous path.
    const sync: number[] = [];
    const async: number[] = [];
    const syncCpu: number[] = [];
    const asyncCpu: number[] = [];
    const cpuMs = (since: NodeJS.CpuUsage) => {
      const used = process.cpuUsage(since);
      return (used.user + used.system) / 1000;
    };
    for (let i = 0; i < OVERHEAD_RUNS; i++) {
      const body = { prompt: `a quiet harbour ${i}` };
      let t = performance.now();
      let cpu = process.cpuUsage();
      const direct = await post(keys[1]!, body);
      await direct.arrayBuffer();
      sync.push(performance.now() - t);
      syncCpu.push(cpuMs(cpu));
      t = performance.now();
      cpu = process.cpuUsage();
      const viaJob = await post(keys[1]!, body, { prefer: "wait=10" });
      if (viaJob.status !== 200) throw new Error(`wait answered ${viaJob.status}`);
      await viaJob.arrayBuffer();
      async.push(performance.now() - t);
      asyncCpu.push(cpuMs(cpu));
    }
    const differences = sync.map((ms, i) => async[i]! - ms);
    console.log(`## Overhead of a job over the synchronous call (${OVERHEAD_RUNS} interleaved pairs, prompt improvement)\n`);
    console.log("| | median ms | p90 ms |");
    console.log("|---|---|---|");
    console.log(`| synchronous | ${median(sync).toFixed(2)} | ${percentile(sync, 0.9).toFixed(2)} |`);
    console.log(`| job, Prefer: wait | ${median(async).toFixed(2)} | ${percentile(async, 0.9).toFixed(2)} |`);
    console.log(`| difference (per pair) | **${median(differences).toFixed(2)}** | ${percentile(differences, 0.9).toFixed(2)} |`);
    // Process CPU time (router, worker and client share this process): steadier than wall time when
    // other work shares the cores.
    const cpuDifferences = syncCpu.map((ms, i) => asyncCpu[i]! - ms);
    console.log(`| CPU ms, synchronous / job / difference | ${median(syncCpu).toFixed(2)} / ${median(asyncCpu).toFixed(2)} / **${median(cpuDifferences).toFixed(2)}** | |`);
    console.log(`\n(load average ${os.loadavg()[0]!.toFixed(1)} on ${os.availableParallelism()} cores)`);
  } finally {
    await atelier.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
