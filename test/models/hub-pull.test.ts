/**
 * Pulling Stable Diffusion exports from a model hub (a loopback hub that answers like Hugging
 * Face's), and importing an export an operator made: every file verified against the checksum the
 * hub publishes, one commit for the whole pull, tampering refused, tokens kept on the hub, pins
 * honoured, and the installed model generating through the real service.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";
import { ModelInstallError } from "../../models/store/fetch-weight-file.js";
import { HubClient } from "../../models/store/hub-files.js";
import { importModel, pullModel, verifyModel } from "../../models/store/model-installer.js";
import { INSTALL_RECORD, ModelStore, STAGING_FOLDER } from "../../models/store/model-store.js";
import { writeTinyDiffusion } from "../../scripts/make-tiny-diffusion.js";
import { readFolder, startFakeModelHub, type FakeModelHub } from "../support/fake-model-hub.js";
import { hasMirrorModel, modelMirror } from "../support/test-assets.js";
import { entry, noConverters } from "./installer-fixtures.js";
import { startTestService } from "../support/test-service.js";

const run = promisify(execFile);
const tempDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), `atelier-${prefix}-`));

/** A tiny random export of `variant` with the real tensor signatures, as name → bytes. */
function tinyExport(variant: "lcm" | "sd21", seed: number, externalData = false): Record<string, Buffer> {
  const dir = tempDir("export");
  writeTinyDiffusion(dir, { variant, seed, externalData });
  const files = readFolder(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  return files;
}

describe.skipIf(!hasMirrorModel("clip-bpe-vocab"))("pulling from a model hub", () => {
  const lcm = entry("lcm-dreamshaper-v7");
  const repository = "SimianLuo/LCM_Dreamshaper_v7";
  const branch = "onnx";
  let hub: FakeModelHub;
  let exportA: Record<string, Buffer>;
  let exportB: Record<string, Buffer>;
  let commitA: string;
  let store: ModelStore;

  beforeAll(async () => {
    exportA = tinyExport("lcm", 1, true);
    exportB = tinyExport("lcm", 2, true);
  });

  // A fresh hub and models folder per test (freshHub): each test moves branches or tampers differently.
  afterEach(async () => {
    await hub.close();
    fs.rmSync(store.modelsDir, { recursive: true, force: true });
  });

  async function freshHub(): Promise<HubClient> {
    hub = await startFakeModelHub();
    commitA = hub.commit(repository, exportA, branch);
    store = new ModelStore(tempDir("hub-models"));
    return new HubClient({ baseUrl: hub.url });
  }

  const pull = (client: HubClient, model = lcm) => pullModel(model, store, { from: modelMirror, converters: noConverters, hub: client });

  it("installs every file of the export at the commit the branch points at, each verified against the hub's checksum", async () => {
    const client = await freshHub();
    expect(await pull(client)).toBe("installed");
    expect(store.isInstalled(lcm)).toBe(true);
    for (const [name, bytes] of Object.entries(exportA)) {
      if (name === "model_index.json") continue;
      expect(fs.readFileSync(path.join(store.modelFolder("lcm-dreamshaper-v7"), name)).equals(bytes), name).toBe(true);
    }
    const record = store.readInstallRecord("lcm-dreamshaper-v7")!;
    expect(record.hub).toMatchObject({ url: hub.url, repository, commit: commitA });
    expect(record.hub!.attested["unet/model.onnx"]).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(record.hub!.attested["scheduler/scheduler_config.json"]).toMatch(/^git-blob:[0-9a-f]{40}$/);
    expect(record.from).toBe(`${hub.url}/${repository}@${commitA}`);
    // Large files came from the storage origin, small ones from the hub at the resolved commit.
    expect(hub.storageRequests.filter((request) => request.method === "GET")).toHaveLength(4);
    expect(hub.hubRequests.filter((request) => request.method === "GET").every((request) => request.path.includes(`/resolve/${commitA}/`))).toBe(true);
    expect(await verifyModel(lcm, store)).toEqual({ ok: true, problems: [] });
    expect(await pull(client)).toBe("already-installed");
  });

  it("holds the whole pull to one commit when the branch moves halfway", async () => {
    const client = await freshHub();
    const commitB = hub.commit(repository, exportB, "next");
    let seen = 0;
    hub.onRequest = () => {
      if (++seen === 2) hub.moveBranch(repository, branch, commitB);
    };
    await pull(client);
    expect(store.readInstallRecord("lcm-dreamshaper-v7")!.hub!.commit).toBe(commitA);
    expect(fs.readFileSync(path.join(store.modelFolder("lcm-dreamshaper-v7"), "unet/model.onnx")).equals(exportA["unet/model.onnx"]!)).toBe(true);
    expect(hub.hubRequests.slice(1).every((request) => request.path.includes(`/resolve/${commitA}/`))).toBe(true);
  });

  it("refuses bytes that do not match the published checksum and leaves nothing installed", async () => {
    const client = await freshHub();
    const unet = exportA["unet/model.onnx"]!;
    const altered = Buffer.from(unet);
    altered[altered.length >> 1]! ^= 0xff;
    hub.tamper(createHash("sha256").update(unet).digest("hex"), altered);
    const error = await pull(client).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelInstallError);
    expect((error as Error).message).toMatch(/checksum mismatch for unet\/model\.onnx .*expected sha256 [0-9a-f]{64}, got [0-9a-f]{64}/);
    expect(store.isInstalled(lcm)).toBe(false);
    expect(fs.existsSync(store.modelFolder("lcm-dreamshaper-v7"))).toBe(false);
    expect(fs.readdirSync(path.join(store.modelsDir, STAGING_FOLDER))).toEqual([]);
  });

  it("refuses a small file whose bytes are not the git blob the hub names", async () => {
    const client = await freshHub();
    const name = "tokenizer/special_tokens_map.json";
    const original = exportA[name]!;
    const altered = Buffer.from(original.toString("utf8").replace("endoftext", "endoftexy"));
    expect(altered.length).toBe(original.length);
    hub.tamperSmall(commitA, name, altered);
    await expect(pull(client)).rejects.toThrow(/checksum mismatch for tokenizer\/special_tokens_map\.json .*expected git blob [0-9a-f]{40}, got [0-9a-f]{40}/);
    expect(store.isInstalled(lcm)).toBe(false);
  });

  it("names a required file the repository lacks, and skips optional ones", async () => {
    const client = await freshHub();
    const { ["vae_decoder/model.onnx"]: _decoder, ["scheduler/scheduler_config.json"]: _scheduler, ...partial } = exportA;
    hub.commit(repository, partial, branch);
    await expect(pull(client)).rejects.toThrow(/SimianLuo\/LCM_Dreamshaper_v7 has no vae_decoder\/model\.onnx at [0-9a-f]{40}/);
    hub.commit(repository, { ...partial, "vae_decoder/model.onnx": exportA["vae_decoder/model.onnx"]! }, branch);
    await pull(client);
    expect(store.isInstalled(lcm)).toBe(true);
    expect(fs.existsSync(path.join(store.modelFolder("lcm-dreamshaper-v7"), "scheduler/scheduler_config.json"))).toBe(false);
  });

  it("explains a gated repository, and sends the token to the hub but never to the storage it redirects to", async () => {
    await freshHub();
    hub.gate(repository, "hf_secret");
    await expect(pull(new HubClient({ baseUrl: hub.url }))).rejects.toThrow(/HTTP 401, GatedRepo.*ATELIER_MODEL_HUB_TOKEN/);
    await pull(new HubClient({ baseUrl: hub.url, token: "hf_secret" }));
    expect(store.isInstalled(lcm)).toBe(true);
    expect(hub.hubRequests.at(-1)?.authorization).toBe("Bearer hf_secret");
    expect(hub.storageRequests.length).toBeGreaterThan(0);
    expect(hub.storageRequests.every((request) => request.authorization === undefined)).toBe(true);
  });

  it("follows a renamed repository's redirect on the hub", async () => {
    await freshHub();
    hub.commit("latent-consistency/lcm-dreamshaper-v7", exportB, branch);
    hub.rename(repository, "latent-consistency/lcm-dreamshaper-v7");
    await pull(new HubClient({ baseUrl: hub.url }));
    expect(fs.readFileSync(path.join(store.modelFolder("lcm-dreamshaper-v7"), "unet/model.onnx")).equals(exportB["unet/model.onnx"]!)).toBe(true);
  });

  it("takes the pinned commit and refuses a hub whose checksums differ from the pins", async () => {
    const client = await freshHub();
    hub.commit(repository, exportB, branch); // the branch moves on; the pin keeps commit A
    const pinsOf = (files: Record<string, Buffer>) =>
      Object.fromEntries(
        ["text_encoder/model.onnx", "unet/model.onnx", "unet/model.onnx_data", "vae_decoder/model.onnx"].map((name) => [
          name,
          { size: files[name]!.length, sha256: createHash("sha256").update(files[name]!).digest("hex") },
        ]),
      );
    const source = lcm.source as Extract<CatalogEntry["source"], { kind: "files" }>;
    const pinned = (revision: string, files: Record<string, Buffer>): CatalogEntry => ({
      ...lcm,
      source: { ...source, hub: { ...source.hub!, pinned: { revision, files: pinsOf(files) } } },
    });
    await pull(client, pinned(commitA, exportA));
    expect(fs.readFileSync(path.join(store.modelFolder("lcm-dreamshaper-v7"), "unet/model.onnx")).equals(exportA["unet/model.onnx"]!)).toBe(true);
    await expect(pullModel(pinned(commitA, exportB), store, { from: modelMirror, converters: noConverters, hub: client, force: true })).rejects.toThrow(
      /the hub publishes [0-9a-f]{64} \(\d+ bytes\), the catalog pinned/,
    );
  });

  it("pins a pulled export with scripts/pin-weights.ts --hub, and the pins then hold later pulls to that commit", async () => {
    const client = await freshHub();
    await pull(client);
    const pinsFile = path.join(store.modelsDir, "pins.json");
    fs.writeFileSync(pinsFile, "{}\n");
    const { stdout } = await run(process.execPath, ["--import", "tsx", "scripts/pin-weights.ts", "--hub", "lcm-dreamshaper-v7", "--out", pinsFile], {
      env: { ...process.env, ATELIER_MODELS_DIR: store.modelsDir },
    });
    expect(stdout).toMatch(new RegExp(`lcm-dreamshaper-v7: pinned \\d+ files at ${repository}@${commitA}`));
    const pins = JSON.parse(fs.readFileSync(pinsFile, "utf8")) as Record<string, { revision: string; files: Record<string, { size: number; sha256: string }> }>;
    expect(pins["lcm-dreamshaper-v7"]!.revision).toBe(commitA);
    expect(pins["lcm-dreamshaper-v7"]!.files["unet/model.onnx"]).toEqual({
      size: exportA["unet/model.onnx"]!.length,
      sha256: createHash("sha256").update(exportA["unet/model.onnx"]!).digest("hex"),
    });
    hub.commit(repository, exportB, branch);
    const source = lcm.source as Extract<CatalogEntry["source"], { kind: "files" }>;
    const pinnedLcm: CatalogEntry = { ...lcm, source: { ...source, hub: { ...source.hub!, pinned: pins["lcm-dreamshaper-v7"] } } };
    await pullModel(pinnedLcm, store, { from: modelMirror, converters: noConverters, hub: client, force: true });
    expect(store.readInstallRecord("lcm-dreamshaper-v7")!.hub!.commit).toBe(commitA);
  });

  it("finds a hub file corrupted after installation", async () => {
    const client = await freshHub();
    await pull(client);
    const file = path.join(store.modelFolder("lcm-dreamshaper-v7"), "tokenizer/vocab.json");
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("</w>", "<w/>"));
    const result = await verifyModel(lcm, store);
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual([expect.stringMatching(/^tokenizer\/vocab\.json: sha256 [0-9a-f]{64}, expected [0-9a-f]{64}$/)]);
  });

  it("pulls with `npm run models -- pull` from ATELIER_MODEL_HUB_URL, and the service generates with the model", async () => {
    await freshHub();
    const { stdout } = await run(process.execPath, ["--import", "tsx", "bin/models-cli.ts", "pull", "lcm-dreamshaper-v7", "--from", modelMirror], {
      env: { ...process.env, ATELIER_MODELS_DIR: store.modelsDir, ATELIER_MODEL_HUB_URL: hub.url },
    });
    expect(stdout).toBe(`lcm-dreamshaper-v7: installed and verified (${hub.url}/${repository}@${commitA})\n`);
    const service = await startTestService({ ATELIER_MODELS_DIR: store.modelsDir, ATELIER_ONNX_THREADS: "1" });
    try {
      const models = (await (await fetch(`${service.url}/api/v1/models`)).json()) as { data: { id: string; installed: boolean }[] };
      expect(models.data.find((model) => model.id === "lcm-dreamshaper-v7")?.installed).toBe(true);
      const key = await service.createKey();
      const response = await service.post("/generate", { prompt: "a lighthouse at dusk", model: "lcm-dreamshaper-v7", width: 256, height: 256, seed: 7 }, key);
      const body = (await response.json()) as { model: string; seed: number; data: { width: number; height: number; url: string }[] };
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ model: "lcm-dreamshaper-v7", seed: 7, data: [{ width: 256, height: 256 }] });
      expect(body.data[0]!.url).toMatch(/^data:image\/png;base64,/);
    } finally {
      await service.close();
    }
  }, 120_000);
});

