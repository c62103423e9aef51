/**
 * Every bound on a request field, defined once. The router's zod schemas (and so the OpenAPI
 * document generated from them), the workers' own checks for gRPC callers, and the proto comments
 * (test/contract/limits.test.ts reads them) all state these numbers.
 */
import { MAX_SEED } from "./seeded-random.js";

export interface Bounds {
  readonly min: number;
  readonly max: number;
}

export const LIMITS = {
  /** `prompt` of generate and prompt improve, in characters; models truncate to their own token limit. */
  promptCharacters: { min: 1, max: 2000 },
  /** `negativePrompt` of generate, in characters. */
  negativePromptCharacters: { min: 0, max: 2000 },
  /** `width` and `height` of generate before the model's own limits apply, in pixels. */
  generationSide: { min: 8, max: 4096 },
  /** `steps` of generate (0 over gRPC takes the model's default). */
  steps: { min: 1, max: 100 },
  /** `guidanceScale` of generate. */
  guidanceScale: { min: 0, max: 30 },
  /** `seed` of generate and prompt improve. */
  seed: { min: 0, max: MAX_SEED },
  /** `scheduler` of generate, in characters. */
  schedulerCharacters: { min: 0, max: 40 },
  /** `scale` of upscale, both sides. */
  upscaleScale: { min: 2, max: 8 },
  /** `strength` of style transfer: 0 the original, 1 the full style. */
  styleStrength: { min: 0, max: 1 },
  /** `style` and `mood` of prompt improve, in characters. */
  presetCharacters: { min: 0, max: 200 },
  /** `variants` of prompt improve. */
  promptVariants: { min: 1, max: 4 },
  /** `maxTokens` of prompt improve (gRPC only), in CLIP tokens. */
  promptTokens: { min: 16, max: 512 },
  /** `replacement` of background remove, in characters. */
  replacementCharacters: { min: 0, max: 2000 },
  /** Gaussian sigma of a `blur(<n>px)` replacement, in source pixels. */
  blurSigma: { min: 1, max: 100 },
  /**
   * Calls in one tRPC batch (`/trpc/a,b,...?batch=1`): each is a whole operation with its own key
   * check, so a longer batch would multiply the work one request asks for.
   */
  trpcBatchCalls: { min: 1, max: 10 },
  /** The `Idempotency-Key` header, in visible ASCII characters. */
  idempotencyKeyCharacters: { min: 1, max: 255 },
} as const satisfies Record<string, Bounds>;

/** Every integer of the bounds, in order: `[2, 3, …, 8]` for the upscale scales. */
export function integersOf(bounds: Bounds): number[] {
  return Array.from({ length: bounds.max - bounds.min + 1 }, (_, index) => bounds.min + index);
}
