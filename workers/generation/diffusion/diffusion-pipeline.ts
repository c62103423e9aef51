/**
 * The text-to-image loop of Stable Diffusion, as an ordered list of phases over three graphs, each
 * held loaded only for its phase so the runtime may evict the others under memory pressure:
 *
 * 1. tokenize the prompt (and the negative prompt when guidance is on) and encode them;
 * 2. draw the initial latents from the seed (unit normals × the sampler's initial sigma);
 * 3. for each step: scale the latents for the UNet, predict (unconditional and conditional rows,
 *    combined by classifier-free guidance), let the sampler advance the latents, report progress;
 *    the signal is checked before every step;
 * 4. decode the latents with the VAE.
 *
 * A pixel-space model runs the same loop: its "latents" are the RGB pixels (one per latent cell, see
 * `latentFactor`) and its VAE decoder only clamps them.
 *
 * Randomness comes only from the seed (workers/generation/seeded-random.ts: sfc32 seeded through
 * splitmix32, Box–Muller normals), drawn in a fixed order (initial latents in NCHW order, then any
 * noise the sampler adds, step by step), so the same parameters give the same pixels on the same
 * runtime and thread count. The noise is not torch's, so images differ from diffusers' for the
 * same seed number.
 */
import { AtelierError } from "../../../core/errors.js";
import type { RawImage } from "../../image/raw-image.js";
import { throwIfCancelled } from "../../onnx/cancellation.js";
import { seededRandom } from "../../../core/seeded-random.js";
import type { ClipTokenizer } from "../../clip-tokenizer/clip-tokenizer.js";
import type { GraphHandle } from "./diffusion-graph.js";
import { classifierFreeGuidance, guidanceScaleEmbedding } from "./guidance.js";
import type { NoiseSchedule } from "./noise-schedule.js";
import type { SamplerSpec } from "./schedulers/sampler-registry.js";
import { encodeTokens } from "./text-encoding.js";
import { UnetRunner, unetLayout } from "./unet.js";
import { decodeLatents } from "./vae-decoding.js";

export interface DiffusionModel {
  textEncoder: GraphHandle;
  unet: GraphHandle;
  vaeDecoder: GraphHandle;
  tokenizer: ClipTokenizer;
  schedule: NoiseSchedule;
  /** Latents are divided by this before decoding (0.18215). */
  vaeScalingFactor: number;
  /** Pixels per latent cell along each side: 8 for SD's VAE, 1 for a pixel-space model (latent-factor.ts). */
  latentFactor: number;
  /** `timestep_cond` size when the UNet's signature leaves it open (unet/config.json `time_cond_proj_dim`). */
  timestepCondSize?: number;
}

export interface DiffusionRequest {
  prompt: string;
  negativePrompt: string;
  /** Pixels, a multiple of the model's latent factor. */
  width: number;
  height: number;
  /** Denoising steps, 1..sampler.maxSteps. */
  steps: number;
  /** Classifier-free guidance scale; at most 1 runs the conditional row only. */
  guidanceScale: number;
  /** 0..2^32−1. */
  seed: number;
  sampler: SamplerSpec;
}

export interface DiffusionResult {
  image: RawImage;
  steps: number;
  /** UNet runs made (steps × 1 or 2). */
  unetRuns: number;
  /** Whether the unconditional row was run (classifier-free guidance). */
  guided: boolean;
  /** Whether the prompt was longer than the text encoder reads. */
  truncated: boolean;
}

function invalid(field: string, message: string): AtelierError {
  return new AtelierError("INVALID_INPUT", `${message}`, { issues: [{ path: field, message }] });
}

