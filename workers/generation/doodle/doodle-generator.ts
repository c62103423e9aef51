/**
 * cvae-quickdraw as an ImageGenerator: the prompt picks one of the 50 classes of the installed
 * `manifest.json`, the seed draws the latent (16 uniforms in [0, 1), as ml5's CVAE does), the decoder
 * runs once (one step), and its 28x28 stroke probabilities are rendered as a pen drawing at the
 * requested size.
 */
import fs from "node:fs/promises";
import { AtelierError } from "../../../core/errors.js";
import type { CatalogEntry } from "../../../models/catalog/catalog-types.js";
import type { TensorData } from "../../onnx/tensor-data.js";
import type { WorkerContext } from "../../worker-context.js";
import type { GeneratedImage, GenerationParams, ImageGenerator } from "../image-generator.js";
import { seededRandom } from "../../../core/seeded-random.js";
import { DoodleVocabulary, type DoodleClassMatch } from "./doodle-prompt.js";
import { renderDoodle } from "./render-doodle.js";
import { FloatMap } from "./resample-map.js";
import { sessionSettings } from "../../onnx/session-settings.js";

/** The model's tensors (see shared/models/cvae-quickdraw/SOURCE.md). */
const LATENT_INPUT = "latent";
const LABEL_INPUT = "label";
const IMAGE_OUTPUT = "image";
const DEFAULT_LATENT_SIZE = 16;
const MANIFEST = "manifest.json";

/** The decoder's single pass is its only step. */
const TOTAL_STEPS = 1;

/** Fixed size of a declared input's second axis, from the catalog signature. */
function declaredWidth(entry: CatalogEntry, input: string): number | undefined {
  const size = entry.signature?.inputs.find((tensor) => tensor.name === input)?.shape[1];
  return typeof size === "number" ? size : undefined;
}

async function readLabels(entry: CatalogEntry, context: WorkerContext): Promise<string[]> {
  const file = context.models.store.filePath(entry, MANIFEST);
  let manifest: unknown;
  try {
    manifest = JSON.parse(await fs.readFile(file, "utf8"));
  } catch (error) {
    throw new AtelierError("INTERNAL", `The class list of "${entry.id}" (${MANIFEST}) could not be read.`, { cause: error });
  }
  const labels = (manifest as { labels?: unknown }).labels;
  if (!Array.isArray(labels) || labels.length === 0 || !labels.every((label) => typeof label === "string")) {
    throw new AtelierError("INTERNAL", `The class list of "${entry.id}" (${MANIFEST}) has no labels array.`);
  }
  const oneHot = declaredWidth(entry, LABEL_INPUT);
  if (oneHot !== undefined && oneHot !== labels.length + 1) {
    throw new AtelierError("INTERNAL", `"${entry.id}" declares ${oneHot} label slots but its manifest lists ${labels.length} classes.`);
  }
  return labels as string[];
}

/** The 400 for a prompt that names no class: it lists them all, as people write them. */
export function noClassError(entry: CatalogEntry, labels: readonly string[]): AtelierError {
  const names = labels.map(DoodleVocabulary.displayName).join(", ");
  return new AtelierError(
    "INVALID_INPUT",
    `The prompt names none of the ${labels.length} things the model "${entry.id}" can draw. Name one of them (plurals and common synonyms work): ${names}.`,
    { issues: [{ path: "prompt", message: `Expected a prompt naming one of: ${names}.` }] },
  );
}

/** How the response reports the class it drew. */
export function describeMatch(match: DoodleClassMatch): string {
  return `Quick, Draw! class "${match.label}" (from "${match.matched}")`;
}

/** The decoder's inputs for one class and one seed: the latent uniform in [0, 1), the label one-hot. */
export function doodleFeeds(classIndex: number, classCount: number, seed: number, latentSize = DEFAULT_LATENT_SIZE): Record<string, TensorData> {
  const random = seededRandom(seed);
  const latent = new Float32Array(latentSize);
  for (let i = 0; i < latentSize; i++) latent[i] = random.uniform();
  const label = new Float32Array(classCount + 1);
  // Slot 0 is unused: the model was trained with label = class position + 1 (ml5 CVAE.generate).
  label[classIndex + 1] = 1;
  return {
    [LATENT_INPUT]: { data: latent, dims: [1, latentSize] },
    [LABEL_INPUT]: { data: label, dims: [1, classCount + 1] },
  };
}

export function createDoodleGenerator(entry: CatalogEntry, context: WorkerContext): ImageGenerator {
  const model = context.runtime.model(context.models.sessionKey(entry, "default"), context.models.graphLoader(entry, "default"), {
    session: sessionSettings(entry),
  });
  const latentSize = declaredWidth(entry, LATENT_INPUT) ?? DEFAULT_LATENT_SIZE;
  let vocabulary: Promise<DoodleVocabulary> | undefined;
  const loadVocabulary = (): Promise<DoodleVocabulary> => {
    vocabulary ??= readLabels(entry, context).then(
      (labels) => new DoodleVocabulary(labels),
      (error: unknown) => {
        // A failed read is tried again by the next request (the model may be reinstalled meanwhile).
        vocabulary = undefined;
        throw error;
      },
    );
    return vocabulary;
  };

  return {
    entry,
    async generate(params: GenerationParams, onStep, signal): Promise<GeneratedImage> {
      context.models.assertUsable(entry);
      const words = await loadVocabulary();
      const match = words.read(params.prompt);
      if (!match) throw noClassError(entry, words.labels);
      signal.throwIfAborted();
      const outputs = await model.run(doodleFeeds(match.index, words.labels.length, params.seed, latentSize), { signal });
      const probabilities = outputs[IMAGE_OUTPUT];
      const [, , height, width] = probabilities?.dims ?? [];
      if (!probabilities || probabilities.dims.length !== 4 || !height || !width) {
        throw new AtelierError("INTERNAL", `"${entry.id}" returned no ${IMAGE_OUTPUT} tensor of shape [1, 1, H, W].`);
      }
      const image = renderDoodle(new FloatMap(probabilities.data, width, height), params.width, params.height);
      onStep(TOTAL_STEPS, TOTAL_STEPS);
      return { image, steps: TOTAL_STEPS, interpretation: describeMatch(match) };
    },
  };
}
