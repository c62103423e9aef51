/**
 * The acceptance path of the model registry: `npm run models -- pull --all --from <mirror>` into an
 * empty folder installs and verifies every mirror model, converted ones included, and the service
 * then reports every model installed.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import * as ort from "onnxruntime-node";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fullyPinned, MODEL_CATALOG } from "../../models/catalog/model-catalog.js";
import { testTempDir } from "../support/temp-dir.js";
import { hasMirrorModel, hasTestPhotos, mirrorPath, modelMirror, testPhoto } from "../support/test-assets.js";
import { startTestService, type TestService } from "../support/test-service.js";

const run = promisify(execFile);
const modelsDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-pull-all-"));
/** Models `pull --all` leaves out: hub exports not pinned here, and exports only an operator can make. */
const notPinned = MODEL_CATALOG.filter((entry) => !fullyPinned(entry)).map((entry) => entry.id);

function models(...args: string[]) {
  return run(process.execPath, ["--import", "tsx", "bin/models-cli.ts", ...args], {
    env: { ...process.env, ATELIER_MODELS_DIR: modelsDir },
    maxBuffer: 16 * 1024 * 1024,
  });
}

async function maxDifference(modelA: string | Uint8Array, modelB: string | Uint8Array, feeds: Record<string, ort.Tensor>): Promise<number> {
  const [a, b] = await Promise.all([ort.InferenceSession.create(modelA as Uint8Array), ort.InferenceSession.create(modelB as Uint8Array)]);
  const [outA, outB] = await Promise.all([a.run(feeds), b.run(feeds)]);
  const x = outA[a.outputNames[0]!]!.data as Float32Array;
  const y = outB[b.outputNames[0]!]!.data as Float32Array;
  expect(x.length).toBe(y.length);
  let max = 0;
  for (let i = 0; i < x.length; i++) max = Math.max(max, Math.abs(x[i]! - y[i]!));
  await Promise.all([a.release(), b.release()]);
  return max;
}