describe.skipIf(!hasMirrorModel("clip-bpe-vocab"))("importing an export the operator made", () => {
  const sd21 = entry("stable-diffusion-2-1");
  let store: ModelStore;
  let exportDir: string;

  beforeAll(() => {
    exportDir = tempDir("sd21-export");
    writeTinyDiffusion(exportDir, { variant: "sd21", externalData: true });
  });
  afterAll(() => fs.rmSync(exportDir, { recursive: true, force: true }));
  afterEach(() => fs.rmSync(store.modelsDir, { recursive: true, force: true }));

  it("cannot be pulled, and is installed by import with every file's checksum recorded", async () => {
    store = new ModelStore(tempDir("import-models"));
    await expect(pullModel(sd21, store, { from: modelMirror, converters: noConverters })).rejects.toThrow(/npm run models -- import stable-diffusion-2-1 EXPORT_DIR/);
    await importModel(sd21, store, exportDir, { from: modelMirror, converters: noConverters });
    expect(store.isInstalled(sd21)).toBe(true);
    const record = store.readInstallRecord("stable-diffusion-2-1")!;
    expect(record.from).toBe(`imported from ${exportDir}`);
    expect(Object.keys(record.files)).toEqual(expect.arrayContaining(["unet/model.onnx", "unet/model.onnx_data", "clip/bpe_simple_vocab_16e6.txt.gz"]));
    expect(await verifyModel(sd21, store)).toEqual({ ok: true, problems: [] });
    fs.appendFileSync(path.join(store.modelFolder("stable-diffusion-2-1"), "unet/model.onnx_data"), "x");
    expect((await verifyModel(sd21, store)).ok).toBe(false);
  });

  it("refuses an export that lacks one of the model's graphs", async () => {
    store = new ModelStore(tempDir("import-models"));
    const partial = tempDir("partial-export");
    fs.cpSync(exportDir, partial, { recursive: true });
    fs.rmSync(path.join(partial, "unet", "model.onnx_data"));
    try {
      await expect(importModel(sd21, store, partial, { from: modelMirror, converters: noConverters })).rejects.toThrow(
        /stable-diffusion-2-1 is incomplete: unet\/model\.onnx_data missing/,
      );
      expect(fs.existsSync(path.join(store.modelFolder("stable-diffusion-2-1"), INSTALL_RECORD))).toBe(false);
    } finally {
      fs.rmSync(partial, { recursive: true, force: true });
    }
  });
});
