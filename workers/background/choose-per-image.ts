/**
 * The default model for one picture: the selfie model runs on it first (a few milliseconds at its
 * 256 x 256 input), and its own matte says whether a person is there (person-evidence.ts). Where one
 * is, its result is as good as the general model's (bench/background-choice.ts), so it serves the
 * request; elsewhere the general model does.
 */
import type { OpenedImage } from "../../core/open-image.js";
import type { ChosenModel, PerImageChoice } from "../../models/requests/background-model-choice.js";
import { personEvidence, showsPerson, type PersonEvidence } from "./person-evidence.js";
import { networkInputOf } from "./network-input.js";
import { networkSize, predictMatte } from "./predict-matte.js";
import type { RemovalDependencies } from "./remove-background.js";

export async function chooseForImage(
  choice: PerImageChoice,
  source: OpenedImage,
  deps: Pick<RemovalDependencies, "runtime" | "models">,
  signal?: AbortSignal,
): Promise<{ model: ChosenModel; evidence: PersonEvidence }> {
  const { portrait, general } = choice;
  const [width, height] = networkSize(portrait);
  // The same input the removal gives the network (decode-source.ts), decoded straight to its size.
  const input = await networkInputOf(source, { width, height }, portrait.spec.inputKernel);
  const evidence = personEvidence(await predictMatte(input, portrait, deps.runtime, deps.models, signal));
  return { model: showsPerson(evidence) ? portrait : general, evidence };
}
