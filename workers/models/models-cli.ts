/**
 * `npm run models -- <command>`: list, pull, verify and remove model weights in ATELIER_MODELS_DIR.
 *
 *   list [--json]                       every catalogued model and whether it is installed
 *   pull ID... | pull --all [--from SRC] install from public origins, a mirror folder or a mirror URL
 *   verify [ID...]                      re-hash installed files against their pinned checksums
 *   remove ID...                        delete pulled models
 */
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../../core/config.js";
import { MODEL_CATALOG, catalogEntry, unpinnedFiles, weightSize, type CatalogEntry } from "../catalog/model-catalog.js";
import { ModelInstallError } from "./fetch-weight-file.js";
import { modelConverters } from "./model-converters.js";
import { cleanStaging, pullModel, removeModel, verifyModel } from "./model-installer.js";
import { ModelStore } from "./model-store.js";

const USAGE = `Usage: npm run models -- <command>
  list [--json]                      every catalogued model and whether it is installed
  pull ID... [--from SRC] [--force]  install models (SRC: a mirror folder or http(s) mirror URL;
                                     without --from, files come from their public origins)
  pull --all [--from SRC]            install every model that has files to pull
  verify [ID...]                     re-hash installed models against their pinned sha256
  remove ID...                       delete pulled models`;

class UsageError extends Error {}

function megabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

function resolveIds(ids: string[]): CatalogEntry[] {
  return ids.map((id) => {
    const entry = catalogEntry(id);
    if (!entry) throw new UsageError(`Unknown model "${id}". See \`npm run models -- list\`.`);
    return entry;
  });
}

function progressPrinter(id: string): (progress: { file: string; receivedBytes: number; totalBytes: number }) => void {
  let lastShown = 0;
  return ({ file, receivedBytes, totalBytes }) => {
    const now = Date.now();
    const done = receivedBytes === totalBytes;
    if (totalBytes < 5_000_000 || (!done && now - lastShown < 500)) return;
    lastShown = now;
    const percent = Math.floor((100 * receivedBytes) / totalBytes);
    process.stderr.write(`  ${id}/${file}: ${percent}% of ${megabytes(totalBytes)}${done ? "\n" : process.stderr.isTTY ? "\r" : "\n"}`);
  };
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: "boolean", default: false },
      all: { type: "boolean", default: false },
      force: { type: "boolean", default: false },
      from: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const [command, ...ids] = positionals;
  if (values.help || command === undefined || command === "help") {
    console.log(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  const config = loadConfig();
  const store = new ModelStore(config.modelsDir);

  switch (command) {
    case "list": {
      const rows = MODEL_CATALOG.map((entry) => ({
        id: entry.id,
        task: entry.task,
        installed: store.isInstalled(entry),
        size: weightSize(entry),
        license: entry.license,
        nonCommercial: entry.nonCommercial,
        install: store.installCommand(entry),
      }));
      if (values.json) {
        console.log(JSON.stringify(rows, null, 2));
      } else {
        const width = Math.max(...rows.map((row) => row.id.length));
        for (const row of rows) {
          const state = row.installed ? "installed" : "missing  ";
          const extra = row.installed || !row.install ? "" : `  (${row.install})`;
          console.log(`${row.id.padEnd(width)}  ${row.task.padEnd(17)}  ${state}  ${megabytes(row.size).padStart(9)}${row.nonCommercial ? "  non-commercial" : ""}${extra}`);
        }
        console.log(`\nModels folder: ${config.modelsDir}`);
      }
      return 0;
    }
    case "pull": {
      if (values.all === ids.length > 0) throw new UsageError("Name the models to pull, or pass --all.");
      // --all takes what can be verified: models whose every file has a pinned checksum.
      const entries = values.all
        ? MODEL_CATALOG.filter((entry) => entry.source.kind === "files" && unpinnedFiles(entry).length === 0)
        : resolveIds(ids);
      const cleaned = cleanStaging(store);
      if (cleaned > 0) console.error(`Removed ${cleaned} leftover(s) of interrupted installs.`);
      const controller = new AbortController();
      process.once("SIGINT", () => {
        console.error("\nInterrupted: nothing half-installed is left behind.");
        controller.abort(new ModelInstallError("interrupted"));
      });
      let failures = 0;
      for (const entry of entries) {
        try {
          const result = await pullModel(entry, store, {
            from: values.from,
            force: values.force,
            converters: modelConverters,
            signal: controller.signal,
            onProgress: progressPrinter(entry.id),
          });
          console.log(`${entry.id}: ${result === "installed" ? "installed and verified" : "already installed"}`);
        } catch (error) {
          if (controller.signal.aborted) return 130;
          failures += 1;
          console.error(`${entry.id}: FAILED: ${(error as Error).message}`);
        }
      }
      return failures === 0 ? 0 : 1;
    }
    case "verify": {
      const entries = ids.length > 0 ? resolveIds(ids) : MODEL_CATALOG.filter((entry) => entry.source.kind !== "builtin" && store.isInstalled(entry));
      let failures = 0;
      for (const entry of entries) {
        const result = await verifyModel(entry, store);
        if (!result.ok) failures += 1;
        console.log(`${entry.id}: ${result.ok ? "OK" : `FAILED: ${result.problems.join("; ")}`}`);
      }
      if (entries.length === 0) console.log("No installed models with weights.");
      return failures === 0 ? 0 : 1;
    }
    case "remove": {
      if (ids.length === 0) throw new UsageError("Name the models to remove.");
      for (const entry of resolveIds(ids)) console.log(`${entry.id}: ${removeModel(entry, store) ? "removed" : "was not installed"}`);
      return 0;
    }
    default:
      throw new UsageError(`Unknown command "${command}".`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      console.error(`${(error as Error).message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else {
      console.error(error instanceof ConfigError || error instanceof ModelInstallError ? (error as Error).message : error);
      process.exitCode = 1;
    }
  },
);
