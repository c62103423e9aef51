/**
 * Records the size and sha256 of every weight file the catalog knows, from the files as published
 * (the npm packages in node_modules and the local model mirror), into
 * workers/catalog/pinned-weights.json. Run it by hand when a model is added or an upstream file is
 * deliberately updated, and review the diff: these checksums are what every install is verified
 * against, so they are never recomputed automatically.
 *
 *   npx tsx scripts/pin-weights.ts [--mirror DIR]
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../core/config.js";
import { WEIGHT_FILE_SETS } from "../workers/catalog/weight-file-sets.js";

const { values } = parseArgs({ options: { mirror: { type: "string" } } });
const mirror = path.resolve(values.mirror ?? loadConfig().modelMirror);

function listFiles(root: string): string[] {
  return fs
    .readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .sort();
}

function sha256(file: string): string {
  return createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

const pinned: Record<string, Record<string, { size: number; sha256: string }>> = {};
for (const [modelId, set] of Object.entries(WEIGHT_FILE_SETS)) {
  const root = set.npmPackage ? path.join("node_modules", set.npmPackage, set.folder) : path.join(mirror, set.folder);
  const names = (set.files ?? listFiles(root)).filter((name) => !name.endsWith("SOURCE.md") && !path.basename(name).startsWith("."));
  pinned[modelId] = {};
  for (const name of names) {
    const file = path.join(root, name);
    pinned[modelId][name] = { size: fs.statSync(file).size, sha256: sha256(file) };
  }
  console.log(`${modelId}: ${names.length} files`);
}
const target = path.join("workers", "catalog", "pinned-weights.json");
fs.writeFileSync(target, `${JSON.stringify(pinned, null, 1)}\n`);
console.log(`wrote ${target}`);
