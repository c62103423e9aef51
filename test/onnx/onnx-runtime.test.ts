/**
 * The model runtime with tiny generated ONNX models: lazy shared loading, reuse, least-recently-used
 * eviction under a budget, release when idle, pinning, per-session serialisation, cancellation, feed
 * validation, warm-up and disposal.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import { createLogger } from "../../core/logger.js";
import { inBackground } from "../../core/work-priority.js";
import { ModelRuntime, type ModelRuntimeOptions, type RuntimeLogger, type TensorMap } from "../../workers/onnx/onnx-runtime.js";
import { RunGate } from "../../workers/onnx/run-gate.js";
import { estimateSessionBytes } from "../../workers/onnx/session-cost.js";
import { addConstantModel, slowConvModel, twoInputModel } from "./tiny-models.js";

const silent: RuntimeLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined };

// The worker's pino logger must fit the runtime's logging interface.
const workerLogger: RuntimeLogger = createLogger("silent");

/** Every model built by addConstantModel has the same size, hence the same estimate. */
const SESSION_ESTIMATE = estimateSessionBytes(addConstantModel(1).byteLength);

const runtimes: ModelRuntime[] = [];
function makeRuntime(options: Partial<ModelRuntimeOptions> = {}): ModelRuntime {
  const runtime = new ModelRuntime({ threads: 1, memoryBudgetBytes: 64 * 1024 * 1024, logger: silent, ...options });
  runtimes.push(runtime);
  return runtime;
}
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.dispose()));
});

const feed = (...values: number[]): TensorMap => ({ x: { data: Float32Array.from(values), dims: [1, values.length] } });
const values = (outputs: TensorMap, name = "y") => [...outputs[name]!.data];

/** A loader that counts its calls and can be held until released. */
function countingLoader(bytes: () => Uint8Array) {
  let release: () => void = () => undefined;
  let held = Promise.resolve();
  const loader = Object.assign(
    async () => {
      loader.calls++;
      await held;
      return bytes();
    },
    {
      calls: 0,
      hold() {
        held = new Promise<void>((resolve) => (release = resolve));
      },
      release: () => release(),
    },
  );
  return loader;
}

function recordingLogger() {
  const warnings: string[] = [];
  const logger: RuntimeLogger = { debug: () => undefined, info: () => undefined, warn: (_details, message) => warnings.push(message) };
  return { logger, warnings };
}

const keysOf = (runtime: ModelRuntime) => runtime.stats().sessions.map((session) => session.key);

describe("loading", () => {
  it("is lazy, shared by concurrent first users, then reused", async () => {
    const runtime = makeRuntime();
    const load = countingLoader(() => addConstantModel(10));
    load.hold();
    const model = runtime.model("add-10", load);
    expect(load.calls).toBe(0);
    expect(runtime.stats().sessions).toEqual([]);

    const first = Promise.all([1, 2, 3, 4, 5].map((n) => model.run(feed(n))));
    await new Promise((resolve) => setImmediate(resolve));
    expect(runtime.stats().sessions).toMatchObject([{ key: "add-10", loaded: false, users: 6 }]);
    load.release();
    expect((await first).map((outputs) => values(outputs))).toEqual([[11], [12], [13], [14], [15]]);
    expect(load.calls).toBe(1);

    expect(values(await runtime.run("add-10", load, feed(0.5, -1)))).toEqual([10.5, 9]);
    expect(load.calls).toBe(1);
    expect(runtime.stats()).toMatchObject({ loads: 1, hits: 5, evictions: 0, loadedSessions: 1 });
    expect(runtime.stats().sessions[0]).toMatchObject({ key: "add-10", loaded: true, runs: 6, users: 0, estimatedBytes: SESSION_ESTIMATE });
  });

  it("reports the model's signature from session metadata", async () => {
    const runtime = makeRuntime();
    const signature = await runtime.model("two", async () => twoInputModel()).signature();
    expect(signature).toEqual({
      inputs: [
        { name: "a", type: "float32", shape: ["batch", 4] },
        { name: "b", type: "float32", shape: ["batch", 4] },
      ],
      outputs: [{ name: "sum", type: "float32", shape: ["batch", 4] }],
    });
  });

  it("shares a failed load with every waiter, then tries again", async () => {
    const runtime = makeRuntime();
    let calls = 0;
    const load = async () => {
      calls++;
      if (calls === 1) throw new AtelierError("MODEL_NOT_INSTALLED", "Model add-1 is not installed.");
      return addConstantModel(1);
    };
    const model = runtime.model("add-1", load);
    const failures = await Promise.allSettled([model.run(feed(1)), model.run(feed(2))]);
    expect(failures.map((f) => f.status === "rejected" && (f.reason as AtelierError).code)).toEqual(["MODEL_NOT_INSTALLED", "MODEL_NOT_INSTALLED"]);
    expect(runtime.stats().sessions).toEqual([]);
    expect(values(await model.run(feed(2)))).toEqual([3]);
    expect(calls).toBe(2);
  });

  it("refuses bytes that are not an ONNX model", async () => {
    const runtime = makeRuntime();
    await expect(runtime.run("junk", async () => new Uint8Array([1, 2, 3, 4]), feed(1))).rejects.toThrow(
      new AtelierError("INTERNAL", 'Model "junk" is not a valid ONNX model for this runtime.'),
    );
  });

  it("runs the warm-up feed once after loading, not counted as a run", async () => {
    const runtime = makeRuntime();
    const model = runtime.model("warm", async () => addConstantModel(1), { warmUp: feed(0) });
    await model.signature();
    expect(runtime.stats().sessions[0]).toMatchObject({ loaded: true, runs: 0 });
  });

  it("fails the load when the warm-up feed does not fit the model, and retries on next use", async () => {
    const runtime = makeRuntime();
    const load = countingLoader(() => addConstantModel(1));
    const model = runtime.model("warm", load, { warmUp: { input: { data: new Float32Array(1), dims: [1, 1] } } });
    await expect(model.run(feed(1))).rejects.toThrow('Model "warm": unexpected input tensor "input"');
    await expect(model.run(feed(1))).rejects.toThrow('Model "warm": unexpected input tensor "input"');
    expect(load.calls).toBe(2);
  });
});

