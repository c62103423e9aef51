/**
 * A fake model family for service tests: catalog entries that are "installed" (builtin source) and a
 * generator that paints a flat grey canvas step by step, recording what it was asked and whether
 * it was stopped. Registered only in the tests' own registries.
 */
import { GENERATION_OPTIONS, type CatalogEntry } from "../../models/catalog/catalog-types.js";
import type { GeneratorRegistration } from "../../workers/generation/generator-registry.js";
import type { GenerationParams, ImageGenerator } from "../../workers/generation/image-generator.js";

/** A Stable-Diffusion-like record: photographic, sizes in multiples of 8. */
export function fakeDiffusionEntry(id = "test-diffusion"): CatalogEntry {
  return {
    id,
    task: "generate",
    name: "Test diffusion model",
    description: "A fake photographic model for tests.",
    license: "MIT",
    nonCommercial: false,
    source: { kind: "builtin" },
    graphs: {},
    generation: { defaultWidth: 64, defaultHeight: 48, minSize: 32, maxWidth: 256, maxHeight: 256, sizeMultiple: 8, options: GENERATION_OPTIONS },
    photographic: true,
    details: { family: "stable-diffusion" },
  };
}

export interface FakeRun {
  params: GenerationParams;
  /** Steps finished before the run ended. */
  stepsDone: number;
  /** True when the signal stopped the run early. */
  aborted: boolean;
  /** Settles when the run ends, finished or aborted. */
  done: Promise<void>;
}

export interface FakeFamily {
  registration: GeneratorRegistration;
  /** Every run so far, oldest first. */
  runs: FakeRun[];
}

/** A family whose generators take `totalSteps` steps of `stepMs` each, aborting between steps. */
export function fakeFamily(options: { totalSteps?: number; stepMs?: number; family?: string } = {}): FakeFamily {
  const totalSteps = options.totalSteps ?? 4;
  const stepMs = options.stepMs ?? 5;
  const runs: FakeRun[] = [];
  return {
    runs,
    registration: {
      family: options.family ?? "fake-diffusion",
      matches: (entry) => entry.details?.family === "stable-diffusion",
      create: (entry): ImageGenerator => ({
        entry,
        async generate(params, onStep, signal) {
          let finish: () => void = () => undefined;
          const run: FakeRun = { params, stepsDone: 0, aborted: false, done: new Promise((resolve) => (finish = resolve)) };
          runs.push(run);
          try {
            for (let step = 1; step <= (params.steps ?? totalSteps); step++) {
              await new Promise((resolve) => setTimeout(resolve, stepMs));
              if (signal.aborted) {
                run.aborted = true;
                signal.throwIfAborted();
              }
              run.stepsDone = step;
              onStep(step, params.steps ?? totalSteps);
            }
          } finally {
            finish();
          }
          const data = new Uint8Array(params.width * params.height * 3).fill(params.seed % 256);
          return { image: { data, width: params.width, height: params.height, channels: 3 }, steps: run.stepsDone, interpretation: `fake: ${params.prompt}` };
        },
      }),
    },
  };
}
