/**
 * Run in a child process by measured-budget.test.ts (a fresh process, so resident memory is this
 * runtime's alone). Prints one JSON line. Argument: the scenario.
 *
 * - `charged`: a model declared with no working memory (estimate about 2 MiB) whose runs really take
 *   three 64 MiB activations, under a 100 MiB budget; then a second small model loads.
 * - `live` / `live-control`: two small models whose charges fit, with a process limit 100 MiB above
 *   resident memory after the first loads; `live` then holds 200 MiB outside the runtime (a buffer of
 *   the caller's, as a decoded image would be) before the second loads.
 */
import { ModelRuntime } from "../../workers/onnx/onnx-runtime.js";
import { addConstantModel, wideActivationModel } from "./tiny-models.js";

const MiB = 1024 * 1024;
const scenario = process.argv[2];
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined };
const small = (constant: number) => ({ x: { data: Float32Array.of(constant), dims: [1, 1] } });

if (scenario === "charged") {
  const runtime = new ModelRuntime({ threads: 1, memoryBudgetBytes: 100 * MiB, logger: silent });
  const side = 256;
  await runtime.model("wide", async () => wideActivationModel(16)).run({ x: { data: new Float32Array(side * side).fill(1), dims: [1, 1, side, side] } });
  const wide = runtime.stats().sessions.find((session) => session.key === "wide")!;
  await runtime.model("small", async () => addConstantModel(1)).run(small(1));
  const after = runtime.stats();
  await runtime.dispose();
  console.log(JSON.stringify({ wide, evictions: after.evictions, keys: after.sessions.map((session) => session.key) }));
} else {
  // A first runtime loads onnxruntime into the process, so the limit below is set above all of that.
  const warm = new ModelRuntime({ threads: 1, memoryBudgetBytes: 64 * MiB, logger: silent });
  await warm.run("warm", async () => addConstantModel(0), small(0));
  await warm.dispose();
  (globalThis as { gc?: () => void }).gc?.();
  const budget = 64 * MiB;
  const limit = process.memoryUsage.rss() + 150 * MiB;
  const runtime = new ModelRuntime({ threads: 1, memoryBudgetBytes: budget, processMarginBytes: limit - budget, logger: silent });
  await runtime.run("a", async () => addConstantModel(1), small(1));
  // Held outside the runtime, as the images of calls in flight are; written, so it is resident.
  const ballast = scenario === "live" ? Buffer.alloc(250 * MiB, 1) : Buffer.alloc(0);
  await runtime.run("b", async () => addConstantModel(2), small(2));
  const after = runtime.stats();
  await runtime.dispose();
  console.log(JSON.stringify({ ballastBytes: ballast.byteLength, chargedBytes: after.chargedBytes, budgetBytes: after.budgetBytes, evictions: after.evictions, keys: after.sessions.map((session) => session.key) }));
}