describe("memory budget", () => {
  it("evicts the least recently used idle session (three models, room for two)", async () => {
    const runtime = makeRuntime({ memoryBudgetBytes: Math.floor(SESSION_ESTIMATE * 2.5) });
    const loads = { a: countingLoader(() => addConstantModel(1)), b: countingLoader(() => addConstantModel(2)), c: countingLoader(() => addConstantModel(3)) };
    const a = runtime.model("a", loads.a);
    const b = runtime.model("b", loads.b);
    const c = runtime.model("c", loads.c);
    await a.run(feed(0));
    await b.run(feed(0));
    await a.run(feed(0)); // a is now more recent than b
    expect(values(await c.run(feed(0)))).toEqual([3]);
    expect(keysOf(runtime)).toEqual(["a", "c"]);
    expect(runtime.stats()).toMatchObject({ evictions: 1, loadedSessions: 2, estimatedBytes: 2 * SESSION_ESTIMATE });

    expect(values(await b.run(feed(0)))).toEqual([2]); // b comes back; a is now the oldest
    expect(keysOf(runtime)).toEqual(["c", "b"]);
    expect([loads.a.calls, loads.b.calls, loads.c.calls]).toEqual([1, 2, 1]);
    expect(runtime.stats().evictions).toBe(2);
  });

  it("never evicts a pinned or loading session; the excess goes once they are idle", async () => {
    const { logger, warnings } = recordingLogger();
    const runtime = makeRuntime({ memoryBudgetBytes: Math.floor(SESSION_ESTIMATE * 1.5), logger });
    const a = runtime.model("a", async () => addConstantModel(1));
    const slowB = countingLoader(() => addConstantModel(2));
    const b = runtime.model("b", slowB);
    const c = runtime.model("c", async () => addConstantModel(3));

    await a.pin(async (pinned) => {
      expect(values(await pinned.run(feed(1)))).toEqual([2]);
      slowB.hold();
      const loadingB = b.run(feed(1));
      await new Promise((resolve) => setImmediate(resolve));
      // c needs room, but a is pinned and b is still loading: both stay, over budget, with a warning.
      expect(values(await c.run(feed(1)))).toEqual([4]);
      expect(keysOf(runtime).sort()).toEqual(["a", "b", "c"]);
      expect(values(await pinned.run(feed(2)))).toEqual([3]);
      slowB.release();
      expect(values(await loadingB)).toEqual([3]);
    });
    expect(warnings).toContain("model memory budget exceeded while other sessions are busy; idle ones will be evicted as they finish");
    // Once idle, the least recently used ones went; a, used last, stays.
    expect(keysOf(runtime)).toEqual(["a"]);
    expect(runtime.stats().evictions).toBe(2);
  });

  it("loads a model larger than the whole budget alone, with a warning", async () => {
    const { logger, warnings } = recordingLogger();
    const runtime = makeRuntime({ memoryBudgetBytes: Math.floor(SESSION_ESTIMATE / 2), logger });
    expect(values(await runtime.run("a", async () => addConstantModel(1), feed(1)))).toEqual([2]);
    expect(values(await runtime.run("b", async () => addConstantModel(2), feed(1)))).toEqual([3]);
    expect(keysOf(runtime)).toEqual(["b"]);
    expect(warnings).toEqual([
      "model is larger than the whole model memory budget; loading it with no other idle session resident",
      "model is larger than the whole model memory budget; loading it with no other idle session resident",
    ]);
    // Its own later runs do not evict it.
    await runtime.run("b", async () => addConstantModel(2), feed(1));
    expect(runtime.stats()).toMatchObject({ loadedSessions: 1, evictions: 1, loads: 2 });
  });
});

