/**
 * Runs one of the training project's Python smoke modules (`python3 -m <module> --out <folder>` in
 * training/, Debian's python3) and reads what it wrote to `<folder>/result.json`: the pattern of the
 * training smoke tests.
 */
import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const PYTHON = "/usr/bin/python3";
const trainingDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "training");

/** Whether PYTHON imports every one of `modules` ("torch", "PIL" ...). */
export function pythonImports(modules: readonly string[]): boolean {
  return spawnSync(PYTHON, ["-c", `import ${modules.join(", ")}`], { encoding: "utf8", timeout: 60_000 }).status === 0;
}

export interface SmokeRun<Result> {
  /** The folder the module wrote to. */
  dir: string;
  /** Its result.json, parsed. */
  result: Result;
  remove(): void;
}

export interface SmokeOptions {
  /** OpenMP threads for PyTorch: the machine's cores are shared with the other test files. */
  threads: number;
  timeoutMs: number;
}

/** Runs `module` with `--out` a fresh temporary folder; the folder is removed if the run fails. */
export async function runSmokeModule<Result>(module: string, options: SmokeOptions): Promise<SmokeRun<Result>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `atelier-${module.split(".").slice(1).join("-")}-`));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    await promisify(execFile)(PYTHON, ["-m", module, "--out", dir], {
      cwd: trainingDir,
      timeout: options.timeoutMs,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, PYTHONWARNINGS: "ignore", OMP_NUM_THREADS: String(options.threads) },
    });
    return { dir, result: JSON.parse(fs.readFileSync(path.join(dir, "result.json"), "utf8")) as Result, remove };
  } catch (error) {
    remove();
    throw error;
  }
}
