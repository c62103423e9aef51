/**
 * A Stable Diffusion ONNX export (SD 1.x, 2.x, their Turbo and LCM variants) as an ImageGenerator:
 * the catalog record names the model and its defaults (`details.diffusion`), the installed folder
 * holds the Optimum layout (models/catalog/diffusion-export-layout.ts), the worker's runtime runs the three graphs.
 * Tokenizer, schedule and configs are read once, on first use, and kept.
 */
import path from "node:path";
import { AtelierError, modelNotInstalled } from "../../../core/errors.js";
import type { CatalogEntry } from "../../../models/catalog/catalog-types.js";
import type { WorkerContext } from "../../worker-context.js";
import type { GeneratedImage, GenerationParams, ImageGenerator } from "../image-generator.js";
import type { ClipTokenizerOptions } from "../../clip-tokenizer/clip-tokenizer.js";
import { loadClipTokenizer } from "../../clip-tokenizer/tokenizer-files.js";
import { runtimeGraph, type GraphHandle } from "./diffusion-graph.js";
import { runDiffusion, type DiffusionModel } from "./diffusion-pipeline.js";
import { diffusionSettings } from "./diffusion-settings.js";
import { DEFAULT_VAE_SCALING_FACTOR, DIFFUSION_GRAPHS, EXPORT_FILES, missingFiles, readJsonObject } from "../../../models/catalog/diffusion-export-layout.js";
import { latentFactor } from "./latent-factor.js";
import { NoiseSchedule } from "./noise-schedule.js";
import { DEFAULT_SCHEDULE, parseScheduleConfig } from "./scheduler-config.js";
import { SAMPLER_NAMES, samplerSpec } from "./schedulers/sampler-registry.js";

/** Files without which the model cannot run; the tokenizer is checked separately (folder or merges file). */
const REQUIRED_FILES = [EXPORT_FILES.textEncoder, EXPORT_FILES.unet, EXPORT_FILES.vaeDecoder];

export interface DiffusionGenerator extends ImageGenerator {
  /** The model's parts, loaded (once) from its folder; exposed for benchmarks and tests. */
  model(): Promise<DiffusionModel>;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : fallback;
}

async function loadModel(entry: CatalogEntry, context: WorkerContext, padToken: string | undefined): Promise<DiffusionModel> {
  const { models, runtime } = context;
  const folder = models.store.modelFolder(entry.id);
  const missing = await missingFiles(folder, REQUIRED_FILES);
  const tokenizerFolder = path.join(folder, EXPORT_FILES.tokenizerFolder);
  const hasTokenizer = (await missingFiles(folder, [`${EXPORT_FILES.tokenizerFolder}/vocab.json`, `${EXPORT_FILES.tokenizerFolder}/merges.txt`])).length === 0;
  const hasMerges = (await missingFiles(folder, [EXPORT_FILES.clipMerges])).length === 0;
  if (!hasTokenizer && !hasMerges) missing.push(`${EXPORT_FILES.tokenizerFolder}/vocab.json`);
  if (missing.length > 0) {
    throw modelNotInstalled(`The model "${entry.id}" is missing ${missing.join(", ")} (an ONNX export copied into ${folder} also works).`, {
      install: [models.installable(entry)],
    });
  }
  const read = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw new AtelierError("INTERNAL", `The ${what} of "${entry.id}" could not be read.`, { cause: error });
    }
  };
  const defaults: ClipTokenizerOptions = padToken === undefined ? {} : { padToken };
  const tokenizer = await read("tokenizer", () => loadClipTokenizer(tokenizerFolder, hasMerges ? path.join(folder, EXPORT_FILES.clipMerges) : undefined, defaults));
  const schedulerJson = await read("scheduler config", () => readJsonObject(path.join(folder, EXPORT_FILES.schedulerConfig)));
  const scheduleConfig = await read("scheduler config", async () => (schedulerJson ? parseScheduleConfig(schedulerJson) : DEFAULT_SCHEDULE));
  const vaeConfig = await read("VAE config", () => readJsonObject(path.join(folder, EXPORT_FILES.vaeConfig)));
  const unetConfig = await read("UNet config", () => readJsonObject(path.join(folder, EXPORT_FILES.unetConfig)));
  // By path where the weights live in external data files (a full-precision UNet), else as bytes.
  const graph = (name: string): GraphHandle => runtimeGraph(runtime, models.sessionKey(entry, name), models.graphFileLoader(entry, name));
  const model: DiffusionModel = {
    textEncoder: graph(DIFFUSION_GRAPHS.textEncoder),
    unet: graph(DIFFUSION_GRAPHS.unet),
    vaeDecoder: graph(DIFFUSION_GRAPHS.vaeDecoder),
    tokenizer,
    schedule: new NoiseSchedule(scheduleConfig),
    vaeScalingFactor: numberOr(vaeConfig?.scaling_factor, DEFAULT_VAE_SCALING_FACTOR),
    latentFactor: await read("VAE config", async () => latentFactor(vaeConfig)),
  };
  const condSize = unetConfig?.time_cond_proj_dim;
  if (typeof condSize === "number" && Number.isInteger(condSize)) model.timestepCondSize = condSize;
  return model;
}

export function createDiffusionGenerator(entry: CatalogEntry, context: WorkerContext): DiffusionGenerator {
  const settings = diffusionSettings(entry);
  let loading: Promise<DiffusionModel> | undefined;
  const model = () => {
    if (!loading) {
      loading = loadModel(entry, context, settings.padToken);
      // A model that was not installed yet (or failed to read) is looked for again next time.
      loading.catch(() => (loading = undefined));
    }
    return loading;
  };

  return {
    entry,
    model,
    async generate(params: GenerationParams, onStep, signal): Promise<GeneratedImage> {
      context.models.assertUsable(entry);
      const schedulerName = params.scheduler ?? settings.scheduler;
      const sampler = samplerSpec(schedulerName);
      if (!sampler) {
        const message = `Unknown scheduler "${schedulerName}". Available: ${SAMPLER_NAMES.join(", ")}.`;
        throw new AtelierError("INVALID_INPUT", message, { issues: [{ path: "scheduler", message }] });
      }
      // A model's default step count may exceed what another sampler accepts (25 vs turbo's 4).
      const steps = params.steps ?? (schedulerName === settings.scheduler ? settings.steps : Math.min(settings.steps, sampler.maxSteps));
      const loaded = await model();
      const result = await runDiffusion(
        loaded,
        {
          prompt: params.prompt,
          negativePrompt: params.negativePrompt,
          width: params.width,
          height: params.height,
          steps,
          guidanceScale: params.guidanceScale ?? settings.guidanceScale,
          seed: params.seed,
          sampler,
        },
        onStep,
        signal,
      );
      const generated: GeneratedImage = { image: result.image, steps: result.steps };
      if (result.truncated) {
        generated.interpretation = `The prompt is longer than the text encoder reads (${loaded.tokenizer.maxLength - 2} tokens); the rest was ignored.`;
      }
      return generated;
    },
  };
}
