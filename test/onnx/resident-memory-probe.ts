/**
 * Run in a child process by resident-memory.test.ts (a fresh process, so the figures are this
 * runtime's alone): loads a model with a large working set into a ModelRuntime, runs it, evicts it by
 * loading another under a small budget, and prints resident memory (MiB) at each step as JSON.
 * Arguments: the working set to declare, in MiB; `arena` or `no-arena` (onnxruntime's CPU arena for the
 * wide session); with `idle`, the wide session asks to be released when idle, and the probe waits for
 * that instead of evicting it by loading another.
 */
import { ModelRuntime } from "../../workers/onnx/onnx-runtime.js";
import { addConstantModel, wideActivationModel } from "./tiny-models.js";

const MiB = 1024 * 1024;
const declaredWorking = Number(process.argv[2]) * MiB;
const arena = process.argv[3] === "arena";
const idle = process.argv[4] === "idle";
const IDLE_RELEASE_MS = 300;
const gc = (globalThis as { gc?: () => void }).gc;
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));
async function residentMiB(): Promise<number> {
  gc?.();
  await settle();
  return Math.round(process.memoryUsage().rss / MiB);
}

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined };
const runtime = new ModelRuntime({ threads: 1, memoryBudgetBytes: declaredWorking + 16 * MiB, idleReleaseMs: IDLE_RELEASE_MS, logger: silent });
// The inference thread and onnxruntime itself, loaded by a first small session, are not the model's cost.
await runtime.model("small", async () => addConstantModel(1)).run({ x: { data: Float32Array.of(1), dims: [1, 1] } });
const baseline = await residentMiB();

const wide = runtime.model("wide", async () => wideActivationModel(16), {
  workingBytes: declaredWorking,
  session: { cpuArena: arena, memoryPattern: false, releaseWhenIdle: idle },
});
const side = 256;
const input = { x: { data: new Float32Array(side * side).fill(1), dims: [1, 1, side, side] } };
const output = await wide.run(input);
if (Math.abs(output.y!.data[0]! - 1) > 1e-6) throw new Error(`wide model computed ${output.y!.data[0]}, expected 1`);
const afterRun = await residentMiB();
await wide.run(input);
const afterSecondRun = await residentMiB();

if (idle) {
  // Released by its idle timer alone: nothing else asks for room.
  await new Promise((resolve) => setTimeout(resolve, IDLE_RELEASE_MS * 3));
} else {
  // A session needing the whole budget evicts the idle wide one.
  await runtime.model("filler", async () => addConstantModel(2), { workingBytes: declaredWorking }).run({ x: { data: Float32Array.of(1), dims: [1, 1] } });
}
const { evictions, idleReleases } = runtime.stats();
const afterEviction = await residentMiB();
await runtime.dispose();
console.log(JSON.stringify({ baseline, afterRun, afterSecondRun, afterEviction, evictions, idleReleases }));
