/**
 * Every `curl` command of README.md and of the pages in docs/, run exactly as printed by the real curl (through bash) against a
 * real server with the models the README says to pull, with the two variables the README has the
 * reader export: ATELIER_API_KEY (a real key) and ATELIER_BASE_URL (the test server's address). No
 * example may write the address itself, or it would break as soon as PORT changes.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel } from "../support/test-assets.js";
import { startTestService, type TestService } from "../support/test-service.js";

const modelsFolder = fileTempDir("test-models");

const ROOT = path.join(import.meta.dirname, "../..");
/** README.md, then every page of docs/: a reader runs an example from any of them. */
const PAGES = ["README.md", ...fs.readdirSync(path.join(ROOT, "docs")).filter((name) => name.endsWith(".md")).sort().map((name) => `docs/${name}`)];
const available = ["cvae-quickdraw", "style-fast-ml5", "portrait-seg-mediapipe-selfie"].every((folder) => hasMirrorModel(folder));

/** A page's shell blocks that call the API, continuation lines joined. */
function curlBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)]
    .map((match) => match[1]!.replace(/\\\n\s*/g, " "))
    .filter((block) => /(^|\$\()curl /m.test(block));
}

/** Every `curl` invocation in a block, including those inside `$(...)`. */
function curlCommands(block: string): string[] {
  return [...block.matchAll(/(?:^|\$\()\s*(curl [^\n]*)/gm)].map((match) => match[1]!);
}

/** The image files a block uploads (`-F image=@photo.jpg`): a reader has their own at hand. */
function uploadedFiles(block: string): string[] {
  return [...block.matchAll(/(?:-F|--form)\s+["']?[\w.-]+=@([\w.-]+)/g)].map((match) => match[1]!);
}

let service: TestService;
let key: string;

beforeAll(async () => {
  if (!available) return;
  service = await startTestService({ ATELIER_MODELS_DIR: await installModels(modelsFolder, ["cvae-quickdraw", "mathura", "portrait-selfie"]) });
  key = await service.createKey("readme");
}, 300_000);
afterAll(async () => {
  await service?.close();
});

describe.runIf(available)("README and docs curl examples", () => {
  const pageBlocks = PAGES.flatMap((page) => curlBlocks(fs.readFileSync(path.join(ROOT, page), "utf8")).map((block) => ({ page, block })));
  const blocks = pageBlocks.map(({ block }) => block);

  it("finds examples in the README and in docs/", () => {
    expect(pageBlocks.some(({ page }) => page === "README.md")).toBe(true);
    expect(pageBlocks.some(({ page }) => page.startsWith("docs/"))).toBe(true);
  });

  it("finds the examples, each aimed at $ATELIER_BASE_URL with no address of its own", () => {
    const commands = blocks.flatMap(curlCommands);
    expect(commands.length).toBeGreaterThanOrEqual(7);
    for (const command of commands) {
      expect(command).toMatch(/"\$ATELIER_BASE_URL\//);
      // Single-quoted parts are request bodies, whose URLs (an image to fetch) are data, not the address.
      expect(command.replace(/'[^']*'/g, "''")).not.toMatch(/:\/\/|127\.0\.0\.1|localhost/);
    }
  });

  // A block runs as a reader would paste it: in order, in one shell (a later line may use what an
  // earlier one set, such as $JOB), in a scratch folder holding the images it uploads (a small
  // picture under each name) and the files it writes. `curl` is wrapped with --fail-with-body so any
  // error status fails the block; the commands themselves are untouched.
  it.each(pageBlocks.map(({ page, block }) => [page, curlCommands(block)[0]!.slice(0, 80), block]))("%s: runs the block starting %s… and every call succeeds", async (_page, _label, block) => {
    const script = `set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; }\n${block}`;
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-readme-"));
    const uploads = uploadedFiles(block);
    try {
      for (const file of uploads) await sharp({ create: { width: 16, height: 16, channels: 3, background: "#dc5a28" } }).toFile(path.join(cwd, file));
      const { stdout } = await promisify(execFile)("bash", ["-c", script], {
        cwd,
        env: { ...process.env, ATELIER_API_KEY: key, ATELIER_BASE_URL: service.url },
        maxBuffer: 64 * 1024 * 1024,
        timeout: 120_000,
      }).catch((error: Error & { stdout?: string }) => {
        // `curl -s` keeps the error body on stdout, which the failure would not show otherwise.
        throw new Error(`${error.message}\nstdout: ${error.stdout?.slice(0, 2000) ?? ""}`);
      });
      // Something came back: printed, or saved by `-o` into the scratch folder.
      const saved = fs.readdirSync(cwd).filter((file) => !uploads.includes(file)).map((file) => fs.statSync(path.join(cwd, file)).size);
      expect(stdout.length + saved.reduce((sum, size) => sum + size, 0)).toBeGreaterThan(0);
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  }, 180_000);
});
