/**
 * The layer rules of .dependency-cruiser.cjs hold for the source tree: no module imports from a layer
 * above its own, the router and the workers never import each other, and no modules import each other
 * in a circle. A second case cruises a small tree made to break each rule, so a rule that stopped
 * matching anything would fail here rather than pass quietly.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cruise, type ICruiseOptions, type IViolation } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { afterAll, describe, expect, it } from "vitest";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const configFile = path.join(repoRoot, ".dependency-cruiser.cjs");
const { layers } = createRequire(import.meta.url)(configFile) as { layers: { name: string; paths: string[] }[] };

/** The folders the layers name (gen/ is generated and imports nothing of ours). */
const SOURCE_FOLDERS = [...new Set(layers.flatMap((layer) => layer.paths.map((pattern) => /^\^([a-z-]+)\//.exec(pattern)?.[1])))].filter(
  (folder): folder is string => folder !== undefined && folder !== "gen" && fs.existsSync(path.join(repoRoot, folder)),
);

function describeViolation(violation: IViolation): string {
  const circle = violation.cycle?.length ? `: ${[violation.from, ...violation.cycle.map((step) => step.name)].join(" → ")}` : "";
  return `${violation.rule.name}: ${violation.from} → ${violation.to}${circle}`;
}

async function violationsIn(baseDir: string, folders: string[]): Promise<{ violations: string[]; modules: string[] }> {
  const configured = await extractDepcruiseOptions(configFile);
  const options: ICruiseOptions = { ...configured, baseDir, tsConfig: { fileName: path.join(repoRoot, "tsconfig.json") } };
  const tsConfig = extractTSConfig(path.join(repoRoot, "tsconfig.json"));
  const cwd = process.cwd();
  // The rules' paths are relative to the folder cruised from.
  process.chdir(baseDir);
  try {
    const { output } = await cruise(folders, options, {}, { tsConfig });
    if (typeof output === "string") throw new Error(output);
    return { violations: output.summary.violations.map(describeViolation), modules: output.modules.map((module) => module.source) };
  } finally {
    process.chdir(cwd);
  }
}

describe("layer rules (.dependency-cruiser.cjs)", () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-layers-"));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it("hold for the source tree", { timeout: 180_000 }, async () => {
    const { violations, modules } = await violationsIn(repoRoot, SOURCE_FOLDERS);
    // Every layer's folders were read: the empty list below is not for want of modules.
    for (const folder of SOURCE_FOLDERS) expect(modules.some((module) => module.startsWith(`${folder}/`)), folder).toBe(true);
    expect(violations).toEqual([]);
  });

  it("catch an import from a higher layer, between the router and the workers, and a circle", { timeout: 60_000 }, async () => {
    const files: Record<string, string> = {
      "core/low.ts": 'import { high } from "../bin/high";\nexport const low = high;\n',
      "bin/high.ts": "export const high = 1;\n",
      "workers/worker.ts": 'import { route } from "../server/route";\nexport const worker = route;\n',
      "server/route.ts": "export const route = 2;\n",
      "models/first.ts": 'import { second } from "./second";\nexport const first = () => second;\n',
      "models/second.ts": 'import { first } from "./first";\nexport const second = () => first;\n',
    };
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(scratch, name)), { recursive: true });
      fs.writeFileSync(path.join(scratch, name), text);
    }
    const { violations } = await violationsIn(scratch, ["core", "bin", "workers", "server", "models"]);
    expect(violations).toEqual(
      expect.arrayContaining([
        "core-imports-no-higher-layer: core/low.ts → bin/high.ts",
        "workers-import-no-router-code: workers/worker.ts → server/route.ts",
        expect.stringMatching(/^no-circular: models\/(first|second)\.ts → models\/(second|first)\.ts/),
      ]),
    );
  });
});
