/**
 * Source images through the whole service: fetched over real HTTP (with the address policy and its
 * allow-list), bounded while decoding, oriented, stripped of metadata, first frame only.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesOfDataUrl, dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";

let source: http.Server;
let sourceUrl: string;
let png: Buffer;

beforeAll(async () => {
  png = await gradientPng(20, 10);
  source = http.createServer((req, res) => {
    if (req.url === "/image.png") {
      res.writeHead(200, { "content-type": "image/png" });
      res.end(png);
    } else if (req.url === "/to-private") {
      res.writeHead(302, { location: `http://127.0.0.2:${(source.address() as AddressInfo).port}/image.png` });
      res.end();
    } else if (req.url === "/to-image") {
      res.writeHead(301, { location: "/image.png" });
      res.end();
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => source.listen(0, "127.0.0.1", resolve));
  sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => source.close(resolve));
});

async function upscaleVia(service: TestService, key: string, imageUrl: string, scale = 2) {
  const response = await service.post("/tools/upscale", { imageUrl, scale }, key);
  return { status: response.status, body: (await response.json()) as { code?: string; message?: string; data?: { url: string; width: number; height: number }[] } };
}

describe("fetching imageUrl", () => {
  let open: TestService;
  let closed: TestService;
  let openKey: string;
  let closedKey: string;

  beforeAll(async () => {
    open = await startTestService({ ATELIER_ALLOWED_PRIVATE_HOSTS: "127.0.0.1/32" });
    closed = await startTestService();
    openKey = await open.createKey();
    closedKey = await closed.createKey();
  });
  afterAll(async () => {
    await open.close();
    await closed.close();
  });

  it("fetches an allow-listed private source and upscales it", async () => {
    const { status, body } = await upscaleVia(open, openKey, `${sourceUrl}/image.png`);
    expect(status).toBe(200);
    expect(body.data?.[0]).toMatchObject({ width: 40, height: 20 });
  });

  it("follows a redirect within the allow-list", async () => {
    expect((await upscaleVia(open, openKey, `${sourceUrl}/to-image`)).status).toBe(200);
  });

  it("refuses a redirect to an address outside the allow-list", async () => {
    const { status, body } = await upscaleVia(open, openKey, `${sourceUrl}/to-private`);
    expect(status).toBe(400);
    expect(body.code).toBe("INVALID_IMAGE_URL");
    expect(body.message).toMatch(/127\.0\.0\.2/);
  });

  it("answers 502 when the source answers 404", async () => {
    const { status, body } = await upscaleVia(open, openKey, `${sourceUrl}/missing.png`);
    expect(status).toBe(502);
    expect(body.code).toBe("SOURCE_FETCH_FAILED");
    expect(body.message).toMatch(/404/);
  });

  it.each(["http://127.0.0.1:1/x.png", "http://localhost/x.png", "http://[::1]/x.png", "http://169.254.169.254/latest/meta-data", "http://10.0.0.1/x.png", "http://2130706433/x.png", "http://[::ffff:127.0.0.1]/x.png"])(
    "refuses %s without the allow-list",
    async (url) => {
      const { status, body } = await upscaleVia(closed, closedKey, url);
      expect(status).toBe(400);
      expect(body.code).toBe("INVALID_IMAGE_URL");
    },
  );

  it("refuses the same loopback source that the allow-list opens", async () => {
    expect((await upscaleVia(closed, closedKey, `${sourceUrl}/image.png`)).status).toBe(400);
  });
});

describe("decoding limits and normalisation", () => {
  let service: TestService;
  let key: string;

  beforeAll(async () => {
    service = await startTestService({ ATELIER_MAX_INPUT_PIXELS: "10000", ATELIER_MAX_IMAGE_BYTES: "200000" });
    key = await service.createKey();
  });
  afterAll(async () => {
    await service.close();
  });

  it("answers 413 for an image over the pixel limit, naming the limit", async () => {
    const { status, body } = await upscaleVia(service, key, dataUrl(await gradientPng(120, 100)));
    expect(status).toBe(413);
    expect(body.code).toBe("IMAGE_TOO_LARGE");
    expect(body.message).toMatch(/120x100.*ATELIER_MAX_INPUT_PIXELS/);
  });

  it("answers 413 for an image over the byte limit", async () => {
    const noisy = await sharp(Buffer.from(Array.from({ length: 90 * 90 * 3 }, (_, i) => (i * 7919) % 251)), { raw: { width: 90, height: 90, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toBuffer();
    const padded = Buffer.concat([noisy, Buffer.alloc(250_000 - noisy.length)]);
    const { status, body } = await upscaleVia(service, key, dataUrl(padded));
    expect(status).toBe(413);
    expect(body.code).toBe("IMAGE_TOO_LARGE");
  });

  it("answers 422 for a truncated image", async () => {
    const jpeg = await sharp(await gradientPng(64, 64)).jpeg().toBuffer();
    const { status, body } = await upscaleVia(service, key, dataUrl(jpeg.subarray(0, jpeg.length / 2), "image/jpeg"));
    expect(status).toBe(422);
    expect(body.code).toBe("IMAGE_UNDECODABLE");
  });

  it("applies EXIF orientation and strips metadata", async () => {
    // Stored 30x10 with orientation 6 (rotate 90° clockwise to display): displayed 10x30.
    const rotated = await sharp(await gradientPng(30, 10)).jpeg().withMetadata({ orientation: 6, exif: { IFD0: { Copyright: "secret owner" } } }).toBuffer();
    expect((await sharp(rotated).metadata()).orientation).toBe(6);
    const { status, body } = await upscaleVia(service, key, dataUrl(rotated, "image/jpeg"));
    expect(status).toBe(200);
    expect(body.data?.[0]).toMatchObject({ width: 20, height: 60 });
    const output = bytesOfDataUrl(body.data![0]!.url);
    const metadata = await sharp(output).metadata();
    expect(metadata.orientation).toBeUndefined();
    expect(metadata.exif).toBeUndefined();
    expect(output.includes(Buffer.from("secret owner"))).toBe(false);
  });

  it("keeps transparency", async () => {
    const { status, body } = await upscaleVia(service, key, dataUrl(await gradientPng(16, 16, { alpha: true })));
    expect(status).toBe(200);
    const { data, info } = await sharp(bytesOfDataUrl(body.data![0]!.url)).raw().toBuffer({ resolveWithObject: true });
    expect(info.channels).toBe(4);
    expect(data[3]).toBe(0);
    const centre = (16 * 32 + 16) * 4;
    expect(data[centre + 3]).toBe(255);
  });

  it("uses the first frame of an animated image", async () => {
    // Three 12x12 frames: red, green, blue.
    const width = 12;
    const pixels = Buffer.alloc(width * 36 * 3);
    for (let i = 0; i < width * 36; i++) pixels[i * 3 + Math.floor(i / (width * 12))] = 255;
    const gif = await sharp(pixels, { raw: { width, height: 36, channels: 3, pageHeight: 12 } }).gif({ loop: 0 }).toBuffer();
    expect((await sharp(gif).metadata()).pages).toBe(3);
    const { status, body } = await upscaleVia(service, key, dataUrl(gif, "image/gif"));
    expect(status).toBe(200);
    expect(body.data?.[0]).toMatchObject({ width: 24, height: 24 });
    const { data } = await sharp(bytesOfDataUrl(body.data![0]!.url)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const centre = (12 * 24 + 12) * 3;
    expect([data[centre], data[centre + 1], data[centre + 2]]).toEqual([255, 0, 0]);
  });
});
