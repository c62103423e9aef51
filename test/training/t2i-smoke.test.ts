/**
 * The text-to-image training's CPU smoke run (training/atelier_training/t2i/smoke.py, Debian's
 * python3-torch): a small emoji subset, a few steps of the tiny config, a stop and a resume from the
 * checkpoint, the ONNX export. The export must be what Atelier's diffusion pipeline runs as it runs
 * Stable Diffusion: its tokenizer folder gives Python's token ids, onnxruntime-node gives PyTorch's
 * text states and noise prediction, and the service's own diffusion generator, given a catalog entry
 * and the installed folder, draws an image of the trained size, the same for the same seed.
 */
import fs from "node:fs";
import path from "node:path";
import ort from "onnxruntime-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GENERATION_OPTIONS, type CatalogEntry } from "../../models/catalog/catalog-types.js";
import { DIFFUSION_GRAPH_SOURCES, EXPORT_FILES } from "../../models/catalog/diffusion-export-layout.js";
import { INSTALL_RECORD } from "../../models/store/model-store.js";
import { loadClipTokenizer } from "../../workers/clip-tokenizer/tokenizer-files.js";
import { createDiffusionGenerator } from "../../workers/generation/diffusion/diffusion-generator.js";
import type { GenerationParams } from "../../workers/generation/image-generator.js";
import { tinyWorld, type TinyWorld } from "../generation/diffusion/tiny-export.js";
import { PYTHON, pythonImports, runSmokeModule, type SmokeRun } from "./python-smoke-run.js";

const available = pythonImports(["torch", "numpy", "PIL", "onnx"]);
const fontInstalled = fs.existsSync("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf") && fs.existsSync("/usr/share/unicode/cldr/common/annotations/en.xml");

interface Summary {
  steps: number;
  stopped_by: string;
  heldout_loss: number;
  heldout_loss_empty_caption: number;
}

interface SmokeResult {
  first: Summary;
  resumed: Summary;
  log: Array<{ step: number; loss?: number; heldout_loss?: number }>;
  export: string;
  resolution: number;
  probe: {
    captions: string[];
    ids: number[][];
    sample: number[];
    sample_dims: number[];
    timestep: number[];
    states: number[];
    states_dims: number[];
    prediction: number[];
  };
}

/** The largest difference, relative to the largest magnitude expected (at least 1). */
const worstDifference = (actual: ArrayLike<number>, expected: ArrayLike<number>) => {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  let largest = 1;
  for (let i = 0; i < actual.length; i++) {
    worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
    largest = Math.max(largest, Math.abs(expected[i]!));
  }
  return worst / largest;
};

