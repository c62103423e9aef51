/**
 * `npm run models -- <command>`: list, pull, import, verify and remove model weights in
 * ATELIER_MODELS_DIR (usage below).
 */
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../core/config.js";
import { MODEL_CATALOG, catalogEntry, fullyPinned, weightSize, type CatalogEntry } from "../models/catalog/model-catalog.js";
import { ModelInstallError } from "../models/store/fetch-weight-file.js";
import { modelConverters } from "../models/convert/model-converters.js";
import { HubClient } from "../models/store/hub-files.js";
import { cleanStaging, importModel, pullModel, removeModel, verifyModel } from "../models/store/model-installer.js";
import { ModelStore } from "../models/store/model-store.js";

const USAGE = `Usage: npm run models -- <command>
  list [--json]                      every catalogued model and whether it is installed
  pull ID... [--from SRC] [--force]  install models (SRC: a mirror folder or http(s) mirror URL;
                                     without --from, ATELIER_MODEL_MIRROR if set, else the files'
                                     public origins)
                                     (models from a model hub: ATELIER_MODEL_HUB_URL)
  pull --all [--from SRC]            install every model whose files are all pinned here
  import ID DIR [--from SRC]         install an export you made (e.g. optimum-cli) from DIR,
                                     recording its checksums
  verify [ID...]                     re-hash installed models against their checksums
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
          const size = row.size > 0 || !row.install ? megabytes(row.size) : "unknown";
          console.log(`${row.id.padEnd(width)}  ${row.task.padEnd(17)}  ${state}  ${size.padStart(9)}${row.nonCommercial ? "  non-commercial" : ""}${extra}`);
        }
        console.log(`\nModels folder: ${config.modelsDir}`);
      }
      return 0;
    }
    case "pull": {
      if (values.all === ids.length > 0) throw new UsageError("Name the models to pull, or pass --all.");
      // --all takes the models whose every file is pinned here: not the multi-GB hub exports, which
      // are pulled by name, nor exports only an operator can make.
      const entries = values.all
        ? MODEL_CATALOG.filter((entry) => entry.source.kind === "files" && fullyPinned(entry))
        : resolveIds(ids);
      const from = values.from ?? config.modelMirror;
      if (values.from === undefined && from !== undefined) console.error(`Installing from the mirror in ATELIER_MODEL_MIRROR (${from}).`);
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
            from,
            force: values.force,
            converters: modelConverters,
            hub: new HubClient({ baseUrl: config.modelHub.url, token: config.modelHub.token }),
            signal: controller.signal,
            onProgress: progressPrinter(entry.id),
          });
          const origin = result === "installed" && entry.source.kind === "files" && entry.source.hub ? ` (${store.readInstallRecord(entry.id)?.from})` : "";
          console.log(`${entry.id}: ${result === "installed" ? `installed and verified${origin}` : "already installed"}`);
        } catch (error) {
          if (controller.signal.aborted) return 130;
          failures += 1;
          console.error(`${entry.id}: FAILED: ${(error as Error).message}`);
        }
      }
      return failures === 0 ? 0 : 1;
    }
    case "import": {
      const [id, folder, ...rest] = ids;
      if (id === undefined || folder === undefined || rest.length > 0) throw new UsageError("Usage: import ID DIR");
      const [entry] = resolveIds([id]);
      cleanStaging(store);
      await importModel(entry!, store, folder, { from: values.from, converters: modelConverters });
      console.log(`${id}: imported from ${folder}; checksums recorded (\`npm run models -- verify ${id}\` re-checks them)`);
      return 0;
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
