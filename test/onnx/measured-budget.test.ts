/**
 * The model budget works from what models measurably cost in this process, not from their estimates,
 * and the process's live resident memory decides whether a load needs room: each scenario runs in a
 * fresh child process (measured-budget-probe.ts), so resident memory is the runtime's own.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const MiB = 1024 * 1024;

async function probe(scenario: string): Promise<any> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", "--import", "tsx", "test/onnx/measured-budget-probe.ts", scenario], { timeout: 180_000 });
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

describe("a model budget governed by measured memory", () => {
  it("charges a model its measured run peak, not its low estimate, and evicts it for the next model", async () => {
    const reading = await probe("charged");
    // Declared with no working memory: the estimate is the few MiB of a tiny graph.
    expect(reading.wide.estimatedBytes).toBeLessThan(4 * MiB);
    // Three 64 MiB activations per run: onnxruntime needs at least two of them at once.
    expect(reading.wide.measured.runPeakBytes).toBeGreaterThan(120 * MiB);
    expect(reading.wide.chargedBytes).toBeGreaterThan(100 * MiB);
    // Both estimates fit the 100 MiB budget together; the measured cost does not.
    expect(reading.evictions).toBe(1);
    expect(reading.keys).toEqual(["small"]);
  }, 240_000);

  it("evicts an idle model when the process's resident memory plus the next model's cost passes the budget plus margin", async () => {
    const [live, control] = await Promise.all([probe("live"), probe("live-control")]);
    // The two models' charges fit the budget either way; only the 250 MiB held outside differs.
    expect(live.chargedBytes).toBeLessThan(live.budgetBytes);
    expect(control).toMatchObject({ evictions: 0, keys: ["a", "b"] });
    expect(live).toMatchObject({ evictions: 1, keys: ["b"] });
  }, 240_000);
});
