/**
 * Making and removing a temporary folder, without the test runner: what services started for tests
 * (test-service.ts, console-service.ts) and benchmarks use. Tests take their folders from temp-dir.ts, which removes them.
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

/**
 * What `start` starts over a fresh `atelier-<name>-*` folder of its own: the folder is removed at once
 * if starting fails, else by `close()` once what started has closed.
 */
export async function startOverOwnDir<T extends { close(graceEndsAtMs?: number): Promise<void> }>(name: string, start: (dir: string) => Promise<T>): Promise<T> {
  const dir = makeTempDir(name);
  let started: T;
  try {
    started = await start(dir);
  } catch (error) {
    removeTempDir(dir);
    throw error;
  }
  return {
    ...started,
    close: async (graceEndsAtMs?: number) => {
      try {
        await started.close(graceEndsAtMs);
      } finally {
        removeTempDir(dir);
      }
    },
  };
}