describe("text-to-image training smoke run: emoji subset, stop and resume, ONNX export in the diffusion layout", () => {
  let smoke: SmokeRun<SmokeResult>;
  let tmp: string;
  let result: SmokeResult;

  beforeAll(async () => {
    // A missing dependency fails the suite loudly rather than skipping it.
    if (!available) throw new Error(`${PYTHON} cannot import torch, numpy, PIL and onnx: apt-get install python3-torch python3-numpy python3-pil python3-onnx`);
    if (!fontInstalled) throw new Error("The emoji font or the CLDR annotations are missing: apt-get install fonts-noto-color-emoji unicode-cldr-core");
    smoke = await runSmokeModule<SmokeResult>("atelier_training.t2i.smoke", { threads: 1, timeoutMs: 300_000 });
    ({ dir: tmp, result } = smoke);
  }, 300_000);

  afterAll(() => {
    smoke?.remove();
  });

  it("trains, stops, resumes from its checkpoint where it stopped, and logs the held-out figures at each checkpoint", () => {
    expect(result.first.steps).toBe(4);
    expect(result.resumed.steps).toBe(8);
    const checkpoints = result.log.filter((record) => record.heldout_loss !== undefined);
    expect(checkpoints.map((record) => record.step)).toEqual([4, 8]);
    for (const record of checkpoints) expect(Number.isFinite(record.heldout_loss)).toBe(true);
    for (const file of ["checkpoint.pt", "model.pt", "samples.png", "summary.json"]) expect(fs.existsSync(path.join(tmp, "run", file)), file).toBe(true);
  });

  it("the exported tokenizer folder gives the ids the training's tokenizer gave", async () => {
    const tokenizer = await loadClipTokenizer(path.join(result.export, EXPORT_FILES.tokenizerFolder), undefined, {});
    expect(tokenizer.maxLength).toBe(result.probe.ids[0]!.length);
    result.probe.captions.forEach((caption, i) => expect([...tokenizer.encode(caption)], caption).toEqual(result.probe.ids[i]));
  });

  it("onnxruntime-node gives PyTorch's text states and noise prediction", async () => {
    const { probe } = result;
    const text = await ort.InferenceSession.create(path.join(result.export, EXPORT_FILES.textEncoder));
    const unet = await ort.InferenceSession.create(path.join(result.export, EXPORT_FILES.unet));
    try {
      const ids = new ort.Tensor("int32", Int32Array.from(probe.ids.slice(0, 2).flat()), [2, probe.ids[0]!.length]);
      const { last_hidden_state: states } = await text.run({ input_ids: ids });
      expect(states!.dims).toEqual(probe.states_dims);
      expect(worstDifference(states!.data as Float32Array, probe.states)).toBeLessThan(1e-3);
      const { out_sample: prediction } = await unet.run({
        sample: new ort.Tensor("float32", Float32Array.from(probe.sample), probe.sample_dims),
        timestep: new ort.Tensor("float32", Float32Array.from(probe.timestep), [2]),
        encoder_hidden_states: states!,
      });
      expect(prediction!.dims).toEqual(probe.sample_dims);
      expect(worstDifference(prediction!.data as Float32Array, probe.prediction)).toBeLessThan(1e-3);
    } finally {
      await text.release();
      await unet.release();
    }
  });

  describe("the service's diffusion generator runs the installed export", () => {
    let world: TinyWorld;
    let entry: CatalogEntry;

    beforeAll(() => {
      world = tinyWorld();
      const id = "atelier-t2i-smoke";
      fs.cpSync(result.export, path.join(world.dir, id), { recursive: true });
      fs.writeFileSync(path.join(world.dir, id, INSTALL_RECORD), JSON.stringify({ id, installedAt: new Date().toISOString(), files: {}, converted: [], from: "test" }));
      const size = result.resolution;
      entry = {
        id,
        task: "generate",
        name: "Smoke-test pixel-space text-to-image",
        description: "The training smoke run's barely trained model; never shipped.",
        license: "MIT",
        nonCommercial: false,
        source: { kind: "files", files: [] },
        graphs: DIFFUSION_GRAPH_SOURCES,
        generation: { defaultWidth: size, defaultHeight: size, minSize: size, maxWidth: size, maxHeight: size, sizeMultiple: size, options: GENERATION_OPTIONS },
        photographic: false,
        details: { family: "atelier-pixel-diffusion", diffusion: { scheduler: "euler", steps: 4, guidanceScale: 3 } },
      };
    });
    afterAll(async () => {
      await world?.dispose();
    });

    it("draws an RGB image of the trained size, the same for the same seed and another for another seed", async () => {
      const generator = createDiffusionGenerator(entry, world.context);
      const size = result.resolution;
      const params: GenerationParams = { prompt: "red apple", negativePrompt: "", width: size, height: size, seed: 11 };
      const noProgress = () => undefined;
      const signal = new AbortController().signal;
      const steps: number[] = [];
      const first = await generator.generate(params, (step) => steps.push(step), signal);
      expect([first.image.width, first.image.height, first.image.channels]).toEqual([size, size, 3]);
      expect(first.image.data.length).toBe(size * size * 3);
      expect(steps).toEqual([1, 2, 3, 4]);
      expect((await generator.model()).latentFactor).toBe(1);
      const again = await generator.generate(params, noProgress, signal);
      expect(Buffer.from(again.image.data).equals(Buffer.from(first.image.data))).toBe(true);
      const other = await generator.generate({ ...params, seed: 12 }, noProgress, signal);
      expect(Buffer.from(other.image.data).equals(Buffer.from(first.image.data))).toBe(false);
    });
  });
});
