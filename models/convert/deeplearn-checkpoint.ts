/**
 * Reads a deeplearn.js `CheckpointLoader` folder: `manifest.json` maps variable names to
 * `{filename, shape}`, and each file is the raw tensor as little-endian float32, no header.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { WeightTensor } from "./tfjs-layers-model.js";

interface ManifestEntry {
  filename: string;
  shape: number[];
}

/** All variables of the checkpoint by name, each checked against its manifest shape. */
export async function readDeeplearnCheckpoint(checkpointDir: string): Promise<Map<string, WeightTensor>> {
  const manifestPath = path.join(checkpointDir, "manifest.json");
  const manifest = JSON.parse(await fs.readFile(manifestPath, "utf8")) as Record<string, ManifestEntry>;
  const variables = new Map<string, WeightTensor>();
  for (const [name, entry] of Object.entries(manifest)) {
    if (typeof entry?.filename !== "string" || !Array.isArray(entry.shape)) {
      throw new Error(`${manifestPath}: entry ${name} lacks filename/shape`);
    }
    // Manifest file names are plain names in the same folder; refuse anything that walks out of it.
    if (path.basename(entry.filename) !== entry.filename) throw new Error(`${manifestPath}: unsafe filename ${entry.filename}`);
    const bytes = await fs.readFile(path.join(checkpointDir, entry.filename));
    const count = entry.shape.reduce((a, b) => a * b, 1);
    if (bytes.length !== count * 4) {
      throw new Error(`${entry.filename}: ${bytes.length} bytes, but shape [${entry.shape.join(", ")}] needs ${count * 4}`);
    }
    const data = new Float32Array(count);
    for (let i = 0; i < count; i++) data[i] = bytes.readFloatLE(i * 4);
    variables.set(name, { shape: [...entry.shape], data });
  }
  return variables;
}
