/**
 * The npm package as it would be published: compiled with its own tsconfig, its export map pointing
 * at real files, the built ESM importable, and the `atelier` command run as a user runs it, against
 * a real Atelier (key and server from ATELIER_API_KEY and ATELIER_BASE_URL).
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freeLoopbackPort } from "../support/free-port.js";
import { fileTempDir } from "../support/temp-dir.js";
import { gradientPng } from "../support/test-images.js";
import type { TestService } from "../support/test-service.js";
import { clientModelsAvailable, startClientTestService } from "./client-service.js";
import { startFaultProxy } from "./fault-proxy.js";

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const clientDir = path.join(repoRoot, "clients", "typescript");

let service: TestService;
let tmp: string;
let pkg: string;
let env: NodeJS.ProcessEnv;

async function atelier(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [path.join(pkg, "dist", "cli", "main.js"), ...args], { cwd: tmp, env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe.runIf(clientModelsAvailable())("the published package and its atelier command", () => {
  const modelsDir = fileTempDir("test-models");
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-cli-"));
    pkg = path.join(tmp, "package");
    fs.mkdirSync(pkg);
    fs.copyFileSync(path.join(clientDir, "package.json"), path.join(pkg, "package.json"));
    await execFileAsync(process.execPath, [path.join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", path.join(clientDir, "tsconfig.json"), "--outDir", path.join(pkg, "dist")], {
      cwd: repoRoot,
      timeout: 120_000,
    });
    service = await startClientTestService(modelsDir);
    env = { ...process.env, ATELIER_API_KEY: await service.createKey("cli"), ATELIER_BASE_URL: service.url, CI: "true" };
    fs.writeFileSync(path.join(tmp, "photo.png"), await gradientPng(24, 16));
  }, 180_000);
  afterAll(async () => {
    await service?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("builds ESM with declarations at every path its export map and bin name", async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")) as {
      exports: Record<string, Record<string, string> | string>;
      bin: Record<string, string>;
      dependencies?: object;
    };
    expect(manifest.dependencies ?? {}).toEqual({});
    const targets = [...Object.values(manifest.exports).flatMap((entry) => (typeof entry === "string" ? [entry] : Object.values(entry))), ...Object.values(manifest.bin)];
    for (const target of targets) expect(fs.existsSync(path.join(pkg, target)), target).toBe(true);
    const core = (await import(pathToFileURL(path.join(pkg, "dist", "index.js")).href)) as typeof import("../../clients/typescript/src/index.js");
    expect(typeof core.Atelier).toBe("function");
    expect(new core.RateLimitError("x")).toBeInstanceOf(core.AtelierError);
    expect(fs.readFileSync(path.join(pkg, "dist", "cli", "main.js"), "utf8").startsWith("#!/usr/bin/env node")).toBe(true);
  });

  it("atelier upscale photo.png --scale 4 -o big.png writes the enlarged image", async () => {
    const result = await atelier("upscale", "photo.png", "--scale", "4", "-o", "big.png");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe("big.png");
    expect(result.stderr).toMatch(/96x64 image\/png/);
    const metadata = await sharp(path.join(tmp, "big.png")).metadata();
    expect([metadata.format, metadata.width, metadata.height]).toEqual(["png", 96, 64]);
  });

  it("names the output after the input when -o is absent", async () => {
    const result = await atelier("upscale", "photo.png", "--format", "jpeg");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe("photo-upscaled-x2.jpg");
    expect((await sharp(path.join(tmp, "photo-upscaled-x2.jpg")).metadata()).format).toBe("jpeg");
  });

  it("generate, style and remove-background write their images", async () => {
    const generated = await atelier("generate", "an owl", "--seed", "5", "-o", "owl.png");
    expect(generated.code, generated.stderr).toBe(0);
    expect((await sharp(path.join(tmp, "owl.png")).metadata()).width).toBe(256);
    const styled = await atelier("style", "photo.png", "--style", "candy-lite", "-o", "candy.png");
    expect(styled.code, styled.stderr).toBe(0);
    expect((await sharp(path.join(tmp, "candy.png")).metadata()).width).toBe(24);
    const cutout = await atelier("remove-background", "photo.png", "--replacement", "white", "--model", "portrait-selfie", "-o", "cutout.png");
    expect(cutout.code, cutout.stderr).toBe(0);
    expect(fs.existsSync(path.join(tmp, "cutout.png"))).toBe(true);
  });

  it("uploads image files as multipart forms: the input, and a background given as --replacement @file", async () => {
    fs.writeFileSync(path.join(tmp, "backdrop.png"), await gradientPng(8, 8));
    // The proxy in front of the service records what arrived.
    const proxy = await startFaultProxy(service.url);
    try {
      const upscaled = await atelier("upscale", "photo.png", "-o", "form.png", "--base-url", proxy.url);
      expect(upscaled.code, upscaled.stderr).toBe(0);
      const replaced = await atelier("remove-background", "photo.png", "--replacement", "@backdrop.png", "--model", "portrait-selfie", "-o", "replaced.png", "--json", "--base-url", proxy.url);
      expect(replaced.code, replaced.stderr).toBe(0);
      expect(JSON.parse(replaced.stdout)).toMatchObject({ replacement: "image", data: [{ width: 24, height: 16 }] });
      const posts = proxy.seen.filter((request) => request.method === "POST");
      expect(posts.map((request) => [request.url, request.headers["content-type"]?.split(";")[0]])).toEqual([
        ["/api/v1/tools/upscale", "multipart/form-data"],
        ["/api/v1/tools/background-remove", "multipart/form-data"],
      ]);
    } finally {
      await proxy.close();
    }
  });

  it("improve prints the improved prompt, --json the whole response; models lists the catalog", async () => {
    const plain = await atelier("improve", "a", "cat", "on", "a", "roof", "--variants", "2");
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout.trim().split("\n")).toHaveLength(2);
    const json = await atelier("improve", "a cat", "--json");
    expect(JSON.parse(json.stdout)).toMatchObject({ original: "a cat", model: "prompt-builtin" });
    const models = await atelier("models", "--task", "upscale");
    expect(models.code).toBe(0);
    expect(models.stdout).toMatch(/^lanczos\s+upscale\s+installed/m);
    expect(models.stdout).not.toMatch(/style-transfer/);
  });

  it("reports API errors with code, status, request id and the bad fields, exiting 1", async () => {
    const invalid = await atelier("upscale", "photo.png", "--scale", "9");
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^error: .+ \[INVALID_INPUT, HTTP 400, request req_\w+\]\n {2}scale: /m);
    // The model list needs no key, so even a wrong one reads it.
    const unauthorised = await atelier("models", "--api-key", "x");
    expect(unauthorised.code).toBe(0);
    const wrongKey = await atelier("improve", "a cat", "--api-key", "atl_wrong");
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/UNAUTHORIZED, HTTP 401/);
    const closedPort = await freeLoopbackPort();
    const unreachable = await atelier("models", "--base-url", `http://127.0.0.1:${closedPort}`, "--max-retries", "0");
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(`error: Could not reach http://127.0.0.1:${closedPort}: fetch failed (ECONNREFUSED). [CONNECTION_ERROR]`);
  });

  it("reports usage mistakes and missing files plainly", async () => {
    const missingArgument = await atelier("upscale");
    expect(missingArgument.code).toBe(2);
    expect(missingArgument.stderr).toMatch(/usage: Expected one image/);
    const unknown = await atelier("paint");
    expect(unknown.code).toBe(2);
    const badNumber = await atelier("upscale", "photo.png", "--scale", "four");
    expect(badNumber.code).toBe(2);
    expect(badNumber.stderr).toMatch(/--scale expects a number/);
    const missingFile = await atelier("upscale", "nope.png");
    expect(missingFile.code).toBe(1);
    expect(missingFile.stderr).toMatch(/ENOENT.*nope\.png/);
    const help = await atelier("--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: atelier <command>/);
  });
});
