/**
 * POST /api/v1/tools/upscale with real models, through a whole service (startTestService with a
 * models folder pulled from the mirror), and the worker's refusals, checked on the service function
 * itself so "before any inference" can be observed.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import { createLogger } from "../../core/logger.js";
import { UpscaleRequest } from "../../gen/atelier/upscale/v1/upscale_service.js";
import { ModelLoader } from "../../workers/model-loader.js";
import { ModelStore } from "../../models/store/model-store.js";
import type { ModelRuntime } from "../../workers/onnx/onnx-runtime.js";
import { upscale, type UpscaleDependencies } from "../../workers/upscale/upscale-service.js";
import type { WorkQueue } from "../../workers/work-queue.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasTestPhotos, testPhoto } from "../support/test-assets.js";
import { bytesOfDataUrl, dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { mirrorHas } from "./upscale-fixtures.js";

const modelsFolder = fileTempDir("test-models");

interface UpscaleBody {
  model: string;
  scale: number;
  nativeScale: number;
  steps: string[];
  data: { url: string; mimeType: string; width: number; height: number }[];
}

interface ErrorBody {
  code: string;
  message: string;
  issues?: { path: string; message: string }[];
}

// Nothing is ever installed into it, so the tests that need no models share it.
const noModelsDir = fileTempDir("no-models");

async function photoPng(region: { left: number; top: number; width: number; height: number }, name: Parameters<typeof testPhoto>[0] = "chelsea.png") {
  return sharp(testPhoto(name)).extract(region).png().toBuffer();
}

/** The same crop as {@link photoPng}, stored as a JPEG (a lossy source), as a data URL. */
async function photoJpegUrl(region: { left: number; top: number; width: number; height: number }, name: Parameters<typeof testPhoto>[0] = "chelsea.png") {
  return dataUrl(await sharp(testPhoto(name)).extract(region).jpeg({ quality: 90 }).toBuffer(), "image/jpeg");
}

async function decoded(body: UpscaleBody) {
  const bytes = bytesOfDataUrl(body.data[0]!.url);
  const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
  return { metadata: await sharp(bytes).metadata(), data, info };
}

describe("the worker's refusals come before any inference", () => {
  /** Dependencies whose runtime and queue fail the test if anything reaches them. */
  function guarded(modelsDir: string, maxOutputPixels = 4096 * 4096): UpscaleDependencies & { touched: string[] } {
    const touched: string[] = [];
    return {
      touched,
      limits: { maxBytes: 25 * 1024 * 1024, maxInputPixels: 50_000_000, maxOutputPixels },
      logger: createLogger("silent"),
      runtime: { model: () => touched.push("runtime") && undefined } as unknown as ModelRuntime,
      queue: { run: async () => touched.push("queue") } as unknown as WorkQueue,
      models: new ModelLoader(new ModelStore(modelsDir), { disableNonCommercial: false }),
    };
  }

  async function refusal(request: Partial<UpscaleRequest>, deps: UpscaleDependencies): Promise<AtelierError> {
    const error = await upscale(UpscaleRequest.fromPartial(request), deps, new AbortController().signal).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(AtelierError);
    return error as AtelierError;
  }

  it.each([undefined, "esrgan-slim"])("413 OUTPUT_TOO_LARGE with the limit in the message (model %s)", async (model) => {
    const deps = guarded(noModelsDir, 1_000_000);
    const image = { data: await gradientPng(400, 300), mimeType: "image/png", width: 0, height: 0 };
    const error = await refusal({ image, scale: 4, ...(model ? { model } : {}) }, deps);
    expect(error.code).toBe("OUTPUT_TOO_LARGE");
    expect(error.httpStatus).toBe(413);
    expect(error.message).toMatch(/1600x1200 \(1\.9 MP\), over this server's limit of 1\.0 MP \(ATELIER_MAX_OUTPUT_PIXELS\)/);
    expect(deps.touched).toEqual([]);
  });

  it("503 MODEL_NOT_INSTALLED naming the install command, before the image is even decoded", async () => {
    const deps = guarded(noModelsDir);
    const error = await refusal({ image: { data: Buffer.from("not an image"), mimeType: "image/png", width: 0, height: 0 }, scale: 4, model: "lsdir-compact-x4" }, deps);
    expect(error.code).toBe("MODEL_NOT_INSTALLED");
    expect(error.httpStatus).toBe(503);
    expect(error.retryAfterSeconds).toBe(3600);
    expect(error.message).toMatch(/"lsdir-compact-x4" is not installed.*`npm run models -- pull lsdir-compact-x4`/);
    expect(deps.touched).toEqual([]);
  });

  it.each([
    ["no-such-model", 2, "model", /Unknown upscale model "no-such-model"\. Upscale models: lanczos, esrgan-thick/],
    ["espcn-x3", 8, "scale", /Expected one of 2, 3, 4, 5, 6 for scale with model "espcn-x3" but received 8/],
  ])("400 INVALID_INPUT for model %s at x%i", async (model, scale, field, message) => {
    const deps = guarded(noModelsDir);
    const error = await refusal({ image: { data: await gradientPng(40, 40), mimeType: "image/png", width: 0, height: 0 }, scale, model }, deps);
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.httpStatus).toBe(400);
    expect(error.message).toMatch(message);
    expect(error.issues?.[0]?.path).toBe(field);
    expect(deps.touched).toEqual([]);
  });
});

