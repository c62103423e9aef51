/**
 * Installing from the mirror folder and from a mirror served over loopback HTTP: checksums,
 * refusal of corrupted files, atomicity, idempotence, verification and removal.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MODEL_CATALOG } from "../../models/catalog/model-catalog.js";
import { ModelInstallError } from "../../models/store/fetch-weight-file.js";
import { cleanStaging, pullModel, removeModel, verifyModel } from "../../models/store/model-installer.js";
import { ModelStore, STAGING_FOLDER } from "../../models/store/model-store.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel, modelMirror } from "../support/test-assets.js";
import { entry, noConverters } from "./installer-fixtures.js";

// Each store, mirror copy or served folder is a folder of its own inside this one (some are made in hooks).
const scratch = fileTempDir("models");

function tempDir(): string {
  return fs.mkdtempSync(path.join(scratch, "folder-"));
}

/** A copy of part of the mirror with one byte of one file flipped. */
function corruptedMirror(folder: string, file: string): string {
  const root = tempDir();
  fs.cpSync(path.join(modelMirror, folder), path.join(root, folder), { recursive: true });
  const target = path.join(root, folder, file);
  const bytes = fs.readFileSync(target);
  const middle = Math.floor(bytes.length / 2);
  bytes[middle] = bytes[middle]! ^ 0xff;
  fs.writeFileSync(target, bytes);
  return root;
}

function serve(root: string): Promise<{ url: string; close: () => Promise<void>; requests: string[] }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const relative = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    requests.push(relative);
    const file = path.join(root, relative);
    if (!file.startsWith(root) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-length": fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        requests,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    ),
  );
}

describe("a fresh models folder", () => {
  it("reports built-in and npm-shipped models installed, pulled ones missing with their install command", () => {
    const store = new ModelStore(tempDir());
    expect(store.isInstalled(entry("lanczos"))).toBe(true);
    for (const id of ["esrgan-slim", "esrgan-medium", "esrgan-thick"]) expect(store.isInstalled(entry(id))).toBe(true);
    const selfie = entry("portrait-selfie");
    expect(store.status(selfie)).toEqual({ installed: false, reason: "not pulled" });
    expect(store.installCommand(selfie)).toBe("npm run models -- pull portrait-selfie");
    for (const model of MODEL_CATALOG) {
      if (model.source.kind === "files") expect(store.isInstalled(model)).toBe(false);
    }
  });

  it("verifies npm-shipped weights against their pinned checksums", async () => {
    const store = new ModelStore(tempDir());
    expect(await verifyModel(entry("esrgan-slim"), store)).toEqual({ ok: true, problems: [] });
    expect(await pullModel(entry("esrgan-slim"), store, { converters: noConverters })).toBe("already-installed");
  });
});

