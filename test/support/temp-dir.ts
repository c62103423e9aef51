/**
 * Temporary folders for tests, each removed when what it belongs to ends: the test file, one test,
 * or whatever made it and closes it (a service, a database server).
 *
 * Removal follows vitest's lifecycle, never process exit: several test files may run one after
 * another in one process, and each must leave nothing behind whether its tests passed or failed.
 * Vitest runs `afterAll` hooks in reverse order of registration, so a folder asked for before the
 * hooks that close what uses it (a service, a SQLite database) is removed after they ran.
 */
import { afterAll, onTestFinished } from "vitest";
import { makeTempDir, removeTempDir } from "./make-temp-dir.js";

export { makeTempDir, removeTempDir };

/**
 * A folder removed after the current suite's tests: call it while vitest collects the file (at the
 * top level, or in a `describe` body for that block), not inside a hook or a test, where vitest
 * would drop the `afterAll` it registers.
 */
export function fileTempDir(name: string): string {
  const dir = makeTempDir(name);
  afterAll(() => removeTempDir(dir));
  return dir;
}

/** A folder removed when the current test ends: call it inside a test. */
export function testTempDir(name: string): string {
  let dir: string | undefined;
  // Registered first: outside a test it throws before any folder exists.
  onTestFinished(() => {
    if (dir !== undefined) removeTempDir(dir);
  });
  dir = makeTempDir(name);
  return dir;
}
