/**
 * Resident memory, measured in a fresh child process (resident-memory-probe.ts): a session without
 * onnxruntime's arena gives its activation memory back after each run, and an evicted session gives
 * back everything; a session with the arena keeps it (the control: the probe does see activation
 * memory, so the first assertions are not vacuous) until it is evicted, or released for being idle.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const MiB = 1024 * 1024;
/** Allocator and V8 noise allowed between two readings of the same process's resident memory. */
const NOISE_MIB = 40;

interface Reading {
  baseline: number;
  afterRun: number;
  afterSecondRun: number;
  afterEviction: number;
  evictions: number;
  idleReleases: number;
}

async function probe(declaredWorkingMiB: number, arena: "arena" | "no-arena", release: "evict" | "idle" = "evict"): Promise<Reading> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--expose-gc", "--import", "tsx", "test/onnx/resident-memory-probe.ts", String(declaredWorkingMiB), arena, release],
    { timeout: 90_000 },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as Reading;
}

describe("resident memory of model sessions", () => {
  it("returns the working memory of a session without the arena after every run, and everything after eviction", async () => {
    // Three 64 MiB activations per run (see wideActivationModel).
    const reading = await probe(256, "no-arena");
    expect(reading.evictions).toBeGreaterThanOrEqual(1);
    expect(reading.afterRun - reading.baseline).toBeLessThan(NOISE_MIB);
    expect(reading.afterSecondRun - reading.baseline).toBeLessThan(NOISE_MIB);
    expect(reading.afterEviction - reading.baseline).toBeLessThan(NOISE_MIB);
  }, 120_000);

  it("keeps an arena session's working memory between runs (the probe sees activation memory) and frees it on eviction", async () => {
    const reading = await probe(256, "arena");
    expect(reading.afterRun - reading.baseline).toBeGreaterThan(64 + NOISE_MIB);
    expect(reading.evictions).toBeGreaterThanOrEqual(1);
    expect(reading.afterEviction - reading.baseline).toBeLessThan(NOISE_MIB);
  }, 120_000);

  it("releases an arena session that asks for it once it has been idle, and its memory goes back", async () => {
    const reading = await probe(256, "arena", "idle");
    expect(reading.afterSecondRun - reading.baseline).toBeGreaterThan(64 + NOISE_MIB);
    expect(reading.idleReleases).toBe(1);
    expect(reading.afterEviction - reading.baseline).toBeLessThan(NOISE_MIB);
  }, 120_000);
});