describe.skipIf(!hasMirrorModel("style-fast-ml5"))("npm run models", () => {
  beforeAll(async () => {
    const { stdout } = await models("pull", "--all", "--from", modelMirror);
    expect(stdout).toMatch(/udnie: installed and verified/);
  }, 180_000);
  afterAll(() => fs.rmSync(modelsDir, { recursive: true, force: true }));

  it("lists every catalogued model as installed after pull --all, except exports not pinned here", async () => {
    const { stdout } = await models("list", "--json");
    const rows = JSON.parse(stdout) as { id: string; installed: boolean }[];
    expect(rows.map((row) => row.id).sort()).toEqual(MODEL_CATALOG.map((entry) => entry.id).sort());
    expect(notPinned).toEqual(["lcm-dreamshaper-v7", "sd-turbo", "stable-diffusion-1-5", "stable-diffusion-2-1"]);
    expect(rows.filter((row) => !row.installed).map((row) => row.id)).toEqual(notPinned);
  });

  it("refuses to pull a model no source publishes checksums for, pointing at import", async () => {
    await expect(models("pull", "stable-diffusion-2-1", "--from", modelMirror)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(
        /stable-diffusion-2-1: FAILED: stable-diffusion-2-1 cannot be pulled: no source publishes checksums for 4 of its files .*npm run models -- import stable-diffusion-2-1 EXPORT_DIR/,
      ),
    });
  });

  it("pulls from ATELIER_MODEL_MIRROR when no --from is given, and says so", async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-mirror-env-"));
    try {
      const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "bin/models-cli.ts", "pull", "portrait-selfie"], {
        env: { ...process.env, ATELIER_MODELS_DIR: folder, ATELIER_MODEL_MIRROR: modelMirror },
      });
      expect(stderr).toContain(`Installing from the mirror in ATELIER_MODEL_MIRROR (${modelMirror})`);
      expect(stdout).toBe("portrait-selfie: installed and verified\n");
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it("offline, says why a download failed and how to install from a copy instead of only \"fetch failed\"", async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const folder = testTempDir("offline");
    const failure = await run(process.execPath, ["--import", "tsx", "bin/models-cli.ts", "pull", "portrait-sinet", "--from", `http://127.0.0.1:${closed}/mirror`], {
      env: { ...process.env, ATELIER_MODELS_DIR: folder },
    }).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 1 });
    const { stderr } = failure as { stderr: string };
    expect(stderr).toContain(`portrait-sinet: FAILED: could not reach 127.0.0.1:${closed} (ECONNREFUSED).`);
    expect(stderr).toContain("npm run models -- pull ID --from DIR");
    expect(stderr).toContain("ATELIER_MODEL_MIRROR");
    expect(stderr).not.toContain("fetch failed");
  });

  it("verifies every installed model", async () => {
    const { stdout } = await models("verify");
    expect(stdout).not.toMatch(/FAILED/);
    expect(stdout.match(/: OK$/gm)?.length).toBe(MODEL_CATALOG.filter((entry) => entry.source.kind !== "builtin" && fullyPinned(entry)).length);
  });

  it("is idempotent", async () => {
    const { stdout } = await models("pull", "portrait-selfie", "udnie", "--from", modelMirror);
    expect(stdout).toBe("portrait-selfie: already installed\nudnie: already installed\n");
  });

  it.skipIf(!hasTestPhotos())("converts style checkpoints at install into graphs equal to the reference ONNX files", async () => {
    const { data } = await sharp(testPhoto("chelsea.png")).extract({ left: 100, top: 50, width: 96, height: 64 }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const planar = new Float32Array(3 * 64 * 96);
    for (let i = 0; i < 64 * 96; i++) for (let c = 0; c < 3; c++) planar[c * 64 * 96 + i] = data[i * 3 + c]!;
    for (const style of ["udnie", "matta"]) {
      const difference = await maxDifference(
        path.join(modelsDir, style, "model.onnx"),
        mirrorPath("style-fast-ml5", `ml5-fast-style-${style}.onnx`),
        { input: new ort.Tensor("float32", planar, [1, 3, 64, 96]) },
      );
      expect(difference).toBeLessThan(0.05);
    }
  });

  it("converts the CVAE decoder at install into a graph equal to the reference", async () => {
    const latent = Float32Array.from({ length: 16 }, (_, i) => ((i * 7) % 10) / 10);
    const label = new Float32Array(51);
    label[32] = 1;
    const difference = await maxDifference(path.join(modelsDir, "cvae-quickdraw", "model.onnx"), mirrorPath("cvae-quickdraw", "cvae-quickdraw-decoder.onnx"), {
      latent: new ort.Tensor("float32", latent, [1, 16]),
      label: new ort.Tensor("float32", label, [1, 51]),
    });
    expect(difference).toBeLessThan(1e-4);
  });

  describe("through the service", () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startTestService({ ATELIER_MODELS_DIR: modelsDir });
    });
    afterAll(async () => service.close());

    it("reports every model installed in GET /api/v1/models, with licence flags", async () => {
      const body = (await (await fetch(`${service.url}/api/v1/models`)).json()) as {
        data: { id: string; installed: boolean; nonCommercial: boolean; installCommand?: string; attribution?: string }[];
      };
      expect(body.data.filter((record) => !record.installed).map((record) => record.id)).toEqual(
        notPinned,
      );
      expect(body.data.find((record) => record.id === "udnie")?.nonCommercial).toBe(true);
      expect(body.data.find((record) => record.id === "matta")?.nonCommercial).toBe(false);
      expect(body.data.find((record) => record.id === "lsdir-compact-x4")?.attribution).toMatch(/Philip Hofmann/);
    });
  });

  it("reports a fresh models folder truthfully", async () => {
    const fresh = await startTestService({ ATELIER_MODELS_DIR: testTempDir("fresh") });
    try {
      const body = (await (await fetch(`${fresh.url}/api/v1/models`)).json()) as { data: { id: string; installed: boolean; installCommand?: string }[] };
      const byId = new Map(body.data.map((record) => [record.id, record]));
      expect(byId.get("lanczos")?.installed).toBe(true);
      expect(byId.get("esrgan-thick")?.installed).toBe(true);
      expect(byId.get("udnie")).toMatchObject({ installed: false, installCommand: "npm run models -- pull udnie" });
    } finally {
      await fresh.close();
    }
  });
});
