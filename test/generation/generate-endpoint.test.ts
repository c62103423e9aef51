/**
 * POST /api/v1/generate end to end with the real cvae-quickdraw model pulled from the mirror: only
 * a prompt is needed, the seed reproduces the image, the drawing is smooth, bounds and classes are
 * enforced with actionable 400s; and a server with no model answers 503 naming what to install.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel } from "../support/test-assets.js";
import { bytesOfDataUrl } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { blockiness, greyLevels } from "./drawing-measures.js";
import { QUICKDRAW_LABELS } from "./doodle-labels.js";

const modelsFolder = fileTempDir("test-models");

interface GenerateBody {
  id: string;
  model: string;
  seed: number;
  steps: number;
  interpretation?: string;
  data: { url: string; mimeType: string; width: number; height: number }[];
}

interface ErrorBody {
  code: string;
  message: string;
  issues?: { path: string; message: string }[];
}

async function grey(url: string) {
  const { data, info } = await sharp(bytesOfDataUrl(url)).greyscale().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height, channels: 1 as const };
}

describe.skipIf(!hasMirrorModel("cvae-quickdraw"))("POST /api/v1/generate with cvae-quickdraw installed", () => {
  let service: TestService;
  let key: string;

  beforeAll(async () => {
    service = await startTestService({ ATELIER_MODELS_DIR: await installModels(modelsFolder, ["cvae-quickdraw"]) });
    key = await service.createKey("generate");
  });
  afterAll(async () => {
    await service.close();
  });

  const generate = async (body: unknown) => {
    const response = await service.post("/generate", body, key);
    return { status: response.status, body: (await response.json()) as GenerateBody & ErrorBody };
  };

  it("draws a 256x256 PNG doodle from a prompt alone, reporting model, seed and class", async () => {
    const { status, body } = await generate({ prompt: "an owl in the moonlight" });
    expect(status).toBe(200);
    expect(body).toMatchObject({ model: "cvae-quickdraw", steps: 1 });
    expect(body.interpretation).toMatch(/"owl"/);
    expect(Number.isInteger(body.seed)).toBe(true);
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toMatchObject({ mimeType: "image/png", width: 256, height: 256 });
    const metadata = await sharp(bytesOfDataUrl(body.data[0]!.url)).metadata();
    expect([metadata.format, metadata.width, metadata.height]).toEqual(["png", 256, 256]);
  });

  it("gives identical bytes for the same seed and parameters, and another drawing for another seed", async () => {
    const request = { prompt: "Light bulbs!", width: 200, height: 160, seed: 1234 };
    const first = await generate(request);
    const second = await generate(request);
    expect(first.body.seed).toBe(1234);
    expect(first.body.interpretation).toMatch(/light_bulb/);
    expect(second.body.data[0]!.url).toBe(first.body.data[0]!.url);
    const other = await generate({ ...request, seed: 1235 });
    expect(other.body.seed).toBe(1235);
    const [a, b] = [await grey(first.body.data[0]!.url), await grey(other.body.data[0]!.url)];
    let differing = 0;
    for (let i = 0; i < a.data.length; i++) if (Math.abs(a.data[i]! - b.data[i]!) > 64) differing++;
    expect(differing / a.data.length).toBeGreaterThan(0.005);
  });

  it("reports a fresh seed when none is given, and that seed redraws the image", async () => {
    const random = await generate({ prompt: "mushroom" });
    const again = await generate({ prompt: "mushroom", seed: random.body.seed });
    expect(again.body.data[0]!.url).toBe(random.body.data[0]!.url);
  });

  it("draws smooth anti-aliased pen lines, not blocks", async () => {
    const { body } = await generate({ prompt: "an apple", width: 224, height: 224, seed: 7 });
    const image = await grey(body.data[0]!.url);
    expect(greyLevels(image)).toBeGreaterThan(2);
    expect(image.data[0]).toBe(255);
    const ink = image.data.filter((value) => value < 128).length / image.data.length;
    expect(ink).toBeGreaterThan(0.01);
    expect(ink).toBeLessThan(0.25);
    // Model pixels are 224 * 0.88 / 28 = 7.04 output pixels here: no 7- or 8-pixel grid shows.
    expect(blockiness(image, 7)).toBeLessThan(0.3);
    expect(blockiness(image, 8)).toBeLessThan(0.3);
  });

  it("keeps the requested aspect, with the doodle centred", async () => {
    const { status, body } = await generate({ prompt: "a key", width: 400, height: 120, outputFormat: "webp" });
    expect(status).toBe(200);
    expect(body.data[0]).toMatchObject({ mimeType: "image/webp", width: 400, height: 120 });
    const image = await grey(body.data[0]!.url);
    for (let y = 0; y < 120; y++) {
      for (const x of [0, 60, 339, 399]) expect(image.data[y * 400 + x]).toBeGreaterThan(240);
    }
  });

  it("answers 400 listing the 50 classes when the prompt names none", async () => {
    const { status, body } = await generate({ prompt: "two cats" });
    expect(status).toBe(400);
    expect(body.code).toBe("INVALID_INPUT");
    expect(body.message).toMatch(/none of the 50 things/);
    for (const label of QUICKDRAW_LABELS) expect(body.message).toContain(label.replaceAll("_", " "));
  });

  it.each([
    [{ width: 2000 }, "Expected integer between 28 and 1024 for width but received 2000"],
    [{ width: 10 }, "Expected integer between 28 and 1024 for width but received 10"],
    [{ height: 1025 }, "Expected integer between 28 and 1024 for height but received 1025"],
  ])("answers 400 with the allowed range for %j", async (size, message) => {
    const { status, body } = await generate({ prompt: "apple", ...size });
    expect(status).toBe(400);
    expect(body.code).toBe("INVALID_INPUT");
    expect(body.message).toContain(message);
  });

  it("answers 400 for tuning fields the doodle model does not take, naming the models that do, instead of ignoring them", async () => {
    const { status, body } = await generate({ prompt: "an owl", steps: 30, negativePrompt: "blurry", seed: 3 });
    expect(status).toBe(400);
    expect(body.code).toBe("INVALID_INPUT");
    expect(body.issues?.map((issue) => issue.path)).toEqual(["negativePrompt", "steps"]);
    expect(body.issues?.[1]?.message).toBe(
      'The model "cvae-quickdraw" does not take steps. Leave it out, or choose a model that takes it: lcm-dreamshaper-v7, sd-turbo, stable-diffusion-1-5, stable-diffusion-2-1.',
    );
    const models = (await (await fetch(`${service.url}/api/v1/models`)).json()) as { data: { id: string; generation?: { options: string[] } }[] };
    expect(models.data.find((model) => model.id === "cvae-quickdraw")?.generation?.options).toEqual([]);
    expect(models.data.find((model) => model.id === "stable-diffusion-1-5")?.generation?.options).toEqual(["negativePrompt", "steps", "guidanceScale", "scheduler"]);
  });

  it("draws at the smallest and largest sizes", async () => {
    for (const side of [28, 1024]) {
      const { status, body } = await generate({ prompt: "moon", width: side, height: side, seed: 3 });
      expect(status).toBe(200);
      const image = await grey(body.data[0]!.url);
      expect(image.width).toBe(side);
      expect(image.data.some((value) => value < 128)).toBe(true);
    }
  });

  it("answers 400 for a model that is not a generation model", async () => {
    const { status, body } = await generate({ prompt: "apple", model: "lanczos" });
    expect(status).toBe(400);
    expect(body.message).toMatch(/cvae-quickdraw/);
  });
});

describe("POST /api/v1/generate with no model installed", () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service.close();
  });

  it("answers 503 naming the command that installs a generation model", async () => {
    const response = await service.post("/generate", { prompt: "a cat" }, await service.createKey("empty"));
    expect(response.status).toBe(503);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    const body = (await response.json()) as ErrorBody;
    expect(body.code).toBe("MODEL_NOT_INSTALLED");
    expect(body.message).toMatch(/text-to-image/);
    expect(body.message).toContain("npm run models -- pull cvae-quickdraw");
    expect(body.message).toMatch(/Stable Diffusion/);
  });
});
