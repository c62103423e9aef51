/**
 * Making and removing a temporary folder, without the test runner: what services started for tests
 * (test-service.ts) and benchmarks use. Tests take their folders from temp-dir.ts, which removes them.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** A fresh `atelier-<name>-*` folder under the system's temporary folder; whoever asks removes it. */
export function makeTempDir(name: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `atelier-${name}-`));
}

export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
