/**
 * The folder holding Atelier's package.json. Modules run from their sources (`tsx`) or compiled into
 * `dist/` one level deeper, so files read at run time (the manifest, data next to the package) are
 * found from here rather than by a path relative to the module.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`No package.json above ${from}`);
  }
}

export const PACKAGE_ROOT = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));

/** `version` from the package manifest. */
export function packageVersion(): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string };
  return manifest.version;
}
