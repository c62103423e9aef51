/**
 * Concurrent calls on one session finish in the order they came: a call's runs (the tiles of one
 * image) take their place at the session's gate by their call's arrival at the worker's queue, calls
 * before background work, so two tiled calls no longer alternate tile by tile. Through the real
 * queue, runtime and tiling, with a tiny 2x network.
 */
import { afterAll, describe, expect, it } from "vitest";
import { inBackground } from "../../core/work-priority.js";
import { runImageNetwork } from "../../workers/image/image-network.js";
import type { RawImage } from "../../workers/image/raw-image.js";
import { ModelRuntime } from "../../workers/onnx/onnx-runtime.js";
import { RunGate } from "../../workers/onnx/run-gate.js";
import { WorkQueue } from "../../workers/work-queue.js";
import { noiseImage } from "./pixels.js";
import { nearest2xModel } from "./tiny-models.js";

describe("the run gate", () => {
  it("lets waiting runs in by rank: calls before background work, then the earlier call first, equal ranks first come first served", async () => {
    const gate = new RunGate(1);
    const exit = await gate.enter();
    const admitted: string[] = [];
    const wait = (name: string, background: boolean, arrival: number) =>
      gate.enter(undefined, { background, arrival }).then((leave) => {
        admitted.push(name);
        leave();
      });
    const waits = [wait("preview", true, 1), wait("later call", false, 9), wait("earlier call", false, 5), wait("earlier call's next run", false, 5)];
    exit();
    await Promise.all(waits);
    expect(admitted).toEqual(["earlier call", "earlier call's next run", "later call", "preview"]);
  });
});

describe("tiled calls on one session", () => {
  const runtime = new ModelRuntime({ threads: 1, memoryBudgetBytes: 256 * 1024 * 1024, logger: { debug: () => undefined, info: () => undefined, warn: () => undefined } });
  afterAll(() => runtime.dispose());
  // 48x32 in 16 px tiles: six runs per call.
  const TILES = 6;

  /** Upscales a noise image in tiles inside `queue`, naming each run in `finished` as it completes. */
  const call = (queue: WorkQueue, name: string, finished: string[]) =>
    queue.run(() =>
      runImageNetwork(
        noiseImage(48, 32),
        runtime,
        {
          label: "test network",
          key: "test/nearest-x2",
          load: async () => nearest2xModel(),
          options: {},
          format: { layout: "NCHW", channelOrder: "RGB", range: [0, 1] },
          input: "image",
          output: "upscaled",
        },
        {
          scale: 2,
          geometry: { tileSize: 16 },
          aroundRun: async (run) => {
            const outputs = await run();
            finished.push(name);
            return outputs;
          },
        },
      ),
    );

  /** The runs of `name` in `finished`: where the first one is and whether they all follow it without another call's in between. */
  const runsOf = (finished: string[], name: string) => {
    const first = finished.indexOf(name);
    const last = finished.lastIndexOf(name);
    return { first, together: last - first + 1 === TILES && finished.filter((n) => n === name).length === TILES };
  };

  async function warm(): Promise<void> {
    await call(new WorkQueue({ concurrency: 1, queueLength: 0 }), "warm-up", []);
  }

  it("runs the earlier call's tiles before the later call's: the first call finishes first", async () => {
    await warm();
    const queue = new WorkQueue({ concurrency: 2, queueLength: 4 });
    const finished: string[] = [];
    const done: string[] = [];
    const finish = (name: string) => (image: RawImage) => {
      done.push(name);
      return image;
    };
    const first = call(queue, "first", finished).then(finish("first"));
    const second = call(queue, "second", finished).then(finish("second"));
    const [a, b] = await Promise.all([first, second]);
    expect([a.width, a.height, b.width, b.height]).toEqual([96, 64, 96, 64]);
    // The second call's first tile may take the session while the first call has none waiting yet;
    // after that, the first call's tiles run one after another.
    expect(runsOf(finished, "first")).toMatchObject({ together: true });
    expect(runsOf(finished, "first").first).toBeLessThanOrEqual(1);
    expect(done).toEqual(["first", "second"]);
  });

  it("runs a call's tiles before those of background work that started before it", async () => {
    await warm();
    const queue = new WorkQueue({ concurrency: 2, queueLength: 4 });
    const finished: string[] = [];
    const background = inBackground(() => call(queue, "background", finished));
    const real = call(queue, "call", finished);
    await Promise.all([background, real]);
    expect(runsOf(finished, "call")).toMatchObject({ together: true });
    expect(runsOf(finished, "call").first).toBeLessThanOrEqual(1);
    expect(finished.slice(-TILES + 1).every((name) => name === "background")).toBe(true);
  });
});
