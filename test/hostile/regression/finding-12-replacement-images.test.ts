/**
 * Finding 12: `replacement` went through its own, narrower image path: data URLs beyond 2000
 * characters were refused (400), and a 100000x1 replacement image was "corrupt" (422) although the
 * same file works as imageUrl. A replacement image now takes the imageUrl path: any data URL the
 * body limit allows, http(s) URLs under the same cap, and every image size openImage accepts.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { coverFit } from "../../../workers/background/background-fill.js";
import { installModels } from "../../support/installed-models.js";
import { fileTempDir } from "../../support/temp-dir.js";
import { hasMirrorModel } from "../../support/test-assets.js";
import { bytesOfDataUrl, dataUrl, gradientPng } from "../../support/test-images.js";
import { startTestService, type TestService } from "../../support/test-service.js";

const modelsFolder = fileTempDir("test-models");

const LIMITS = { maxBytes: 25 << 20, maxInputPixels: 50_000_000, maxOutputPixels: 4096 * 4096 };

describe("finding 12: replacement images like imageUrl", () => {
  it("cover-fits extreme aspect ratios (100000x1, 1x20000) to the source's size", async () => {
    for (const [width, height] of [[100000, 1], [1, 20000], [3, 2]] as const) {
      const fitted = await coverFit(await gradientPng(width, height), 640, 480, LIMITS);
      expect([fitted.width, fitted.height, fitted.channels]).toEqual([640, 480, 3]);
    }
  });

  describe.runIf(hasMirrorModel("portrait-seg-mediapipe-selfie"))("over REST", () => {
    let service: TestService;
    let key: string;
    beforeAll(async () => {
      service = await startTestService({ ATELIER_MODELS_DIR: await installModels(modelsFolder, ["portrait-selfie"]) });
      key = await service.createKey("replacement", 1000);
    });
    afterAll(() => service?.close());

    const remove = (replacement: string) => service.post("/tools/background-remove", { imageUrl: dataUrl(Buffer.from(sourcePng)), replacement }, key);
    let sourcePng: Buffer;
    beforeAll(async () => {
      sourcePng = await gradientPng(40, 30);
    });

    it("accepts a replacement data URL far beyond 2000 characters", async () => {
      const large = await sharp({ create: { width: 300, height: 200, channels: 3, background: "#3366cc" } }).png({ compressionLevel: 0 }).toBuffer();
      const url = dataUrl(large);
      expect(url.length).toBeGreaterThan(100_000);
      const response = await remove(url);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { replacement: string; data: { url: string }[] };
      expect(body.replacement).toBe("image");
      expect((await sharp(bytesOfDataUrl(body.data[0]!.url)).metadata()).width).toBe(40);
    });

    it("accepts a 100000x1 replacement image", async () => {
      const response = await remove(dataUrl(await gradientPng(100000, 1)));
      expect(response.status).toBe(200);
    });

    it("still caps descriptions at 2000 characters, and http(s) replacement URLs like imageUrl", async () => {
      const long = await remove("a quiet beach at dawn ".repeat(100));
      expect(long.status).toBe(400);
      const longUrl = await remove(`https://images.example/${"p".repeat(2100)}`);
      expect(longUrl.status).toBe(400);
      expect(((await longUrl.json()) as { message: string }).message).toMatch(/replacement image URL .*2048/);
    });
  });
});
