/**
 * POST /api/v1/tools/style-transfer end to end over HTTP (startTestService with a models folder pulled
 * from the mirror): every style, the error contract, the non-commercial switch, the working-size setting.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import { restyle } from "../../workers/style/style-service.js";
import { STYLE_ENTRIES } from "../../models/requests/style-request.js";
import { createWorkerContext } from "../../workers/worker-server.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel, hasTestPhotos, testPhoto } from "../support/test-assets.js";
import { bytesOfDataUrl, dataUrl } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { decode, difference, photoPixels, png } from "./style-images.js";

const modelsFolder = fileTempDir("test-models");

const available = hasMirrorModel("style-fast-ml5") && hasMirrorModel("style-fast-nc16") && hasTestPhotos();
const STYLE_IDS = STYLE_ENTRIES.map((entry) => entry.id);

interface StyleBody {
  model: string;
  style: string;
  data: { url: string; mimeType: string; width: number; height: number }[];
}
interface ErrorBody {
  code: string;
  message: string;
  issues?: { path: string; message: string }[];
}

const services: TestService[] = [];
async function serviceWith(env: Record<string, string>): Promise<{ service: TestService; key: string }> {
  const service = await startTestService(env);
  services.push(service);
  return { service, key: await service.createKey("style") };
}
afterAll(async () => {
  await Promise.all(services.map((service) => service.close()));
});

describe.skipIf(!available)("POST /api/v1/tools/style-transfer", () => {
  let modelsDir: string;
  let main: { service: TestService; key: string };
  let photo: Buffer;

  beforeAll(async () => {
    modelsDir = await installModels(modelsFolder, STYLE_IDS);
    main = await serviceWith({ ATELIER_MODELS_DIR: modelsDir });
    photo = await png(await photoPixels(testPhoto("chelsea.png"), { width: 93, height: 61 }));
  });

  it("lists every style in /models, installed, with a preview and the non-commercial flag", async () => {
    const body = (await (await fetch(`${main.service.url}/api/v1/models`)).json()) as { data: Record<string, unknown>[] };
    const styles = body.data.filter((record) => record.task === "style-transfer");
    expect(styles.map((record) => record.id)).toEqual(STYLE_IDS);
    expect(STYLE_IDS).toHaveLength(13);
    for (const record of styles) {
      expect(record).toMatchObject({ installed: true, disabled: false, nonCommercial: catalogEntry(record.id as string)!.nonCommercial });
      expect(record.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    }
    expect(styles.filter((record) => record.nonCommercial).map((record) => record.id)).toEqual(["la-muse", "rain-princess", "scream", "udnie", "wave", "wreck"]);
  });

  it.each(STYLE_IDS)("%s paints a 93x61 photo (sides not multiples of 4) and returns exactly 93x61", async (style) => {
    const response = await main.service.post("/tools/style-transfer", { imageUrl: dataUrl(photo), style }, main.key);
    expect(response.status).toBe(200);
    const body = (await response.json()) as StyleBody;
    expect(body).toMatchObject({ model: style, style, data: [{ mimeType: "image/png", width: 93, height: 61 }] });
    const result = await decode(bytesOfDataUrl(body.data[0]!.url));
    expect([result.width, result.height, result.channels]).toEqual([93, 61, 3]);
    expect(difference(result, await decode(photo)).mean).toBeGreaterThan(5);
  });

  it("honours outputFormat, EXIF orientation and grey inputs", async () => {
    const rotated = await sharp(testPhoto("chelsea.png")).resize(60, 40).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const response = await main.service.post("/tools/style-transfer", { imageUrl: dataUrl(rotated, "image/jpeg"), style: "mathura", outputFormat: "webp" }, main.key);
    expect(response.status).toBe(200);
    const body = (await response.json()) as StyleBody;
    expect(body.data[0]).toMatchObject({ mimeType: "image/webp", width: 40, height: 60 });
    expect(await sharp(bytesOfDataUrl(body.data[0]!.url)).metadata()).toMatchObject({ format: "webp", width: 40, height: 60 });

    const grey = await sharp(testPhoto("camera.png")).resize(50, 50).greyscale().png().toBuffer();
    const greyResponse = await main.service.post("/tools/style-transfer", { imageUrl: dataUrl(grey), style: "candy-lite", outputFormat: "jpeg" }, main.key);
    expect(greyResponse.status).toBe(200);
    expect(((await greyResponse.json()) as StyleBody).data[0]).toMatchObject({ mimeType: "image/jpeg", width: 50, height: 50 });
  });

  it("answers 400 for an unknown style, listing the available ones", async () => {
    const response = await main.service.post("/tools/style-transfer", { imageUrl: dataUrl(photo), style: "starry-night" }, main.key);
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorBody;
    expect(body.code).toBe("INVALID_INPUT");
    expect(body.message).toMatch(/^Unknown style "starry-night"\. Available styles: la-muse, mathura, .*, udnie-lite/);
    for (const id of STYLE_IDS) expect(body.message).toContain(id);
    expect(body.issues).toEqual([{ path: "style", message: expect.stringMatching(/^Expected one of la-muse, .*, udnie-lite but received "starry-night"\.$/) }]);
  });

  it("paints at ATELIER_STYLE_WORKING_SIZE and answers at the photo's full size", async () => {
    const large = await photoPixels(testPhoto("motorcycle_left.png"), { width: 1100, height: 740 });
    const small = await serviceWith({ ATELIER_MODELS_DIR: modelsDir, ATELIER_STYLE_WORKING_SIZE: "256" });
    const response = await small.service.post("/tools/style-transfer", { imageUrl: dataUrl(await png(large)), style: "mosaic-lite" }, small.key);
    expect(response.status).toBe(200);
    const body = (await response.json()) as StyleBody;
    expect(body.data[0]).toMatchObject({ width: 1100, height: 740 });
    const served = await decode(bytesOfDataUrl(body.data[0]!.url));

    // Same pixels as the worker pipeline painting at 256 px; far from painting at the default 1024.
    const context = createWorkerContext(loadConfig({ ATELIER_MODELS_DIR: modelsDir, LOG_LEVEL: "silent" }), createLogger("silent"));
    try {
      const job = { entry: catalogEntry("mosaic-lite")!, strength: 1, preserveColors: false };
      const at256 = await restyle(large, job, context, { workingSize: 256, tileSize: 1024 });
      const at1024 = await restyle(large, job, context, { workingSize: 1024, tileSize: 1024 });
      expect(at256.trace.working).toEqual({ width: 256, height: 172 });
      expect(difference(served, at256.image).max).toBeLessThanOrEqual(1);
      expect(difference(served, at1024.image).mean).toBeGreaterThan(10);
    } finally {
      await context.runtime.dispose();
    }
  });

  it("refuses disabled non-commercial styles with 503 while MIT styles still work", async () => {
    const strict = await serviceWith({ ATELIER_MODELS_DIR: modelsDir, ATELIER_DISABLE_NON_COMMERCIAL: "true" });
    const refused = await strict.service.post("/tools/style-transfer", { imageUrl: dataUrl(photo), style: "udnie" }, strict.key);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const error = (await refused.json()) as ErrorBody;
    expect(error.code).toBe("MODEL_NOT_INSTALLED");
    expect(error.message).toMatch(/"udnie" is disabled .*commercial use \(ATELIER_DISABLE_NON_COMMERCIAL\)/);
    expect(error.message).toMatch(/Usable style-transfer styles on this server: mathura, matilde-perez, matta, candy-lite, mosaic-lite, rain-princess-lite, udnie-lite\./);

    const models = (await (await fetch(`${strict.service.url}/api/v1/models`)).json()) as { data: Record<string, unknown>[] };
    const byId = new Map(models.data.map((record) => [record.id, record]));
    expect(byId.get("udnie")).toMatchObject({ installed: true, disabled: true, nonCommercial: true });
    expect(byId.get("mathura")).toMatchObject({ installed: true, disabled: false, nonCommercial: false });

    for (const style of ["mathura", "udnie-lite"]) {
      expect((await strict.service.post("/tools/style-transfer", { imageUrl: dataUrl(photo), style }, strict.key)).status).toBe(200);
    }
  });
});

describe("style transfer without installed styles", () => {
  it("answers 503 naming the pull command for a known style (fresh models folder)", async () => {
    const fresh = await serviceWith({});
    const image = await sharp({ create: { width: 10, height: 10, channels: 3, background: "#884422" } }).png().toBuffer();
    const response = await fresh.service.post("/tools/style-transfer", { imageUrl: dataUrl(image), style: "mathura" }, fresh.key);
    expect(response.status).toBe(503);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    const error = (await response.json()) as ErrorBody;
    expect(error.code).toBe("MODEL_NOT_INSTALLED");
    expect(error.message).toBe(
      'The model "mathura" is not installed on this server (not pulled). An operator installs it with `npm run models -- pull mathura`. Usable style-transfer styles on this server: none.',
    );
    // An unknown style is still the client's mistake.
    expect((await fresh.service.post("/tools/style-transfer", { imageUrl: dataUrl(image), style: "nope" }, fresh.key)).status).toBe(400);
  });
});
