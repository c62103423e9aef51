/**
 * Finding 11: SVG was decoded although messages listed only raster formats, and a 2.4 kB SVG of
 * `<use>` amplification cost up to 6 s of CPU. SVG is refused (422) before any renderer runs, every
 * listed format decodes, and the list is one fact shared by the decoder, its messages and OpenAPI.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCEPTED_IMAGE_FORMAT_NAMES, ACCEPTED_IMAGE_FORMATS } from "../../../core/image-formats.js";
import { dataUrl } from "../../support/test-images.js";
import { startTestService, type TestService } from "../../support/test-service.js";
import { sampleInEveryFormat, useAmplificationSvg } from "../support/image-bombs.js";

let service: TestService;
let key: string;
beforeAll(async () => {
  service = await startTestService();
  key = await service.createKey("svg", 1000);
});
afterAll(() => service?.close());

const upscale = (imageUrl: string) => service.post("/tools/upscale", { imageUrl, scale: 2, model: "lanczos" }, key);

describe("finding 11: SVG refused, accepted formats one fact", () => {
  it("refuses a <use>-amplified SVG with 422 naming the accepted formats, without rendering it", async () => {
    const svg = useAmplificationSvg(7);
    expect(svg.length).toBeLessThan(3000);
    const cpu = process.cpuUsage();
    for (const mediaType of ["image/svg+xml", "image/png"]) {
      const response = await upscale(dataUrl(svg, mediaType));
      const body = (await response.json()) as { code: string; message: string };
      expect([response.status, body.code]).toEqual([422, "IMAGE_UNDECODABLE"]);
      expect(body.message).toContain(ACCEPTED_IMAGE_FORMAT_NAMES);
      expect(body.message).toMatch(/SVG/);
    }
    const used = process.cpuUsage(cpu);
    expect((used.user + used.system) / 1000).toBeLessThan(1500);
  });

  it("decodes every format the list names", async () => {
    const samples = await sampleInEveryFormat();
    expect(Object.keys(samples)).toEqual(ACCEPTED_IMAGE_FORMATS.map((format) => format.name));
    for (const [name, bytes] of Object.entries(samples)) {
      const response = await upscale(dataUrl(bytes));
      expect({ name, status: response.status }).toEqual({ name, status: 200 });
    }
  });

  it("names the same list in the OpenAPI description of imageUrl", async () => {
    const document = await (await fetch(`${service.url}/api/v1/openapi.json`)).text();
    expect(document).toContain(ACCEPTED_IMAGE_FORMAT_NAMES);
  });
});
