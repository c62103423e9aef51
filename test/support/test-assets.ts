/**
 * Where tests find assets that are not in the repository: the model mirror (`ATELIER_MODEL_MIRROR`,
 * default `../shared/models`) and natural photographs (`ATELIER_TEST_PHOTOS`, default
 * `data/test-photos`, filled by `scripts/fetch-test-photos.sh`). Outside CI a missing asset skips the
 * tests that need it, with a visible notice; in CI (`CI` set) it fails them, so they always run there.
 */
import fs from "node:fs";
import path from "node:path";

/**
 * The mirror tests and benchmarks pull from: ATELIER_MODEL_MIRROR (CI sets it), else the team's
 * checkout layout. This development default lives here, never in the product's configuration.
 */
export const modelMirror = path.resolve(process.env.ATELIER_MODEL_MIRROR?.trim() || path.join("..", "shared", "models"));
export const testPhotos = path.resolve(process.env.ATELIER_TEST_PHOTOS ?? path.join("data", "test-photos"));

function available(label: string, location: string, howToGet: string): boolean {
  if (fs.existsSync(location)) return true;
  if (process.env.CI) throw new Error(`${label} missing at ${location}; CI requires it (${howToGet}).`);
  console.warn(`\n[notice] ${label} not found at ${location}: skipping the tests that need it (${howToGet}).\n`);
  return false;
}

/** True when the mirror folder for `modelId` exists; logs a notice (or throws in CI) when not. */
export function hasMirrorModel(modelId: string): boolean {
  return available(`Model mirror folder ${modelId}`, path.join(modelMirror, modelId), "set ATELIER_MODEL_MIRROR to the mirror of shared/models");
}

export function mirrorPath(modelId: string, ...file: string[]): string {
  return path.join(modelMirror, modelId, ...file);
}

/** True when the test photographs are present. */
export function hasTestPhotos(): boolean {
  return available("Test photographs", path.join(testPhotos, "chelsea.png"), "run scripts/fetch-test-photos.sh");
}

export function testPhoto(name: "astronaut.png" | "chelsea.png" | "coffee.png" | "rocket.jpg" | "motorcycle_left.png" | "camera.png"): string {
  return path.join(testPhotos, name);
}