describe("release when idle", () => {
  const IDLE_MS = 150;
  const idleSession = { cpuArena: true, memoryPattern: false, releaseWhenIdle: true };
  const afterIdleTime = () => new Promise((resolve) => setTimeout(resolve, IDLE_MS * 3));

  it("releases a session that asks for it once a call has left it idle for the idle time, and says so once", async () => {
    let released = 0;
    const runtime = makeRuntime({ idleReleaseMs: IDLE_MS, onIdleRelease: () => released++ });
    const model = runtime.model("isnet-like", async () => addConstantModel(1), { session: idleSession });
    await runtime.model("kept", async () => addConstantModel(2)).run(feed(0));
    await model.run(feed(0));
    await afterIdleTime();
    expect(runtime.stats()).toMatchObject({ loadedSessions: 1, idleReleases: 1 });
    expect(released).toBe(1);
  });

  it("does not say a session was released when the budget evicted it", async () => {
    let released = 0;
    const runtime = makeRuntime({ idleReleaseMs: IDLE_MS, memoryBudgetBytes: Math.floor(SESSION_ESTIMATE * 1.5), onIdleRelease: () => released++ });
    await runtime.model("first", async () => addConstantModel(1), { session: idleSession }).run(feed(0));
    await runtime.model("other", async () => addConstantModel(2)).run(feed(0));
    expect(keysOf(runtime)).toEqual(["other"]);
    await afterIdleTime();
    expect(runtime.stats()).toMatchObject({ evictions: 1, idleReleases: 0 });
    expect(released).toBe(0);
  });

  it("keeps one loaded by background work (the warm-up) for the first call, then counts idle time from that call", async () => {
    const runtime = makeRuntime({ idleReleaseMs: IDLE_MS });
    const loader = countingLoader(() => addConstantModel(1));
    const model = runtime.model("isnet-like", loader, { session: idleSession });
    await inBackground(() => model.run(feed(0)));
    await afterIdleTime();
    expect(runtime.stats()).toMatchObject({ loadedSessions: 1, idleReleases: 0 });

    expect(values(await model.run(feed(1)))).toEqual([2]);
    expect(loader.calls).toBe(1);
    await afterIdleTime();
    expect(runtime.stats()).toMatchObject({ loadedSessions: 0, idleReleases: 1 });
  });

  it("still gives a session kept for its first call up when the budget needs the room", async () => {
    const runtime = makeRuntime({ idleReleaseMs: IDLE_MS, memoryBudgetBytes: Math.floor(SESSION_ESTIMATE * 1.5) });
    await inBackground(() => runtime.model("warmed", async () => addConstantModel(1), { session: idleSession }).run(feed(0)));
    await runtime.model("other", async () => addConstantModel(2)).run(feed(0));
    expect(keysOf(runtime)).toEqual(["other"]);
  });
});

