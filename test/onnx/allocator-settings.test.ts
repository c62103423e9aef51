/**
 * The glibc malloc settings are read once at process start, so they are written where processes
 * start (npm's start scripts, the container image) as well as in allocator-settings.ts, which says
 * why and is what the benches apply: the three must agree.
 */
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { ALLOCATOR_ENV } from "../../workers/onnx/allocator-settings.js";

const settings = (text: string) => Object.fromEntries([...text.matchAll(/\b(MALLOC_[A-Z_]+|GLIBC_TUNABLES)=([^\s"\\]+)/g)].map((match) => [match[1], match[2]]));

describe("malloc settings", () => {
  it("npm's start scripts set exactly the settings allocator-settings.ts names", () => {
    const scripts = JSON.parse(fs.readFileSync("package.json", "utf8")).scripts as Record<string, string>;
    for (const name of ["start", "start:workers"]) expect(settings(scripts[name]!), name).toEqual(ALLOCATOR_ENV);
  });

  it("the container image sets them too", () => {
    expect(settings(fs.readFileSync("Dockerfile", "utf8"))).toEqual(ALLOCATOR_ENV);
  });
});
