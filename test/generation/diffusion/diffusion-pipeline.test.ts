/**
 * The whole Stable Diffusion pipeline (tokenizer, text encoder, UNet loop, samplers, VAE) through
 * the worker's real model runtime, on tiny random exports with the real tensor signatures:
 * output shape, determinism, guidance batching and ordering, every sampler's UNet call count,
 * cancellation between steps, progress, and the errors a caller can get.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AtelierError } from "../../../core/errors.js";
import type { CatalogEntry } from "../../../models/catalog/catalog-types.js";
import { createDiffusionGenerator, type DiffusionGenerator } from "../../../workers/generation/diffusion/diffusion-generator.js";
import { runDiffusion, type DiffusionModel, type DiffusionRequest } from "../../../workers/generation/diffusion/diffusion-pipeline.js";
import { EXPORT_FILES } from "../../../models/catalog/diffusion-export-layout.js";
import { guidanceScaleEmbedding } from "../../../workers/generation/diffusion/guidance.js";
import { samplerSpec } from "../../../workers/generation/diffusion/schedulers/sampler-registry.js";
import type { GenerationParams } from "../../../workers/generation/image-generator.js";
import type { TinyDiffusionOptions } from "../../../scripts/make-tiny-diffusion.js";
import { hasClipMerges, meanAbsDiff, recordRuns, tinyWorld, type RecordedRun, type TinyWorld } from "./tiny-export.js";

const never = () => new AbortController().signal;
const maxDiff = (a: Float32Array, b: Float32Array) => Math.max(...Array.from(a, (value, i) => Math.abs(value - b[i]!)));
const noProgress = () => undefined;
const base: GenerationParams = { prompt: "a photo of a cat", negativePrompt: "", width: 64, height: 48, seed: 1234 };

describe.runIf(hasClipMerges())("Stable Diffusion pipeline on tiny exports", () => {
  let world: TinyWorld;
  const generators = new Map<string, DiffusionGenerator>();

  function generator(id: string, options: TinyDiffusionOptions = {}): DiffusionGenerator {
    let made = generators.get(id);
    if (!made) {
      made = createDiffusionGenerator(world.install(id, options), world.context);
      generators.set(id, made);
    }
    return made;
  }

  /** Runs the pipeline of `gen` with every graph run recorded. */
  async function recorded(gen: DiffusionGenerator, request: Partial<DiffusionRequest> & { scheduler?: string }, onStep: (step: number, total: number) => void = noProgress, signal = never()) {
    const runs: RecordedRun[] = [];
    const model: DiffusionModel = recordRuns(await gen.model(), runs);
    const { scheduler = "euler", ...rest } = request;
    const result = await runDiffusion(
      model,
      { prompt: base.prompt, negativePrompt: "", width: 64, height: 48, steps: 3, guidanceScale: 7.5, seed: 1, sampler: samplerSpec(scheduler)!, ...rest },
      onStep,
      signal,
    );
    return { result, runs, unet: runs.filter((run) => run.graph === "unet") };
  }

  beforeAll(() => {
    world = tinyWorld();
  });
  afterAll(async () => {
    await world.dispose();
  });

  it("draws an RGB image of the requested size with the model's default sampler", async () => {
    const steps: Array<[number, number]> = [];
    const result = await generator("tiny-sd15").generate(base, (step, total) => steps.push([step, total]), never());
    expect(result.image.width).toBe(64);
    expect(result.image.height).toBe(48);
    expect(result.image.channels).toBe(3);
    expect(result.image.data).toHaveLength(64 * 48 * 3);
    expect(result.steps).toBe(4);
    expect(steps).toEqual([[1, 4], [2, 4], [3, 4], [4, 4]]);
    // Not a flat image: the random decoder draws structure from the latents.
    expect(new Set(result.image.data).size).toBeGreaterThan(50);
  });

  it("is deterministic: the same parameters give the same bytes, another seed other bytes", async () => {
    const gen = generator("tiny-sd15");
    const a = await gen.generate({ ...base, scheduler: "euler-ancestral", steps: 5 }, noProgress, never());
    const b = await gen.generate({ ...base, scheduler: "euler-ancestral", steps: 5 }, noProgress, never());
    const c = await gen.generate({ ...base, scheduler: "euler-ancestral", steps: 5, seed: 1235 }, noProgress, never());
    expect(Buffer.from(a.image.data).equals(Buffer.from(b.image.data))).toBe(true);
    expect(meanAbsDiff(a.image.data, c.image.data)).toBeGreaterThan(1);
    // A fresh generator over the same files (another worker) draws the same image too.
    const again = createDiffusionGenerator(generator("tiny-sd15").entry, world.context);
    const d = await again.generate({ ...base, scheduler: "euler-ancestral", steps: 5 }, noProgress, never());
    expect(Buffer.from(d.image.data).equals(Buffer.from(a.image.data))).toBe(true);
  });

  it("feeds the export's tensors: 77 token ids, [1] int timestep, latents [2, 4, h/8, w/8] uncond first", async () => {
    const { runs, unet, result } = await recorded(generator("tiny-sd15"), { prompt: "a photo of a cat", negativePrompt: "a photo of a dog", scheduler: "euler" });
    const text = runs.filter((run) => run.graph === "text_encoder");
    expect(text).toHaveLength(1);
    const ids = text[0]!.feeds.input_ids!;
    expect(ids.dims).toEqual([2, 77]);
    // Row 0 is the negative prompt, row 1 the prompt (diffusers' torch.cat([negative, positive])).
    expect([...ids.data.slice(0, 7)]).toEqual([49406, 320, 1125, 539, 320, 1929, 49407]);
    expect([...ids.data.slice(77, 84)]).toEqual([49406, 320, 1125, 539, 320, 2368, 49407]);
    expect(ids.data[83 + 10]).toBe(49407);
    expect(unet).toHaveLength(3);
    const first = unet[0]!.feeds;
    expect(first.sample!.dims).toEqual([2, 4, 6, 8]);
    expect(first.encoder_hidden_states!.dims).toEqual([2, 77, 32]);
    expect(first.timestep!.dims).toEqual([1]);
    expect(unet.map((run) => run.feeds.timestep!.data[0])).toEqual([999, 499.5, 0]);
    // The text states fed to the UNet are the encoder's rows, in the same order.
    const states = text[0]!.outputs.last_hidden_state!.data;
    expect(first.encoder_hidden_states!.data).toEqual(states);
    // Both rows see the same latents.
    const half = first.sample!.data.length / 2;
    expect(first.sample!.data.slice(0, half)).toEqual(first.sample!.data.slice(half));
    expect(runs.at(-1)!.graph).toBe("vae_decoder");
    expect(runs.at(-1)!.feeds.latent_sample!.dims).toEqual([1, 4, 6, 8]);
    expect(result.guided).toBe(true);
  });

  it("combines the two predictions as ε_u + g·(ε_c − ε_u)", async () => {
    const gen = generator("tiny-sd15");
    const guided = await recorded(gen, { steps: 1, scheduler: "euler", guidanceScale: 3, negativePrompt: "blurry" });
    // With one Euler step to σ = 0 the result is x − σ·ε: recover ε from the VAE's input and compare.
    const out = guided.unet[0]!.outputs.out_sample!.data;
    const size = out.length / 2;
    const expected = Float32Array.from({ length: size }, (_, i) => out[i]! + 3 * (out[size + i]! - out[i]!));
    const sampler = samplerSpec("euler")!.create((await gen.model()).schedule, 1) as unknown as { sigmas: number[] };
    const latentsIn = guided.unet[0]!.feeds.sample!.data.slice(0, size);
    const scale = 1 / Math.sqrt(sampler.sigmas[0]! ** 2 + 1);
    const decoded = guided.runs.at(-1)!.feeds.latent_sample!.data;
    for (let i = 0; i < size; i += 7) {
      const x = latentsIn[i]! / scale;
      expect(decoded[i]! * 0.18215).toBeCloseTo(x - sampler.sigmas[0]! * expected[i]!, 2);
    }
  });

  it("skips the unconditional pass at guidance scale 1 (and below), so the negative prompt has no effect", async () => {
    const gen = generator("tiny-sd15");
    const one = await recorded(gen, { guidanceScale: 1, negativePrompt: "anything" });
    expect(one.result.guided).toBe(false);
    expect(one.runs.filter((run) => run.graph === "text_encoder")[0]!.feeds.input_ids!.dims).toEqual([1, 77]);
    expect(one.unet.map((run) => run.feeds.sample!.dims[0])).toEqual([1, 1, 1]);
    const other = await recorded(gen, { guidanceScale: 1, negativePrompt: "something else" });
    expect(Buffer.from(other.result.image.data).equals(Buffer.from(one.result.image.data))).toBe(true);
    const guidedA = await gen.generate({ ...base, guidanceScale: 5, negativePrompt: "a dog" }, noProgress, never());
    const guidedB = await gen.generate({ ...base, guidanceScale: 5, negativePrompt: "a house" }, noProgress, never());
    expect(meanAbsDiff(guidedA.image.data, guidedB.image.data)).toBeGreaterThan(0.5);
  });

  it("runs batch-1 exports twice per step (uncond then cond) and draws the same image as the batched export", async () => {
    const fixed = await recorded(generator("tiny-sd15-fixed", { fixedBatch: true }), { negativePrompt: "a dog" });
    const batched = await recorded(generator("tiny-sd15"), { negativePrompt: "a dog" });
    expect(fixed.runs.filter((run) => run.graph === "text_encoder").map((run) => run.feeds.input_ids!.data[2])).toEqual([1929, 1125]);
    expect(fixed.unet).toHaveLength(6);
    expect(fixed.unet.map((run) => run.feeds.sample!.dims[0])).toEqual([1, 1, 1, 1, 1, 1]);
    // Same rows in the same order (a batch of 1 and of 2 may round differently in the last bit).
    const rows = batched.unet[0]!.feeds.encoder_hidden_states!.data;
    expect(maxDiff(fixed.unet[0]!.feeds.encoder_hidden_states!.data, rows.slice(0, 77 * 32))).toBeLessThan(1e-5);
    expect(maxDiff(fixed.unet[1]!.feeds.encoder_hidden_states!.data, rows.slice(77 * 32))).toBeLessThan(1e-5);
    expect(maxDiff(rows.slice(0, 77 * 32), rows.slice(77 * 32))).toBeGreaterThan(0.01);
    expect(meanAbsDiff(fixed.result.image.data, batched.result.image.data)).toBeLessThan(0.5);
  });

  it.each([
    ["euler", 6, 6, true],
    ["euler-ancestral", 6, 6, true],
    ["dpmpp-2m-karras", 6, 6, true],
    ["dpmpp-2m", 6, 6, true],
    ["lcm", 4, 4, true],
    ["turbo", 1, 1, false],
  ] as const)("%s runs %i steps with %i UNet calls (guided: %s)", async (scheduler, steps, calls, guided) => {
    const progress: number[] = [];
    const { unet, result } = await recorded(generator("tiny-sd15"), { scheduler, steps }, (step) => progress.push(step));
    expect(result.steps).toBe(steps);
    expect(unet).toHaveLength(calls);
    expect(result.unetRuns).toBe(calls);
    expect(unet.every((run) => run.feeds.sample!.dims[0] === (guided ? 2 : 1))).toBe(true);
    expect(progress).toEqual(Array.from({ length: steps }, (_, i) => i + 1));
    expect(result.image.data.every((value) => Number.isFinite(value))).toBe(true);
  });

  it("SD-Turbo: one step at timestep 999 from σmax noise, no unconditional pass whatever the guidance", async () => {
    const gen = generator("tiny-turbo", { variant: "turbo" });
    const { unet, runs } = await recorded(gen, { scheduler: "turbo", steps: 1, guidanceScale: 7 });
    expect(unet).toHaveLength(1);
    expect(unet[0]!.feeds.timestep!.data[0]).toBe(999);
    expect(unet[0]!.feeds.sample!.dims).toEqual([1, 4, 6, 8]);
    // SD 2.x tokenizers pad with "!" (id 0), read from the export's tokenizer_config.json.
    expect([...runs[0]!.feeds.input_ids!.data.slice(5, 10)]).toEqual([2368, 49407, 0, 0, 0]);
    const result = await gen.generate({ ...base, negativePrompt: "ignored" }, noProgress, never());
    expect(result.steps).toBe(1);
  });

  it("LCM: feeds the guidance embedding as timestep_cond instead of a second row, at timesteps 999, 759, 499, 259", async () => {
    const gen = generator("tiny-lcm", { variant: "lcm" });
    const { unet } = await recorded(gen, { scheduler: "lcm", steps: 4, guidanceScale: 8 });
    expect(unet.map((run) => run.feeds.timestep!.data[0])).toEqual([999, 759, 499, 259]);
    expect(unet[0]!.feeds.timestep_cond!.dims).toEqual([1, 256]);
    expect(unet[0]!.feeds.timestep_cond!.data).toEqual(guidanceScaleEmbedding(8, 256));
    const a = await gen.generate({ ...base, guidanceScale: 2 }, noProgress, never());
    const b = await gen.generate({ ...base, guidanceScale: 8 }, noProgress, never());
    expect(meanAbsDiff(a.image.data, b.image.data)).toBeGreaterThan(0.1);
  });

  it("diffusers' conversion-script exports: a float32 timestep per batch row", async () => {
    const { unet } = await recorded(generator("tiny-legacy", { variant: "legacy" }), { scheduler: "dpmpp-2m-karras", steps: 3 });
    expect(unet[0]!.feeds.timestep!.dims).toEqual([2]);
    expect(unet[0]!.feeds.timestep!.data[0]).toBe(unet[0]!.feeds.timestep!.data[1]);
    expect(unet[0]!.feeds.timestep!.data[0]).toBe(999);
  });

  it("half-precision exports and SD 2.x v-prediction run end to end", async () => {
    const half = await generator("tiny-turbo-half", { variant: "turbo", half: true }).generate(base, noProgress, never());
    const full = await generator("tiny-turbo").generate(base, noProgress, never());
    // Same weights: only float16 rounding inside the UNet separates them.
    expect(meanAbsDiff(half.image.data, full.image.data)).toBeLessThan(1);
    const v = await generator("tiny-sd21", { variant: "sd21" }).generate({ ...base, scheduler: "dpmpp-2m-karras", steps: 5 }, noProgress, never());
    expect(v.image.data).toHaveLength(64 * 48 * 3);
  });

  it("stops between steps when the signal aborts, without decoding", async () => {
    const controller = new AbortController();
    const progress: number[] = [];
    const attempt = recorded(
      generator("tiny-sd15"),
      { steps: 10 },
      (step) => {
        progress.push(step);
        if (step === 3) controller.abort();
      },
      controller.signal,
    );
    await expect(attempt).rejects.toMatchObject({ code: "CANCELLED" });
    expect(progress).toEqual([1, 2, 3]);
  });

  it("runs nothing when the signal has already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const runs: RecordedRun[] = [];
    const model = recordRuns(await generator("tiny-sd15").model(), runs);
    const attempt = runDiffusion(
      model,
      { prompt: "x", negativePrompt: "", width: 64, height: 64, steps: 2, guidanceScale: 7, seed: 1, sampler: samplerSpec("euler")! },
      noProgress,
      controller.signal,
    );
    await expect(attempt).rejects.toBeInstanceOf(AtelierError);
    expect(runs).toEqual([]);
  });

  it("made exactly three UNet runs before the abort took effect", async () => {
    const controller = new AbortController();
    const runs: RecordedRun[] = [];
    const model = recordRuns(await generator("tiny-sd15").model(), runs);
    const attempt = runDiffusion(
      model,
      { prompt: "x", negativePrompt: "", width: 64, height: 64, steps: 10, guidanceScale: 7, seed: 1, sampler: samplerSpec("euler")! },
      (step) => step === 3 && controller.abort(),
      controller.signal,
    );
    await expect(attempt).rejects.toMatchObject({ code: "CANCELLED" });
    expect(runs.filter((run) => run.graph === "unet")).toHaveLength(3);
    expect(runs.some((run) => run.graph === "vae_decoder")).toBe(false);
  });

  it.each([
    [{ width: 60 }, "width", "Expected a positive multiple of 8 for width but received 60."],
    [{ scheduler: "ddim" }, "scheduler", 'Unknown scheduler "ddim". Available: euler, euler-ancestral, dpmpp-2m-karras, dpmpp-2m, lcm, turbo.'],
    [{ scheduler: "turbo", steps: 8 }, "steps", "Expected integer between 1 and 4 for steps with the turbo scheduler but received 8."],
    [{ steps: 0 }, "steps", "Expected integer between 1 and 150 for steps with the dpmpp-2m-karras scheduler but received 0."],
  ] as const)("refuses %j with INVALID_INPUT", async (change, field, message) => {
    const attempt = generator("tiny-sd15").generate({ ...base, ...change }, noProgress, never());
    await expect(attempt).rejects.toMatchObject({ code: "INVALID_INPUT", message, issues: [{ path: field, message }] });
  });

  it("says which files are missing when a model folder is incomplete", async () => {
    const entry: CatalogEntry = { ...generator("tiny-broken", { variant: "sd15" }).entry };
    fs.rmSync(path.join(world.dir, "tiny-broken", EXPORT_FILES.unet));
    // The size check of the store already notices; the generator's own check names the files.
    const direct = createDiffusionGenerator({ ...entry, source: { kind: "files", files: [] } }, world.context);
    await expect(direct.generate(base, noProgress, never())).rejects.toMatchObject({ code: "MODEL_NOT_INSTALLED", message: expect.stringContaining("unet/model.onnx") });
    await expect(createDiffusionGenerator(entry, world.context).generate(base, noProgress, never())).rejects.toMatchObject({ code: "MODEL_NOT_INSTALLED" });
  });

  // Full-precision SD UNets exceed protobuf's 2 GB and keep their weights in external data files:
  // the model loader hands such a graph to the runtime by path (ModelLoader.graphFileLoader).
  it("runs a UNet with external data, loaded by path, like the same export inline", async () => {
    const gen = generator("tiny-external", { externalData: true });
    expect(fs.existsSync(path.join(world.dir, "tiny-external", "unet", "model.onnx_data"))).toBe(true);
    const external = await gen.generate(base, noProgress, never());
    const inline = await generator("tiny-sd15").generate(base, noProgress, never());
    expect(Buffer.from(external.image.data).equals(Buffer.from(inline.image.data))).toBe(true);
  });

  it("reads the tokenizer from OpenAI's merges file when the export has no tokenizer folder", async () => {
    const gen = generator("tiny-merges", { tokenizerFiles: false });
    expect(fs.existsSync(path.join(world.dir, "tiny-merges", "tokenizer"))).toBe(false);
    const { runs } = await recorded(gen, { guidanceScale: 1 });
    expect([...runs[0]!.feeds.input_ids!.data.slice(0, 8)]).toEqual([49406, 320, 1125, 539, 320, 2368, 49407, 49407]);
  });
});