describe.skipIf(!hasMirrorModel("portrait-seg-mediapipe-selfie"))("pulling from the mirror folder", () => {
  let store: ModelStore;
  beforeEach(() => {
    store = new ModelStore(tempDir());
  });

  it("installs, verifies and is idempotent", async () => {
    const selfie = entry("portrait-selfie");
    expect(await pullModel(selfie, store, { from: modelMirror, converters: noConverters })).toBe("installed");
    expect(store.isInstalled(selfie)).toBe(true);
    expect(await verifyModel(selfie, store)).toEqual({ ok: true, problems: [] });
    const record = store.readInstallRecord("portrait-selfie");
    expect(record?.files["selfie_segmentation.onnx"]).toBe(selfie.source.kind === "files" ? selfie.source.files[0]!.sha256 : "");
    const installedFile = path.join(store.modelFolder("portrait-selfie"), "selfie_segmentation.onnx");
    const before = fs.statSync(installedFile).mtimeMs;
    expect(await pullModel(selfie, store, { from: modelMirror, converters: noConverters })).toBe("already-installed");
    expect(fs.statSync(installedFile).mtimeMs).toBe(before);
    expect(fs.readdirSync(path.join(store.modelsDir, STAGING_FOLDER))).toEqual([]);
  });

  it("refuses a corrupted file, leaving nothing installed and no staging leftovers", async () => {
    const bad = corruptedMirror("portrait-seg-mediapipe-selfie", "selfie_segmentation.onnx");
    const failure = pullModel(entry("portrait-selfie"), store, { from: bad, converters: noConverters });
    await expect(failure).rejects.toThrow(ModelInstallError);
    await expect(failure).rejects.toThrow(/checksum mismatch for selfie_segmentation\.onnx.*expected sha256 1511ab55/);
    expect(store.isInstalled(entry("portrait-selfie"))).toBe(false);
    expect(fs.existsSync(store.modelFolder("portrait-selfie"))).toBe(false);
    expect(fs.readdirSync(path.join(store.modelsDir, STAGING_FOLDER))).toEqual([]);
  });

  it("keeps a working install when a forced re-install fails", async () => {
    const selfie = entry("portrait-selfie");
    await pullModel(selfie, store, { from: modelMirror, converters: noConverters });
    const bad = corruptedMirror("portrait-seg-mediapipe-selfie", "selfie_segmentation.onnx");
    await expect(pullModel(selfie, store, { from: bad, converters: noConverters, force: true })).rejects.toThrow(/checksum mismatch/);
    expect((await verifyModel(selfie, store)).ok).toBe(true);
  });

  it("detects tampering after install", async () => {
    const selfie = entry("portrait-selfie");
    await pullModel(selfie, store, { from: modelMirror, converters: noConverters });
    const file = path.join(store.modelFolder("portrait-selfie"), "selfie_segmentation.onnx");
    const bytes = fs.readFileSync(file);
    bytes[100] = bytes[100]! ^ 1;
    fs.writeFileSync(file, bytes);
    const result = await verifyModel(selfie, store);
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toMatch(/selfie_segmentation\.onnx: sha256 [0-9a-f]{64}, expected 1511ab55/);
    fs.writeFileSync(file, bytes.subarray(0, 10));
    expect(store.status(selfie)).toMatchObject({ installed: false });
  });

  it("never counts an interrupted install, and cleans its leftovers", async () => {
    const staging = path.join(store.modelsDir, STAGING_FOLDER, "999999-portrait-selfie-new-0000");
    fs.mkdirSync(staging, { recursive: true });
    fs.writeFileSync(path.join(staging, "selfie_segmentation.onnx"), "partial");
    expect(store.isInstalled(entry("portrait-selfie"))).toBe(false);
    const ours = path.join(store.modelsDir, STAGING_FOLDER, `${process.pid}-other-new-0000`);
    fs.mkdirSync(ours);
    expect(cleanStaging(store)).toBe(1);
    expect(fs.existsSync(staging)).toBe(false);
    expect(fs.existsSync(ours)).toBe(true);
  });

  it("stops at once when aborted, leaving nothing behind", async () => {
    const controller = new AbortController();
    controller.abort(new ModelInstallError("interrupted"));
    await expect(pullModel(entry("portrait-selfie"), store, { from: modelMirror, converters: noConverters, signal: controller.signal })).rejects.toThrow(/interrupted/);
    expect(fs.existsSync(store.modelFolder("portrait-selfie"))).toBe(false);
  });

  it("removes a pulled model, and refuses to remove npm-shipped ones", async () => {
    const selfie = entry("portrait-selfie");
    await pullModel(selfie, store, { from: modelMirror, converters: noConverters });
    expect(removeModel(selfie, store)).toBe(true);
    expect(store.isInstalled(selfie)).toBe(false);
    expect(removeModel(selfie, store)).toBe(false);
    expect(() => removeModel(entry("esrgan-thick"), store)).toThrow(/npm uninstall @upscalerjs\/esrgan-thick/);
  });
});

describe.skipIf(!hasMirrorModel("superres-lsdir-compact-x4"))("pulling over HTTP", () => {
  let good: Awaited<ReturnType<typeof serve>>;
  let bad: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    good = await serve(modelMirror);
    bad = await serve(corruptedMirror("superres-lsdir-compact-x4", "4xLSDIRCompactC3_fp32.onnx"));
  });
  afterAll(async () => {
    await good.close();
    await bad.close();
  });

  it("downloads from a mirror URL with checksum verification and progress", async () => {
    const store = new ModelStore(tempDir());
    const progress: number[] = [];
    const result = await pullModel(entry("lsdir-compact-x4"), store, {
      from: good.url,
      converters: noConverters,
      onProgress: ({ receivedBytes }) => progress.push(receivedBytes),
    });
    expect(result).toBe("installed");
    expect(good.requests).toContain("/superres-lsdir-compact-x4/4xLSDIRCompactC3_fp32.onnx");
    expect(progress.at(-1)).toBe(2_490_769);
    expect(progress.length).toBeGreaterThan(1);
    expect(store.readInstallRecord("lsdir-compact-x4")?.from).toBe(good.url);
    expect((await verifyModel(entry("lsdir-compact-x4"), store)).ok).toBe(true);
  });

  it("refuses a corrupted download", async () => {
    const store = new ModelStore(tempDir());
    await expect(pullModel(entry("lsdir-compact-x4"), store, { from: bad.url, converters: noConverters })).rejects.toThrow(/checksum mismatch for 4xLSDIRCompactC3_fp32\.onnx/);
    expect(store.isInstalled(entry("lsdir-compact-x4"))).toBe(false);
  });

  it("reports a missing file on the mirror", async () => {
    const store = new ModelStore(tempDir());
    const empty = await serve(tempDir());
    try {
      await expect(pullModel(entry("lsdir-compact-x4"), store, { from: empty.url, converters: noConverters })).rejects.toThrow(/answered HTTP 404/);
    } finally {
      await empty.close();
    }
  });
});
