/**
 * The Node.js entry point: everything in the core, plus local files (paths and `file:` URLs as
 * inputs, `image.save(path)` for outputs). The package's "node" export condition loads this one.
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { platform } from "./platform.js";

platform.files = {
  readFile: async (path) => new Uint8Array(await readFile(path)),
  writeFile: (path, bytes) => writeFile(path, bytes),
  pathOfFileURL: (url) => fileURLToPath(url),
};

export * from "./index.js";
export { Atelier as default } from "./client.js";
