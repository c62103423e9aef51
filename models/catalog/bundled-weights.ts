/**
 * Where the weights of Atelier's own models live: committed beside this module and copied with it
 * into dist/ by the build, so they ship with every install (git checkout, npm package, container
 * image) and need no pull.
 */
import { fileURLToPath } from "node:url";

export const BUNDLED_WEIGHTS_DIR = fileURLToPath(new URL("./bundled/", import.meta.url));
