/**
 * No source file depends on tRPC's private parts: a router's `_def` (its internal definition,
 * which changes between minor releases) or the modules tRPC names unstable or do-not-import. The
 * list of operations lives in contract/operations.ts; whatever needs an operation reads it there.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
/** Folders that are not the project's own source: installed packages, generated code, build output, data. */
const SKIPPED = new Set(["node_modules", "gen", "dist", "data", ".git", "generated"]);
const SOURCE = /\.(?:[cm]?[jt]s|tsx)$/;

// Written in pieces so this file does not match itself.
const PRIVATE_DEFINITION = new RegExp(["\\.", "_def", "\\b"].join(""));
const PRIVATE_MODULE = /from\s+["']@trpc\/[^"']*(?:unstable|do-not-import)[^"']*["']|import\(\s*["']@trpc\/[^"']*(?:unstable|do-not-import)/;

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name)) return [];
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.isFile() && SOURCE.test(entry.name) ? [path] : [];
  });
}

describe("tRPC internals", () => {
  const files = sourceFiles(ROOT);

  it("finds the project's sources", () => {
    expect(files.map((file) => relative(ROOT, file))).toEqual(expect.arrayContaining(["server/router.ts", "contract/operations.ts", "facade/rest-routes.ts"]));
  });

  it("no source reads a router's private definition", () => {
    const readers = files.filter((file) => PRIVATE_DEFINITION.test(readFileSync(file, "utf8"))).map((file) => relative(ROOT, file));
    expect(readers).toEqual([]);
  });

  it("no source imports a tRPC module named unstable or do-not-import", () => {
    const importers = files.filter((file) => PRIVATE_MODULE.test(readFileSync(file, "utf8"))).map((file) => relative(ROOT, file));
    expect(importers).toEqual([]);
  });
});
