/**
 * The network pipeline with the real models: sizes, quality against Lanczos on photo crops (the
 * benchmark's protocol, bench/upscale-quality.ts), alpha, grey, seamless tiling, cancellation.
 * Crops are small so the whole file runs in well under a minute on two cores.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { degrade, psnrY, sharpLanczos } from "../../bench/upscale-quality.js";
import { AtelierError } from "../../core/errors.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import type { RawImage } from "../../workers/image/raw-image.js";
import { toGrey } from "../../workers/upscale/colour-planes.js";
import { upscaleWithNetwork } from "../../workers/upscale/network-pipeline.js";
import {
  imageTiling,
  MAX_TILE_WORKING_BYTES,
  runUpscaleNetwork,
  tileGeometry,
  tileWorkingBytes,
  type NetworkDependencies,
} from "../../workers/upscale/network-upscaler.js";
import { resample } from "../../workers/upscale/resample.js";
import { upscalePath } from "../../models/requests/upscale-choice.js";
import { hasTestPhotos } from "../support/test-assets.js";
import { fileTempDir } from "../support/temp-dir.js";
import { fakeNetwork, mirrorHas, networkDependencies, photoCrop, withAlphaDisc } from "./upscale-fixtures.js";

const entry = (id: string) => catalogEntry(id)!;
const run = (deps: NetworkDependencies, image: RawImage, id: string, scale: number, options: { grey?: boolean; signal?: AbortSignal } = {}) =>
  upscaleWithNetwork(image, entry(id), scale, upscalePath(entry(id), scale)!, deps, options);

describe.skipIf(!hasTestPhotos())("upscale networks on photographs", () => {
  const modelsDir = fileTempDir("test-models");
  let deps: NetworkDependencies;

  beforeAll(async () => {
    deps = await networkDependencies(modelsDir, ["lsdir-compact-x4", "espcn-x3"]);
  });
  afterAll(async () => {
    await deps.runtime.dispose();
  });

  // HR crops of textured regions; each model at a native factor. Thick gets a tiny input (it is slow).
  const cases = [
    { id: "esrgan-slim", scale: 2, photo: "coffee.png", region: { left: 200, top: 120, width: 128, height: 128 }, beatsCentred: false },
    { id: "esrgan-medium", scale: 3, photo: "coffee.png", region: { left: 200, top: 120, width: 96, height: 96 }, beatsCentred: false },
    { id: "esrgan-thick", scale: 4, photo: "astronaut.png", region: { left: 200, top: 160, width: 64, height: 64 }, beatsCentred: true },
    { id: "lsdir-compact-x4", scale: 4, photo: "coffee.png", region: { left: 200, top: 120, width: 128, height: 128 }, beatsCentred: true },
    { id: "espcn-x3", scale: 3, photo: "astronaut.png", region: { left: 200, top: 160, width: 96, height: 96 }, beatsCentred: true },
    { id: "atelier-compact-x4", scale: 4, photo: "coffee.png", region: { left: 200, top: 120, width: 128, height: 128 }, beatsCentred: true },
    { id: "atelier-compact-x2", scale: 2, photo: "coffee.png", region: { left: 200, top: 120, width: 96, height: 96 }, beatsCentred: true },
  ] as const;

  it.each(cases.filter((c) => mirrorHas(c.id)))(
    "$id x$scale: right size, and at least the PSNR of Lanczos on a $photo crop",
    async ({ id, scale, photo, region, beatsCentred }) => {
      const hr = await photoCrop(photo, region);
      const lr = degrade(hr, scale);
      const { image, steps } = await run(deps, lr, id, scale);
      expect([image.width, image.height, image.channels]).toEqual([hr.width, hr.height, 3]);
      expect(steps[0]).toMatch(new RegExp(`^${id} x${scale}`));
      const network = psnrY(hr, image, scale);
      // libvips' lanczos3, half a pixel off (the weaker baseline), and the pixel-centred Lanczos-3 of the
      // service's classical model (the stronger one; ESRGAN slim and medium fall short of it, see
      // bench/upscale-bench.ts).
      const libvips = psnrY(hr, await sharpLanczos(lr, hr.width, hr.height), scale);
      const centred = psnrY(hr, resample(lr, hr.width, hr.height), scale);
      console.log(`[upscale] ${id} x${scale} ${photo}: ${network.toFixed(2)} dB; lanczos3 (libvips) ${libvips.toFixed(2)}, lanczos3 (centred) ${centred.toFixed(2)}`);
      expect(network).toBeGreaterThanOrEqual(libvips);
      if (beatsCentred) expect(network).toBeGreaterThanOrEqual(centred);
    },
  );

  it("keeps alpha: upscaled with Lanczos on its own, transparent corners stay transparent", async () => {
    const rgba = withAlphaDisc(await photoCrop("chelsea.png", { left: 150, top: 60, width: 48, height: 40 }));
    const { image, steps } = await run(deps, rgba, "esrgan-slim", 2);
    expect([image.width, image.height, image.channels]).toEqual([96, 80, 4]);
    expect(steps).toEqual(["esrgan-slim x2", "alpha: lanczos3 x2"]);
    const alphaAt = (x: number, y: number) => image.data[(y * 96 + x) * 4 + 3]!;
    for (const [x0, y0] of [[0, 0], [88, 0], [0, 72], [88, 72]]) {
      for (let y = y0!; y < y0! + 8; y++) for (let x = x0!; x < x0! + 8; x++) expect(alphaAt(x, y), `alpha at ${x},${y}`).toBe(0);
    }
    expect(alphaAt(48, 40)).toBe(255);
    // Colour is the network's, not flattened or premultiplied.
    const rgb = await run(deps, { ...rgba, channels: 3, data: rgba.data.filter((_, i) => i % 4 !== 3) }, "esrgan-slim", 2);
    for (let p = 0; p < 96 * 80; p++) expect(image.data[p * 4]).toBe(rgb.image.data[p * 3]);
  });

  it("gives grey output for grey input, with and without alpha, on RGB and luma networks", async () => {
    const grey = await photoCrop("camera.png", { left: 200, top: 100, width: 40, height: 32 }, { grey: true });
    expect(grey.channels).toBe(1);
    const rgbNetwork = await run(deps, grey, "esrgan-slim", 2);
    expect([rgbNetwork.image.width, rgbNetwork.image.channels]).toEqual([80, 1]);
    const greyAlpha = withAlphaDisc(grey);
    const withAlpha = await run(deps, greyAlpha, "esrgan-slim", 2);
    expect(withAlpha.image.channels).toBe(2);
    for (let p = 0; p < 80 * 64; p++) expect(withAlpha.image.data[p * 2]).toBe(rgbNetwork.image.data[p]);
    // A decoder that hands grey over as RGB: the caller says it is grey.
    const asRgb: RawImage = { ...grey, channels: 3, data: Uint8Array.from({ length: grey.data.length * 3 }, (_, i) => grey.data[Math.floor(i / 3)]!) };
    expect((await run(deps, asRgb, "esrgan-slim", 2, { grey: true })).image.channels).toBe(1);
    if (mirrorHas("espcn-x3")) {
      const luma = await run(deps, grey, "espcn-x3", 3);
      expect([luma.image.width, luma.image.channels]).toEqual([120, 1]);
      expect(luma.steps).toEqual(["espcn-x3 x3"]);
    }
  });

  it.skipIf(!mirrorHas("espcn-x3"))("luma network on colour: the network's luma with Lanczos chroma", async () => {
    const rgb = await photoCrop("coffee.png", { left: 250, top: 150, width: 40, height: 40 });
    const { image, steps } = await run(deps, rgb, "espcn-x3", 3);
    expect(steps).toEqual(["espcn-x3 x3 (luma)", "chroma: lanczos3 x3"]);
    expect(image.channels).toBe(3);
    const luma = await runUpscaleNetwork(toGrey(rgb), entry("espcn-x3"), 3, deps);
    const ours = toGrey(image);
    let worst = 0;
    let unclamped = 0;
    for (let p = 0; p < ours.data.length; p++) {
      // Where a channel hit 0 or 255 the clamp moved the luma; elsewhere only rounding separates them.
      if ([0, 1, 2].some((c) => image.data[p * 3 + c] === 0 || image.data[p * 3 + c] === 255)) continue;
      unclamped++;
      worst = Math.max(worst, Math.abs(ours.data[p]! - luma.data[p]!));
    }
    expect(unclamped).toBeGreaterThan(ours.data.length * 0.9);
    expect(worst).toBeLessThanOrEqual(2); // roundings: network output, each channel, the luma read back
  });

  it("reaches x6 through the x8 network and a Lanczos reduction", async () => {
    const lr = await photoCrop("chelsea.png", { left: 150, top: 60, width: 24, height: 20 });
    const { image, steps } = await run(deps, lr, "esrgan-slim", 6);
    expect([image.width, image.height]).toEqual([144, 120]);
    expect(steps).toEqual(["esrgan-slim x8", "lanczos3 to x6"]);
  });

  it("tiles a 700x500 image at x2 without seams: equal to an untiled run away from the crop's own border", async () => {
    const source = await photoCrop("motorcycle_left.png", { left: 20, top: 0, width: 700, height: 500 });
    const started = performance.now();
    const tiled = (await run(deps, source, "esrgan-slim", 2)).image;
    const tiledMs = performance.now() - started;
    expect([tiled.width, tiled.height]).toEqual([1400, 1000]);
    // Tiles are 192 input pixels every 180: this window holds two overlaps along each axis.
    const window = { left: 90, top: 90, size: 300 };
    const crop: RawImage = { width: window.size, height: window.size, channels: 3, data: new Uint8Array(window.size * window.size * 3) };
    for (let y = 0; y < window.size; y++) {
      const from = ((window.top + y) * 700 + window.left) * 3;
      crop.data.set(source.data.subarray(from, from + window.size * 3), y * window.size * 3);
    }
    const whole = await runUpscaleNetwork(crop, { ...entry("esrgan-slim"), geometry: {} }, 2, deps);
    const margin = 32; // output pixels next to the window's edge see different context in the two runs
    let worst = 0;
    let squared = 0;
    let count = 0;
    for (let y = margin; y < 2 * window.size - margin; y++) {
      for (let x = margin; x < 2 * window.size - margin; x++) {
        for (let c = 0; c < 3; c++) {
          const a = tiled.data[((2 * window.top + y) * 1400 + 2 * window.left + x) * 3 + c]!;
          const b = whole.data[(y * 2 * window.size + x) * 3 + c]!;
          worst = Math.max(worst, Math.abs(a - b));
          squared += (a - b) ** 2;
          count++;
        }
      }
    }
    const psnr = 10 * Math.log10((255 * 255) / (squared / count));
    console.log(`[upscale] tiled vs untiled: max |Δ| ${worst}, PSNR ${psnr.toFixed(1)} dB; 700x500 x2 tiled in ${Math.round(tiledMs)} ms`);
    // Measured: max 4, 61.8 dB. A butted seam shows as tens of levels along the tile edges.
    expect(worst).toBeLessThanOrEqual(8);
    expect(psnr).toBeGreaterThan(50);
  });
});

describe("pipeline mechanics (fake network)", () => {
  it("shrinks tiles where a large factor would make one tile's activations too big", () => {
    expect(tileGeometry(entry("esrgan-slim"), 2)).toEqual({ tileSize: 192, tileOverlap: 12 });
    expect(tileGeometry(entry("esrgan-slim"), 8).tileSize).toBeLessThan(100);
    expect(tileGeometry(entry("esrgan-thick"), 8).tileSize).toBe(192);
    expect(tileGeometry(entry("espcn-x3"), 3)).toEqual(entry("espcn-x3").geometry);
    for (const candidate of ["esrgan-slim", "esrgan-medium", "esrgan-thick", "lsdir-compact-x4", "espcn-x3"]) {
      for (const scale of entry(candidate).upscale!.nativeScales) expect(tileWorkingBytes(entry(candidate), scale)).toBeLessThanOrEqual(MAX_TILE_WORKING_BYTES);
    }
  });

  it("runs an image with no more pixels than one tile as one tile, whatever its longest side", async () => {
    const strip: RawImage = { data: new Uint8Array(300 * 100 * 3).fill(90), width: 300, height: 100, channels: 3 };
    const fake = fakeNetwork();
    await run(fake, strip, "esrgan-slim", 2);
    expect(fake.runs()).toBe(1); // 192 px tiles would take two
    expect(imageTiling(entry("esrgan-slim"), 2, strip)).toEqual({ tileSize: 300, tileOverlap: 12 });
    const square: RawImage = { data: new Uint8Array(200 * 200 * 3).fill(90), width: 200, height: 200, channels: 3 };
    expect(imageTiling(entry("esrgan-slim"), 2, square)).toEqual(tileGeometry(entry("esrgan-slim"), 2));
    expect(imageTiling(entry("espcn-x3"), 3, { width: 300, height: 100 })).toEqual(entry("espcn-x3").geometry);
  });

  it("checks the signal between tiles: an abort stops after the running tile with CANCELLED", async () => {
    const controller = new AbortController();
    const fake = fakeNetwork((runs) => {
      if (runs === 2) controller.abort();
    });
    const image: RawImage = { data: new Uint8Array(300 * 300 * 3).fill(90), width: 300, height: 300, channels: 3 };
    const failure = await run(fake, image, "esrgan-slim", 2, { signal: controller.signal }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AtelierError);
    expect((failure as AtelierError).code).toBe("CANCELLED");
    expect(fake.runs()).toBe(2); // of 4 tiles (2 x 2 at 192 px every 180)
  });

  it("checks the signal during the enlargement after the network: an abort there stops it with CANCELLED", async () => {
    const controller = new AbortController();
    // One tile: the abort comes after the last network run, so only the Lanczos step to x6 can see it.
    const fake = fakeNetwork(() => controller.abort());
    const image: RawImage = { data: new Uint8Array(120 * 90 * 3).fill(77), width: 120, height: 90, channels: 3 };
    const failure = await run(fake, image, "lsdir-compact-x4", 6, { signal: controller.signal }).catch((error: unknown) => error);
    expect(fake.runs()).toBe(1);
    expect(failure).toBeInstanceOf(AtelierError);
    expect((failure as AtelierError).code).toBe("CANCELLED");
  });

  it("returns the image the fake network made, sized and with steps for an enlarged path", async () => {
    const fake = fakeNetwork();
    const image: RawImage = { data: new Uint8Array(20 * 10 * 3).fill(77), width: 20, height: 10, channels: 3 };
    const { image: out, steps } = await run(fake, image, "lsdir-compact-x4", 6);
    expect([out.width, out.height, out.channels]).toEqual([120, 60, 3]);
    expect(out.data.every((value) => value === 77)).toBe(true);
    expect(steps).toEqual(["lsdir-compact-x4 x4", "lanczos3 to x6"]);
  });
});
