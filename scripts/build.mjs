/**
 * `npm run build`: generates the gRPC code (gen/) and compiles the runtime (the folders of
 * RUNTIME_FOLDERS, and gen) to JavaScript in dist/, with the other files it reads (JSON, .mjs, the
 * console's static assets) copied beside it. Plain JavaScript so
 * it runs where only production dependencies are installed.
 *
 * `--if-stale` (the `pre` step of start, start:workers, keys and models) builds only when dist/ is
 * missing or older than a source, and only where the build tools are installed: a deployed tree
 * (`npm ci --omit=dev`) runs the dist/ it was shipped with. Its output goes to stderr so a command's
 * own output (`keys create --json`) stays clean.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const stamp = path.join(root, "dist", ".build-stamp");
/** Folders compiled into dist/; their other files (JSON, .mjs, the console's CSS and images) are copied beside the output. */
const RUNTIME_FOLDERS = ["core", "transport", "database", "models", "contract", "server", "facade", "workers", "console", "jobs", "operations", "observability", "bin"];
/** What the build reads: a change to any of these makes dist/ stale. */
const SOURCES = [...RUNTIME_FOLDERS, "proto", "buf.gen.yaml", "tsconfig.json", "tsconfig.build.json"];
const NOT_COPIED = /\.(ts|mts|cts|md)$/;
const BUILD_TOOLS = ["typescript", "ts-proto", "@bufbuild/buf"];

/**
 * Newest modification time (ms) of a file, or of any file under a folder.
 * @param {string} file
 * @returns {number}
 */
function newestChange(file) {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of fs.readdirSync(file)) newest = Math.max(newest, newestChange(path.join(file, entry)));
  return newest;
}

function missingBuildTools() {
  const require = createRequire(path.join(root, "package.json"));
  return BUILD_TOOLS.filter((name) => {
    try {
      require.resolve(`${name}/package.json`);
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * Runs an npm script (with the npm that runs this one, if any), its output on stderr.
 * @param {string} script
 */
function npmRun(script) {
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm, "run", script]] : ["npm", ["run", script]];
  const result = spawnSync(command, args, { cwd: root, stdio: ["ignore", 2, 2], shell: !npm && process.platform === "win32" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/**
 * Copies the files under `folder` (relative to the root) that are not TypeScript into dist/, at the
 * same relative path.
 * @param {string} folder
 */
function copyAssets(folder) {
  const from = path.join(root, folder);
  if (!fs.existsSync(from)) return;
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const name = path.join(folder, entry.name);
    if (entry.isDirectory()) copyAssets(name);
    else if (entry.isFile() && !NOT_COPIED.test(entry.name)) {
      fs.mkdirSync(path.join(root, "dist", folder), { recursive: true });
      fs.copyFileSync(path.join(root, name), path.join(root, "dist", name));
    }
  }
}

/**
 * Says what the build is doing as each step starts, and the time it took at the end: compiling is
 * the long step (most of a minute on a small machine), and a silent terminal looks like a hang.
 * @param {string} step
 */
function say(step) {
  console.error(`  ${step}`);
}

function build() {
  const started = Date.now();
  say("generating the gRPC code from proto/ (buf)…");
  npmRun("generate");
  say("compiling TypeScript into dist/ (the longest step: up to a minute or two on a small machine)…");
  const tsc = createRequire(path.join(root, "package.json")).resolve("typescript/bin/tsc");
  const result = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: ["ignore", 2, 2] });
  if (result.status !== 0) process.exit(result.status ?? 1);
  say("copying the console's assets…");
  for (const folder of RUNTIME_FOLDERS) copyAssets(folder);
  fs.writeFileSync(stamp, `${new Date().toISOString()}\n`);
  say(`built in ${Math.round((Date.now() - started) / 1000)} s.`);
}

if (!process.argv.includes("--if-stale")) {
  build();
} else {
  const built = fs.statSync(stamp, { throwIfNoEntry: false })?.mtimeMs;
  const stale = built === undefined || SOURCES.some((source) => newestChange(path.join(root, source)) > built);
  const missing = missingBuildTools();
  if (stale && missing.length === 0) {
    console.error(built === undefined ? "Building Atelier into dist/ (first start)…" : "Sources changed since the last build: rebuilding dist/…");
    build();
  } else if (built === undefined) {
    console.error(`dist/ is missing and the build tools (${missing.join(", ")}) are not installed: run \`npm ci && npm run build\` first.`);
    process.exit(1);
  } else if (stale) {
    console.error(`Note: sources look newer than dist/, but the build tools are not installed; running dist/ as built.`);
  }
}
