/**
 * Resident memory, measured in a fresh child process (resident-memory-probe.ts): a session whose
 * working set is above the runtime's arena limit gives its activation memory back after each run, and
 * an evicted session gives back everything. The control run (working set under the limit, arena kept)
 * shows that the probe does see activation memory, so the first assertions are not vacuous.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ARENA_MAX_WORKING_BYTES } from "../../workers/onnx/session-cost.js";

const MiB = 1024 * 1024;
/** Allocator and V8 noise allowed between two readings of the same process's resident memory. */
const NOISE_MIB = 40;

interface Reading {
  baseline: number;
  afterRun: number;
  afterSecondRun: number;
  afterEviction: number;
  evictions: number;
}

async function probe(declaredWorkingMiB: number): Promise<Reading> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--expose-gc", "--import", "tsx", "test/onnx/resident-memory-probe.ts", String(declaredWorkingMiB)],
    { timeout: 90_000 },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as Reading;
}

describe("resident memory of model sessions", () => {
  it("returns a large session's working memory after every run and everything after eviction", async () => {
    // Three 64 MiB activations per run (see wideActivationModel).
    const reading = await probe(ARENA_MAX_WORKING_BYTES / MiB + 64);
    expect(reading.evictions).toBeGreaterThanOrEqual(1);
    expect(reading.afterRun - reading.baseline).toBeLessThan(NOISE_MIB);
    expect(reading.afterSecondRun - reading.baseline).toBeLessThan(NOISE_MIB);
    expect(reading.afterEviction - reading.baseline).toBeLessThan(NOISE_MIB);
  }, 120_000);

  it("keeps a small session's arena between runs (the probe sees activation memory) and frees it on eviction", async () => {
    const reading = await probe(16);
    expect(reading.afterRun - reading.baseline).toBeGreaterThan(64 + NOISE_MIB);
    expect(reading.afterEviction - reading.baseline).toBeLessThan(NOISE_MIB);
  }, 120_000);
});
