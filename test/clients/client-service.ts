/**
 * The Atelier both client suites run against: a real service with the cheap real models installed
 * from the mirror (Lanczos is built in; the doodle generator, a lite style, the MediaPipe selfie
 * matte and the builtin prompt engine's word lists), one per test file, installed into the
 * `modelsDir` that file asked for.
 */
import { installModels } from "../support/installed-models.js";
import { hasMirrorModel } from "../support/test-assets.js";
import { startTestService, type TestService } from "../support/test-service.js";

export const CLIENT_TEST_MODELS = ["cvae-quickdraw", "candy-lite", "portrait-selfie", "prompt-builtin"];

export function clientModelsAvailable(): boolean {
  return ["cvae-quickdraw", "style-fast-nc16", "portrait-seg-mediapipe-selfie", "prompt-modifiers"].every((folder) => hasMirrorModel(folder));
}

export async function startClientTestService(modelsDir: string): Promise<TestService> {
  return startTestService({ ATELIER_MODELS_DIR: await installModels(modelsDir, CLIENT_TEST_MODELS) });
}
