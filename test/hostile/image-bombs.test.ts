/**
 * Image bombs made by code, on every image operation that needs no model: refused with a 4xx in
 * bounded time, and the process's memory stays bounded.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { errorCodeOf, rawRequest } from "./support/hostile-service.js";
import { pngBomb, useAmplificationSvg } from "./support/image-bombs.js";

let service: TestService;
let key: string;
beforeAll(async () => {
  service = await startTestService();
  key = await service.createKey("bombs", 100_000);
});
afterAll(() => service?.close());

const upscale = (image: Buffer, mediaType = "image/png", scale = 2) =>
  rawRequest(service.port, "POST", "/api/v1/tools/upscale", { "content-type": "application/json", authorization: `Bearer ${key}` }, JSON.stringify({ imageUrl: dataUrl(image, mediaType), scale, model: "lanczos" }));

describe("image bombs", () => {
  it("refuses each with a 4xx in bounded time and memory", async () => {
    const valid = await gradientPng(64, 64);
    const bombs: [string, Buffer, string?][] = [
      ["PNG declaring 100000x100000 (a few kB)", pngBomb(100_000, 100_000)],
      ["PNG declaring 60000x1000 (over the pixel limit)", pngBomb(60_000, 1000)],
      ["PNG declaring 2^31-1 x 1", pngBomb(2 ** 31 - 1, 1)],
      ["SVG with 10^7 <use> shapes", useAmplificationSvg(7), "image/svg+xml"],
      ["truncated PNG", valid.subarray(0, valid.length / 2)],
      ["PNG signature only", valid.subarray(0, 8)],
      ["random bytes labelled PNG", Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))],
      ["HTML labelled PNG", Buffer.from("<html><body>not an image</body></html>")],
      ["JPEG header with no image", Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0])],
    ];
    const rssBefore = process.memoryUsage().rss;
    for (const [what, bytes, mediaType] of bombs) {
      const answer = await upscale(bytes, mediaType);
      expect({ what, status: answer.status }).toMatchObject({ what, status: expect.toSatisfy((s: number) => s >= 400 && s < 500) });
      expect({ what, ms: answer.ms }).toMatchObject({ what, ms: expect.toSatisfy((ms: number) => ms < 2000) });
    }
    expect((process.memoryUsage().rss - rssBefore) / 2 ** 20).toBeLessThan(256);
  });

  it("refuses an output over the pixel limit before any work (413)", async () => {
    const wide = await sharp({ create: { width: 4000, height: 4000, channels: 3, background: "#808080" } }).png({ compressionLevel: 9 }).toBuffer();
    const answer = await upscale(wide, "image/png", 8);
    expect([answer.status, errorCodeOf(answer.body)]).toEqual([413, "OUTPUT_TOO_LARGE"]);
    expect(answer.ms).toBeLessThan(2000);
  });
});
