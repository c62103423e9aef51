/**
 * A REST call's answer is written from the worker's bytes (RequestContext.keepImage: the procedure
 * puts a stand-in in `url` and never makes the data URL); every transport must still get the same
 * image: REST JSON and raw, tRPC over HTTP, and a job, for images large enough to take every slow
 * path (long data URLs in both directions, several gRPC chunks).
 */
import crypto from "node:crypto";
import { createTRPCClient, httpLink } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestContext } from "../../server/context.js";
import { toImageResult } from "../../server/procedures/image-io.js";
import type { AppRouter } from "../../server/router.js";
import { dataUrl } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";

let service: TestService;
let key: string;
let imageUrl: string;
beforeAll(async () => {
  service = await startTestService();
  key = await service.createKey("answers");
  // Noise does not compress: a 300x300 PNG of about 270 KB, upscaled x3 to about 2.4 MB.
  const sharp = (await import("sharp")).default;
  imageUrl = dataUrl(await sharp(crypto.randomBytes(300 * 300 * 3), { raw: { width: 300, height: 300, channels: 3 } }).png().toBuffer());
});
afterAll(() => service.close());

const digest = (bytes: Uint8Array) => crypto.createHash("sha256").update(bytes).digest("hex");
const bytesOf = (url: string) => {
  expect(url).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
  return Buffer.from(url.slice(url.indexOf(",") + 1), "base64");
};

describe("answers written from the worker's bytes", () => {
  it("give REST (JSON and raw), tRPC and jobs the same image", async () => {
    const input = { imageUrl, scale: 3, model: "lanczos" };
    const json = (await (await service.post("/tools/upscale", input, key)).json()) as { data: { url: string }[] };
    const raw = await service.post("/tools/upscale", input, key, { accept: "image/png" });
    const job = (await (await service.post("/tools/upscale", input, key, { prefer: "wait=60" })).json()) as { data: { url: string }[] };
    const trpc = await createTRPCClient<AppRouter>({ links: [httpLink({ url: `${service.url}/trpc`, headers: { authorization: `Bearer ${key}` } })] }).tools.upscale.mutate(input);
    const expected = digest(bytesOf(json.data[0]!.url));
    expect(bytesOf(json.data[0]!.url).length).toBeGreaterThan(1_000_000);
    expect(raw.headers.get("content-type")).toBe("image/png");
    expect(digest(Buffer.from(await raw.arrayBuffer()))).toBe(expected);
    expect(digest(bytesOf(job.data[0]!.url))).toBe(expected);
    expect(digest(bytesOf(trpc.data[0]!.url))).toBe(expected);
  });

  it("the procedure puts the edge's stand-in in url when the edge keeps the bytes, else the data URL", async () => {
    const image = { data: Buffer.from([1, 2, 3, 4]), mimeType: "image/png", width: 1, height: 1 };
    const kept: unknown[] = [];
    const ctx = { keepImage: (bytes: unknown) => (kept.push(bytes), "stand-in") } as unknown as RequestContext;
    expect(await toImageResult(ctx, image)).toEqual({ url: "stand-in", mimeType: "image/png", width: 1, height: 1 });
    expect(kept).toEqual([{ bytes: image.data, mimeType: "image/png" }]);
    expect((await toImageResult({} as RequestContext, image)).url).toBe("data:image/png;base64,AQIDBA==");
  });
});