describe.skipIf(!(hasTestPhotos() && mirrorHas("lsdir-compact-x4") && mirrorHas("espcn-x3")))("POST /api/v1/tools/upscale with models installed", () => {
  let service: TestService;
  let key: string;

  beforeAll(async () => {
    service = await startTestService({ ATELIER_MODELS_DIR: await installModels(modelsFolder, ["lsdir-compact-x4", "espcn-x3"]) });
    key = await service.createKey("upscale");
  });
  afterAll(async () => {
    await service?.close();
  });

  async function ok(body: Record<string, unknown>): Promise<UpscaleBody> {
    const response = await service.post("/tools/upscale", body, key);
    const json = (await response.json()) as UpscaleBody;
    expect(response.status, JSON.stringify(json).slice(0, 300)).toBe(200);
    return json;
  }

  it("x4 by default runs Atelier's own x4 network natively and returns the photo 4x larger", async () => {
    const png = await photoPng({ left: 180, top: 80, width: 64, height: 48 });
    const body = await ok({ imageUrl: dataUrl(png), scale: 4 });
    expect(body).toMatchObject({ model: "atelier-compact-x4", scale: 4, nativeScale: 4, steps: ["atelier-compact-x4 x4"] });
    expect(body.data[0]).toMatchObject({ mimeType: "image/png", width: 256, height: 192 });
    const { info } = await decoded(body);
    expect([info.width, info.height, info.channels]).toEqual([256, 192, 3]);
  });

  it("x2 by default runs Atelier's own x2 network natively; LSDIR named runs at x4 and reduces with Lanczos, saying so", async () => {
    const imageUrl = dataUrl(await photoPng({ left: 180, top: 80, width: 48, height: 40 }));
    expect(await ok({ imageUrl, scale: 2 })).toMatchObject({ model: "atelier-compact-x2", scale: 2, nativeScale: 2, steps: ["atelier-compact-x2 x2"] });
    const body = await ok({ imageUrl, scale: 2, model: "lsdir-compact-x4" });
    expect(body).toMatchObject({ model: "lsdir-compact-x4", scale: 2, nativeScale: 4, steps: ["lsdir-compact-x4 x4", "lanczos3 to x2"] });
    expect(body.data[0]).toMatchObject({ width: 96, height: 80 });
  });

  it("runs an explicitly requested model; x6 goes through its x8 network", async () => {
    const body = await ok({ imageUrl: dataUrl(await photoPng({ left: 180, top: 80, width: 32, height: 24 })), scale: 6, model: "esrgan-slim", outputFormat: "webp" });
    expect(body).toMatchObject({ model: "esrgan-slim", scale: 6, nativeScale: 8, steps: ["esrgan-slim x8", "lanczos3 to x6"] });
    expect(body.data[0]).toMatchObject({ mimeType: "image/webp", width: 192, height: 144 });
  });

  it("keeps grayscale grey and alpha transparent", async () => {
    const grey = await sharp(testPhoto("camera.png")).extract({ left: 200, top: 100, width: 40, height: 40 }).toColourspace("b-w").png().toBuffer();
    expect((await sharp(grey).metadata()).channels).toBe(1);
    const greyBody = await ok({ imageUrl: dataUrl(grey), scale: 2, model: "esrgan-slim" });
    const greyOut = await decoded(greyBody);
    expect([greyOut.metadata.channels, greyOut.metadata.space, greyOut.metadata.width]).toEqual([1, "b-w", 80]);

    const rgb = await sharp(testPhoto("chelsea.png")).extract({ left: 150, top: 60, width: 48, height: 48 }).raw().toBuffer();
    const rgba = Buffer.alloc(48 * 48 * 4);
    for (let p = 0; p < 48 * 48; p++) {
      rgb.copy(rgba, p * 4, p * 3, p * 3 + 3);
      rgba[p * 4 + 3] = Math.hypot((p % 48) - 23.5, Math.floor(p / 48) - 23.5) < 16 ? 255 : 0;
    }
    const png = await sharp(rgba, { raw: { width: 48, height: 48, channels: 4 } }).png().toBuffer();
    const body = await ok({ imageUrl: dataUrl(png), scale: 4 });
    expect(body.steps).toEqual(["atelier-compact-x4 x4", "alpha: lanczos3 x4"]);
    const out = await decoded(body);
    expect(out.info.channels).toBe(4);
    for (const [x, y] of [[0, 0], [191, 0], [0, 191], [191, 191], [10, 10]]) expect(out.data[(y! * 192 + x!) * 4 + 3], `alpha at ${x},${y}`).toBe(0);
    expect(out.data[(96 * 192 + 96) * 4 + 3]).toBe(255);
  });

  it("handles palette images (expanded to RGB, transparency kept)", async () => {
    const rgba = await sharp(testPhoto("coffee.png")).extract({ left: 250, top: 150, width: 40, height: 40 }).ensureAlpha().raw().toBuffer();
    for (let i = 3; i < 16 * 4; i += 4) rgba[i] = 0; // first 16 pixels transparent
    const palette = await sharp(rgba, { raw: { width: 40, height: 40, channels: 4 } }).png({ palette: true, colours: 64 }).toBuffer();
    expect((await sharp(palette).metadata()).isPalette).toBe(true);
    const body = await ok({ imageUrl: dataUrl(palette), scale: 2, model: "esrgan-slim" });
    expect(body.steps).toEqual(["esrgan-slim x2", "alpha: lanczos3 x2"]);
    const out = await decoded(body);
    expect([out.info.width, out.info.channels]).toEqual([80, 4]);
    expect(out.data[3]).toBe(0);
    expect(out.data[(79 * 80 + 79) * 4 + 3]).toBe(255);
  });

  it("respects EXIF orientation", async () => {
    // Stored 40 wide and 32 tall, displayed rotated a quarter turn: 32 wide and 40 tall.
    const jpeg = await sharp(testPhoto("chelsea.png")).extract({ left: 150, top: 60, width: 40, height: 32 }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const body = await ok({ imageUrl: dataUrl(jpeg), scale: 2, model: "esrgan-slim" });
    expect(body.data[0]).toMatchObject({ width: 64, height: 80 });
  });

  it("answers 400 for an unknown model and for a factor the model cannot produce, 413 for an oversized result", async () => {
    const png = await gradientPng(40, 40);
    const unknown = await service.post("/tools/upscale", { imageUrl: dataUrl(png), model: "esrgan-huge" }, key);
    expect(unknown.status).toBe(400);
    const unknownBody = (await unknown.json()) as ErrorBody;
    expect(unknownBody.code).toBe("INVALID_INPUT");
    expect(unknownBody.message).toMatch(/Upscale models: lanczos, esrgan-thick, esrgan-medium, esrgan-slim, lsdir-compact-x4, atelier-compact-x4, atelier-compact-x2, espcn-x3/);

    const unsupported = await service.post("/tools/upscale", { imageUrl: dataUrl(png), model: "espcn-x3", scale: 7 }, key);
    expect(unsupported.status).toBe(400);
    expect(((await unsupported.json()) as ErrorBody).message).toBe('Expected one of 2, 3, 4, 5, 6 for scale with model "espcn-x3" but received 7.');

    const big = await gradientPng(1200, 1000);
    const tooLarge = await service.post("/tools/upscale", { imageUrl: dataUrl(big), scale: 4, model: "lsdir-compact-x4" }, key);
    expect(tooLarge.status).toBe(413);
    expect(((await tooLarge.json()) as ErrorBody).message).toMatch(/4800x4000.*16\.8 MP.*ATELIER_MAX_OUTPUT_PIXELS/);
  });

  it("uses Lanczos by default for icon-sized images, grey staying grey", async () => {
    const body = await ok({ imageUrl: dataUrl(await gradientPng(24, 16)), scale: 3 });
    expect(body).toMatchObject({ model: "lanczos", nativeScale: 3, steps: ["lanczos3 x3"] });
    const grey = await sharp(await gradientPng(24, 16, { alpha: true })).toColourspace("b-w").png().toBuffer();
    const out = await decoded(await ok({ imageUrl: dataUrl(grey), scale: 2 }));
    expect([out.metadata.channels, out.metadata.space, out.metadata.hasAlpha]).toEqual([2, "b-w", true]);
  });

  it('quality "max" averages LSDIR as a self-ensemble with ESRGAN thick for a JPEG, runs Atelier\'s own network as a self-ensemble for a PNG; "fast" and the default (budget 0 here) run the fast default once, and the outputs differ', async () => {
    const region = { left: 180, top: 80, width: 48, height: 40 };
    const imageUrl = await photoJpegUrl(region);
    const max = await ok({ imageUrl, scale: 2, quality: "max" });
    expect(max).toMatchObject({
      model: "lsdir-compact-x4",
      nativeScale: 4,
      steps: ["lsdir-compact-x4 x4 (self-ensemble of 8)", "lanczos3 to x2", "esrgan-thick x4", "lanczos3 to x2", "mean of both"],
    });
    const fast = await ok({ imageUrl, scale: 2, quality: "fast" });
    expect(fast.steps).toEqual(["atelier-compact-x2 x2"]);
    expect((await ok({ imageUrl, scale: 2, quality: "balanced" })).steps).toEqual(fast.steps);
    const [ensembled, once] = [(await decoded(max)).data, (await decoded(fast)).data];
    expect(ensembled.length).toBe(once.length);
    expect(ensembled.equals(once)).toBe(false);
    const pngMax = await ok({ imageUrl: dataUrl(await photoPng(region)), scale: 2, quality: "max" });
    expect(pngMax).toMatchObject({ model: "atelier-compact-x2", nativeScale: 2, steps: ["atelier-compact-x2 x2 (self-ensemble of 8)"] });
    const x4 = await ok({ imageUrl: await photoJpegUrl({ left: 180, top: 80, width: 32, height: 32 }), scale: 4, quality: "max" });
    expect(x4).toMatchObject({ model: "esrgan-thick", nativeScale: 4, steps: ["esrgan-thick x4", "lsdir-compact-x4 x4 (self-ensemble of 8)", "mean of both"] });
  });

  it("answers 400 with a JSON error naming quality for an unknown value, for quality beside model, and for a max predicted past the deadline", async () => {
    const imageUrl = dataUrl(await gradientPng(40, 40));
    const refusal = async (body: Record<string, unknown>) => {
      const response = await service.post("/tools/upscale", body, key);
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toMatch(/application\/json/);
      const json = (await response.json()) as ErrorBody;
      expect(json.code).toBe("INVALID_INPUT");
      expect(json.issues?.[0]?.path).toBe("quality");
      return json.message;
    };
    expect(await refusal({ imageUrl, quality: "best" })).toMatch(/Expected one of fast, balanced, max for quality but received "best"/);
    expect(await refusal({ imageUrl, quality: "max", model: "lanczos" })).toMatch(/quality chooses the model, so it cannot be set together with model \("lanczos"\)/);
    // 2000x2000 at x2: 16 MP of Atelier's x2 network x8 (a PNG) is about 270 s, over the whole 120 s deadline however many job slots share it.
    expect(await refusal({ imageUrl: dataUrl(await gradientPng(2000, 2000)), scale: 2, quality: "max" })).toMatch(
      /quality "max" would take about 270 s for a 4000x4000 result \(atelier-compact-x2 as a self-ensemble of 8, 16\.9 s per output MP on 2 cores\), over the \d+ s an upscale may take here/,
    );
  });
});

describe.skipIf(!(hasTestPhotos() && mirrorHas("lsdir-compact-x4")))("POST /api/v1/tools/upscale with the default time budget", () => {
  let service: TestService;
  let key: string;

  beforeAll(async () => {
    // The configuration's own default budget (test-service pins 0 for the other tests).
    const budget = String(loadConfig({}).images.upscaleTimeBudgetMs);
    service = await startTestService({ ATELIER_MODELS_DIR: await installModels(modelsFolder, ["lsdir-compact-x4"]), ATELIER_UPSCALE_TIME_BUDGET_MS: budget });
    key = await service.createKey("upscale-budget");
  }, 180_000);
  afterAll(async () => {
    await service?.close();
  });

  async function post(body: Record<string, unknown>): Promise<UpscaleBody> {
    const response = await service.post("/tools/upscale", body, key);
    const json = (await response.json()) as UpscaleBody;
    expect(response.status, JSON.stringify(json).slice(0, 300)).toBe(200);
    return json;
  }

  it("x2 of a small JPEG photo averages LSDIR as a self-ensemble of eight orientations with ESRGAN thick, unlike LSDIR named alone", async () => {
    const imageUrl = await photoJpegUrl({ left: 180, top: 80, width: 48, height: 40 });
    const body = await post({ imageUrl, scale: 2 });
    expect(body).toMatchObject({
      model: "lsdir-compact-x4",
      nativeScale: 4,
      steps: ["lsdir-compact-x4 x4 (self-ensemble of 8)", "lanczos3 to x2", "esrgan-thick x4", "lanczos3 to x2", "mean of both"],
    });
    const single = await post({ imageUrl, scale: 2, model: "lsdir-compact-x4" });
    expect(single.steps).toEqual(["lsdir-compact-x4 x4", "lanczos3 to x2"]);
    const [ensemble, alone] = [(await decoded(body)).data, (await decoded(single)).data];
    expect(ensemble.length).toBe(alone.length);
    expect(ensemble.equals(alone)).toBe(false);
  });

  it("x4 of a small JPEG photo averages ESRGAN thick (installed with npm) with LSDIR as a self-ensemble, unlike ESRGAN thick named alone", async () => {
    const imageUrl = await photoJpegUrl({ left: 180, top: 80, width: 32, height: 32 });
    const body = await post({ imageUrl, scale: 4 });
    expect(body).toMatchObject({ model: "esrgan-thick", nativeScale: 4, steps: ["esrgan-thick x4", "lsdir-compact-x4 x4 (self-ensemble of 8)", "mean of both"] });
    const single = await post({ imageUrl, scale: 4, model: "esrgan-thick" });
    expect(single.steps).toEqual(["esrgan-thick x4"]);
    expect((await decoded(body)).data.equals((await decoded(single)).data)).toBe(false);
  });

  it("a PNG and a JPEG of the same picture get different defaults: Atelier's own network as a self-ensemble for the PNG, the LSDIR ensemble for the JPEG", async () => {
    const region = { left: 180, top: 80, width: 48, height: 40 };
    const png = await post({ imageUrl: dataUrl(await photoPng(region)), scale: 2 });
    const jpeg = await post({ imageUrl: await photoJpegUrl(region), scale: 2 });
    expect(png).toMatchObject({ model: "atelier-compact-x2", nativeScale: 2, steps: ["atelier-compact-x2 x2 (self-ensemble of 8)"] });
    expect(jpeg).toMatchObject({ model: "lsdir-compact-x4", nativeScale: 4, steps: ["lsdir-compact-x4 x4 (self-ensemble of 8)", "lanczos3 to x2", "esrgan-thick x4", "lanczos3 to x2", "mean of both"] });
    const x4 = await post({ imageUrl: dataUrl(await photoPng({ left: 180, top: 80, width: 32, height: 32 })), scale: 4 });
    expect(x4).toMatchObject({ model: "atelier-compact-x4", nativeScale: 4, steps: ["atelier-compact-x4 x4 (self-ensemble of 8)"] });
  });
});

describe.skipIf(!hasTestPhotos())("POST /api/v1/tools/upscale with no pulled models", () => {
  let service: TestService;
  let key: string;

  beforeAll(async () => {
    service = await startTestService({ ATELIER_MODELS_DIR: noModelsDir });
    key = await service.createKey("bare");
  });
  afterAll(async () => {
    await service?.close();
  });

  it("503 MODEL_NOT_INSTALLED with the install command for an explicit model that is not pulled", async () => {
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(await gradientPng(40, 40)), model: "lsdir-compact-x4", scale: 4 }, key);
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("3600");
    const body = (await response.json()) as ErrorBody;
    expect(body.code).toBe("MODEL_NOT_INSTALLED");
    expect(body.message).toMatch(/npm run models -- pull lsdir-compact-x4/);
  });

  it("defaults to the best model that is installed: Atelier's own (shipped with it), the npm ESRGAN models, else Lanczos", async () => {
    const png = await photoPng({ left: 180, top: 80, width: 40, height: 32 });
    const call = async (scale: number) => (await (await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale }, key)).json()) as UpscaleBody;
    expect(await call(2)).toMatchObject({ model: "atelier-compact-x2", nativeScale: 2, steps: ["atelier-compact-x2 x2"] });
    expect(await call(3)).toMatchObject({ model: "esrgan-medium", nativeScale: 3, steps: ["esrgan-medium x3"] });
    expect(await call(4)).toMatchObject({ model: "atelier-compact-x4", nativeScale: 4, steps: ["atelier-compact-x4 x4"] });
    expect(await call(5)).toMatchObject({ model: "lanczos", nativeScale: 5, steps: ["lanczos3 x5"] });
    const x6 = await call(6);
    expect(x6).toMatchObject({ model: "esrgan-thick", nativeScale: 8, steps: ["esrgan-thick x8", "lanczos3 to x6"] });
    expect(x6.data[0]).toMatchObject({ width: 240, height: 192 });
  });
});
