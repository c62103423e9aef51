/**
 * The contract between the generation service and each family of text-to-image models (the
 * Quick, Draw! doodle decoder, Stable Diffusion, …). The service validates the request, resolves
 * size, seed and model, runs `generate` inside the worker's work queue and encodes the result; a
 * generator only turns valid parameters into pixels. Generators must not call `queue.run`
 * themselves (the service already holds a queue slot for them).
 */
import type { RawImage } from "../image/raw-image.js";
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";
import type { GenerationParams } from "../../models/requests/generation-request.js";

export type { GenerationParams };

/** The drawn pixels at exactly `width` x `height`, the steps run, and how the prompt was read. */
export interface GeneratedImage { image: RawImage; steps: number; interpretation?: string; }

export interface ImageGenerator {
  readonly entry: CatalogEntry;
  /**
   * Draws one image. `onStep` is called after every step (1-based, `totalSteps` fixed for the
   * call); `signal` aborts between steps. The same params give the same pixels. Prompt problems the
   * model cannot handle throw an AtelierError INVALID_INPUT with an issue on `prompt`.
   */
  generate(params: GenerationParams, onStep: (step: number, totalSteps: number) => void, signal: AbortSignal): Promise<GeneratedImage>;
}