/** Checks what the pipeline itself depends on (the service has already checked the catalog's bounds). */
export function checkRequest(request: DiffusionRequest, latentFactor: number): void {
  for (const field of ["width", "height"] as const) {
    const value = request[field];
    if (!Number.isInteger(value) || value < latentFactor || value % latentFactor !== 0) {
      throw invalid(field, `Expected a positive multiple of ${latentFactor} for ${field} but received ${value}.`);
    }
  }
  const { steps, sampler } = request;
  if (!Number.isInteger(steps) || steps < 1 || steps > sampler.maxSteps) {
    throw invalid("steps", `Expected integer between 1 and ${sampler.maxSteps} for steps with the ${sampler.name} scheduler but received ${steps}.`);
  }
  if (!(request.guidanceScale >= 0) || !Number.isFinite(request.guidanceScale)) {
    throw invalid("guidanceScale", `Expected a non-negative number for guidanceScale but received ${request.guidanceScale}.`);
  }
}

export async function runDiffusion(
  model: DiffusionModel,
  request: DiffusionRequest,
  onStep: (step: number, totalSteps: number) => void,
  signal: AbortSignal,
): Promise<DiffusionResult> {
  checkRequest(request, model.latentFactor);
  throwIfCancelled(signal);
  const sampler = request.sampler.create(model.schedule, request.steps);
  const totalSteps = sampler.timesteps.length;
  const factor = model.latentFactor;
  const latentHeight = request.height / factor;
  const latentWidth = request.width / factor;

  // The UNet's signature decides guidance (LCM UNets embed it instead) and the latent shape.
  const layout = await model.unet.use(async (graph) => unetLayout(graph.signature.inputs, graph.signature.outputs, model.timestepCondSize), signal);
  if (layout.fixedLatentSize && (layout.fixedLatentSize[0] !== latentHeight || layout.fixedLatentSize[1] !== latentWidth)) {
    const [h, w] = layout.fixedLatentSize;
    throw invalid("width", `This model only draws ${w * factor}x${h * factor} images; received ${request.width}x${request.height}.`);
  }
  const embedsGuidance = layout.timestepCondSize !== undefined;
  const guided = request.sampler.classifierFree && !embedsGuidance && request.guidanceScale > 1;

  const tokenizer = model.tokenizer;
  const ids = guided ? [tokenizer.encode(request.negativePrompt), tokenizer.encode(request.prompt)] : [tokenizer.encode(request.prompt)];
  const text = await model.textEncoder.use((graph) => encodeTokens(graph, ids, signal), signal);
  throwIfCancelled(signal);

  const random = seededRandom(request.seed);
  const noise = () => random.normal();
  let latents: Float32Array = new Float32Array(layout.channels * latentHeight * latentWidth);
  for (let i = 0; i < latents.length; i++) latents[i] = noise() * sampler.initNoiseSigma;
  const timestepCond = embedsGuidance ? guidanceScaleEmbedding(request.guidanceScale, layout.timestepCondSize!) : undefined;

  const runner = new UnetRunner(layout);
  latents = await model.unet.use(async (graph) => {
    let current: Float32Array = latents;
    for (let step = 0; step < totalSteps; step++) {
      throwIfCancelled(signal);
      const predictions = await runner.predict(
        graph,
        {
          sample: current,
          sampleScale: sampler.inputScale(step),
          latentHeight,
          latentWidth,
          timestep: sampler.timesteps[step]!,
          contexts: text.states,
          length: text.length,
          hidden: text.hidden,
          ...(timestepCond ? { timestepCond } : {}),
        },
        signal,
      );
      const prediction = guided ? classifierFreeGuidance(predictions[0]!, predictions[1]!, request.guidanceScale) : predictions[0]!;
      current = sampler.step(step, prediction, current, noise);
      onStep(step + 1, totalSteps);
    }
    return current;
  }, signal);
  throwIfCancelled(signal);

  const image = await model.vaeDecoder.use(
    (graph) => decodeLatents(graph, latents, [layout.channels, latentHeight, latentWidth], model.vaeScalingFactor, signal),
    signal,
  );
  if (image.width !== request.width || image.height !== request.height) {
    throw new AtelierError("INTERNAL", `The VAE decoder drew ${image.width}x${image.height} for a ${request.width}x${request.height} request.`);
  }
  return { image, steps: totalSteps, unetRuns: runner.runs, guided, truncated: tokenizer.isTruncated(request.prompt) };
}