describe("concurrency and cancellation", () => {
  it("serialises 8 concurrent runs on one session, each with its own correct output", async () => {
    const runtime = makeRuntime();
    const model = runtime.model("add-100", async () => addConstantModel(100));
    await model.signature();
    let done = false;
    let mostRunning = 0;
    let mostWaiting = 0;
    const sample = () => {
      const [session] = runtime.stats().sessions;
      mostRunning = Math.max(mostRunning, session!.running);
      mostWaiting = Math.max(mostWaiting, session!.waiting);
    };
    // Sampled as each run settles too: the gate has passed its place to the next run by then, so
    // the samples do not depend on the loop turning while a run is in (a tiny model's eight runs
    // can all finish within one turn of replies from the inference thread).
    const runs = Promise.all(Array.from({ length: 8 }, (_, n) => model.run(feed(n, -n)).finally(sample))).finally(() => (done = true));
    while (!done) {
      sample();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect((await runs).map((outputs) => values(outputs))).toEqual(Array.from({ length: 8 }, (_, n) => [100 + n, 100 - n]));
    expect(mostRunning).toBe(1);
    expect(mostWaiting).toBeGreaterThan(0);
  });

  it("skips a queued run whose signal aborts; the run ahead of it completes", async () => {
    const runtime = makeRuntime();
    const model = runtime.model("add-1", async () => addConstantModel(1));
    await model.pin(async (pinned) => {
      const first = pinned.run(feed(1));
      const controller = new AbortController();
      const second = pinned.run(feed(2), { signal: controller.signal });
      expect(runtime.stats().sessions[0]).toMatchObject({ running: 1, waiting: 1 });
      controller.abort(new AtelierError("CANCELLED", "The call was cancelled or its deadline passed."));
      await expect(second).rejects.toThrow(new AtelierError("CANCELLED", "The call was cancelled or its deadline passed."));
      expect(runtime.stats().sessions[0]).toMatchObject({ waiting: 0 });
      expect(values(await first)).toEqual([2]);
    });
    expect(runtime.stats().sessions[0]).toMatchObject({ runs: 1 });
  });

  it("does not even load a model for an already aborted call", async () => {
    const runtime = makeRuntime();
    const load = countingLoader(() => addConstantModel(1));
    await expect(runtime.model("add-1", load).run(feed(1), { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: "CANCELLED" });
    expect(load.calls).toBe(0);
  });

  it("lets a configured number of runs through at once", async () => {
    const gate = new RunGate(2);
    const order: string[] = [];
    const exits = await Promise.all([gate.enter(), gate.enter()]);
    const third = gate.enter().then((exit) => {
      order.push("third");
      return exit;
    });
    expect([gate.running, gate.waiting]).toEqual([2, 1]);
    exits[0]!();
    (await third)();
    exits[1]!();
    expect(order).toEqual(["third"]);
    expect([gate.running, gate.waiting]).toEqual([0, 0]);
  });
});

describe("feed validation", () => {
  const two = () => makeRuntime().model("two", async () => twoInputModel());
  const t = (dims: number[], length = dims.reduce((a, b) => a * b, 1)) => ({ data: new Float32Array(length), dims });

  it.each([
    ["a missing tensor", { a: t([1, 4]) }, 'Model "two": missing input tensor "b" (expected shape [batch, 4]).'],
    ["an unexpected tensor", { a: t([1, 4]), b: t([1, 4]), c: t([1]) }, 'Model "two": unexpected input tensor "c"; the model\'s inputs are "a", "b".'],
    ["a wrong rank", { a: t([4]), b: t([1, 4]) }, 'Model "two": expected rank 2 for input tensor "a" (shape [batch, 4]) but received rank 1 (shape [4]).'],
    ["a fixed dimension mismatch", { a: t([1, 4]), b: t([1, 5]) }, 'Model "two": expected shape [batch, 4] for input tensor "b" but received [1, 5] (axis 1: 4 expected, 5 received).'],
    ["disagreeing symbolic dimensions", { a: t([1, 4]), b: t([2, 4]) }, 'Model "two": dimension "batch" is 1 in input tensor "a" but 2 in "b" (shape [2, 4]); they must agree.'],
    ["a value count that does not fit the shape", { a: t([1, 4], 3), b: t([1, 4]) }, 'Model "two": input tensor "a" has 3 values but its shape [1, 4] needs 4.'],
  ])("refuses %s, naming the tensor and both shapes", async (_label, feeds, message) => {
    const failure = await two().run(feeds).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AtelierError);
    expect(failure).toMatchObject({ code: "INTERNAL", message });
  });

  it("accepts a matching feed", async () => {
    const outputs = await two().run({ a: { data: Float32Array.of(1, 2, 3, 4), dims: [1, 4] }, b: { data: Float32Array.of(10, 20, 30, 40), dims: [1, 4] } });
    expect(outputs.sum).toEqual({ data: Float32Array.of(11, 22, 33, 44), dims: [1, 4] });
  });
});

describe("dispose", () => {
  it("waits for work in progress, releases every session, and refuses later runs clearly", async () => {
    const runtime = makeRuntime({ logger: workerLogger });
    await runtime.run("a", async () => addConstantModel(1), feed(1));
    let disposed = false;
    let disposal: Promise<void> | undefined;
    await runtime.model("b", async () => addConstantModel(2)).pin(async (pinned) => {
      disposal = runtime.dispose().then(() => {
        disposed = true;
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(disposed).toBe(false);
      // Work in progress may not start new runs once disposal has begun.
      await expect(pinned.run(feed(1))).rejects.toMatchObject({ code: "WORKER_UNAVAILABLE" });
    });
    await disposal;
    expect(runtime.stats()).toMatchObject({ sessions: [], loadedSessions: 0, estimatedBytes: 0 });
    await expect(runtime.run("a", async () => addConstantModel(1), feed(1))).rejects.toThrow(
      new AtelierError("WORKER_UNAVAILABLE", "The model runtime has been shut down; this worker no longer runs models."),
    );
  });

  it("lets a run already admitted finish and rejects runs still queued", async () => {
    const runtime = makeRuntime();
    let disposal: Promise<void> | undefined;
    await runtime.model("a", async () => addConstantModel(1)).pin(async (pinned) => {
      const admitted = pinned.run(feed(1));
      const queued = pinned.run(feed(2));
      disposal = runtime.dispose();
      await expect(queued).rejects.toMatchObject({ code: "WORKER_UNAVAILABLE" });
      expect(values(await admitted)).toEqual([2]);
    });
    await disposal;
    expect(runtime.stats().sessions).toEqual([]);
  });
});

describe("inference thread", () => {
  it("leaves the caller's model bytes intact, so one Buffer can load several sessions", async () => {
    const runtime = makeRuntime();
    const bytes = Buffer.from(addConstantModel(3));
    const length = bytes.length;
    expect(values(await runtime.run("first", async () => bytes, feed(1)))).toEqual([4]);
    expect(bytes.length).toBe(length);
    expect(values(await runtime.run("second", async () => bytes, feed(2)))).toEqual([5]);
  });

  it("copies feeds by default, and moves the buffers of owned feeds over when they are handed over", async () => {
    const runtime = makeRuntime();
    const model = runtime.model("add", async () => addConstantModel(1));
    const kept = feed(1, 2);
    expect(values(await model.run(kept))).toEqual([2, 3]);
    expect([...kept.x!.data]).toEqual([1, 2]);

    const handed = feed(3, 4);
    expect(values(await model.run(handed, { handOver: true }))).toEqual([4, 5]);
    expect(handed.x!.data.length).toBe(0);

    // A view into a larger buffer cannot move without taking the rest with it: it is copied.
    const whole = Float32Array.from([9, 5, 6, 9]);
    const view = { x: { data: whole.subarray(1, 3), dims: [1, 2] } };
    expect(values(await model.run(view, { handOver: true }))).toEqual([6, 7]);
    expect([...whole]).toEqual([9, 5, 6, 9]);
  });

  it("keeps this thread's event loop turning while a model runs", async () => {
    const runtime = makeRuntime();
    const model = slowConvModel(12);
    const size = 256;
    const feeds = { x: { data: new Float32Array(32 * size * size).fill(1), dims: [1, 32, size, size] } };
    await runtime.run("slow", async () => model, feeds);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 2);
    const started = performance.now();
    const outputs = await runtime.run("slow", async () => model, feeds);
    const elapsed = performance.now() - started;
    clearInterval(timer);
    expect(outputs.y!.dims).toEqual([1, 32, size, size]);
    // Ones averaged over a 3x3x32 window stay ones away from the zero-padded border.
    expect(outputs.y!.data[(16 * size + 128) * 1]).toBeCloseTo(1, 4);
    expect(elapsed).toBeGreaterThan(40);
    // Blocking runs would let through at most one tick; a free event loop ticks about every 2 ms.
    expect(ticks).toBeGreaterThan(elapsed / 20);
  });
});

describe("house rule", () => {
  it("exactly one production module imports onnxruntime-node: the inference thread", () => {
    // Benchmarks are exempt: they time bare onnxruntime sessions against the service on purpose.
    const importers = ["core", "facade", "server", "workers", "scripts"]
      .flatMap((folder) => fs.readdirSync(folder, { recursive: true, encoding: "utf8" }).map((file) => path.join(folder, file)))
      .filter((file) => /\.m?[tj]s$/.test(file) && /(from\s+|import\(|require\()["']onnxruntime-node["']/.test(fs.readFileSync(file, "utf8")));
    expect(importers).toEqual([path.join("workers", "onnx", "inference-thread.mjs")]);
  });
});
