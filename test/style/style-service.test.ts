/**
 * The style-transfer worker with real installed models, below the REST layer: agreement with a bare
 * session on the converted graph, the working size, seamless tiling, strength, preserveColors, alpha.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { OutputFormat } from "../../gen/atelier/image/v1/image.js";
import type { StyleTransferRequest } from "../../gen/atelier/style/v1/style_transfer_service.js";
import type { CatalogEntry, ImageTensorFormat } from "../../models/catalog/catalog-types.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import { mergeAlpha } from "../../workers/image/alpha.js";
import { imageToTensor, tensorToImage } from "../../workers/image/image-tensor.js";
import * as pngEncoder from "../../workers/image/png-encoder.js";
import type { PngEncodeOptions } from "../../workers/image/png-encoder.js";
import type { RawImage } from "../../workers/image/raw-image.js";
import { planAxis } from "../../workers/image/tile-grid.js";
import { ModelRuntime } from "../../workers/onnx/onnx-runtime.js";
import { addReflectedMargin, removeMargin } from "../../workers/style/edge-margin.js";
import { STYLE_FAMILIES } from "../../workers/style/style-families.js";
import { paintingPlan } from "../../workers/style/style-network.js";
import { restyle, styleTransfer } from "../../workers/style/style-service.js";
import { DEFAULT_STYLE_SETTINGS, type StyleSettings } from "../../workers/style/style-settings.js";
import type { WorkerContext } from "../../workers/worker-context.js";
import { createWorkerContext } from "../../workers/worker-server.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel, hasTestPhotos, testPhoto } from "../support/test-assets.js";
import { chromaDistance, chromaMeans, columnSteps, decode, difference, photoPixels, png, transpose } from "./style-images.js";

const modelsFolder = fileTempDir("test-models");

const available = hasMirrorModel("style-fast-ml5") && hasMirrorModel("style-fast-nc16") && hasTestPhotos();
const ML5_MARGIN = 48;
const RGB255: ImageTensorFormat = { layout: "NCHW", channelOrder: "RGB", range: [0, 255] };

let context: WorkerContext;
let modelsDir: string;
let bare: ModelRuntime;
let udnie: CatalogEntry;

function request(image: Uint8Array, fields: Partial<StyleTransferRequest> = {}): StyleTransferRequest {
  return { image: { data: Buffer.from(image), mimeType: "", width: 0, height: 0 }, style: "udnie", strength: undefined, preserveColors: false, outputFormat: OutputFormat.OUTPUT_FORMAT_PNG, ...fields };
}

async function run(image: Uint8Array, fields: Partial<StyleTransferRequest> = {}, settings: StyleSettings = DEFAULT_STYLE_SETTINGS): Promise<RawImage> {
  const response = await styleTransfer(request(image, fields), context, settings, new AbortController().signal);
  return decode(response.image!.data);
}

/** The converted model.onnx of `style`, run with no service around it. */
async function bareSession(style: string, image: RawImage): Promise<RawImage> {
  const file = path.join(modelsDir, style, "model.onnx");
  const outputs = await bare.run(`${style}/bare`, () => fs.readFile(file), { input: imageToTensor(image, RGB255) });
  return tensorToImage(outputs.output!, RGB255);
}

/** The bare session on `image` with the ml5 family's mirrored margin, which is then cut off. */
async function bareFramed(style: string, image: RawImage): Promise<RawImage> {
  return removeMargin(await bareSession(style, addReflectedMargin(image, ML5_MARGIN)), ML5_MARGIN);
}

beforeAll(async () => {
  if (!available) return;
  modelsDir = await installModels(modelsFolder, ["udnie", "mathura", "candy-lite"]);
  context = createWorkerContext(loadConfig({ ATELIER_MODELS_DIR: modelsDir, LOG_LEVEL: "silent" }), createLogger("silent"));
  bare = new ModelRuntime({ threads: 2, memoryBudgetBytes: 1024 * 1024 * 1024, logger: createLogger("silent") });
  udnie = catalogEntry("udnie")!;
});
afterAll(async () => {
  await context?.runtime.dispose();
  await bare?.dispose();
});

describe.skipIf(!available)("style transfer worker", () => {
  it("matches the bare converted session below the working size (ml5 udnie, 224x148)", async () => {
    expect(STYLE_FAMILIES["fast-style-ml5"]!.edgeMargin).toBe(ML5_MARGIN);
    const photo = await photoPixels(testPhoto("chelsea.png"), { width: 224, height: 148 });
    const served = await run(await png(photo));
    expect([served.width, served.height, served.channels]).toEqual([224, 148, 3]);
    // The same network on the same (mirror-framed) pixels: equal up to rounding.
    const framed = difference(served, await bareFramed("udnie", photo));
    // The session on the bare photo paints its frame along the edges (which the margin avoids) and
    // normalises over slightly different statistics: the middle is close, the edges are not.
    const unframed = await bareSession("udnie", photo);
    const whole = difference(served, unframed);
    const middle = difference(removeMargin(served, 24), removeMargin(unframed, 24));
    console.log(
      `[style] udnie 224x148, service vs bare session: framed max ${framed.max} mean ${framed.mean.toFixed(3)}; ` +
        `unframed mean ${whole.mean.toFixed(2)} (middle, 24 px in: ${middle.mean.toFixed(2)}) (0..255)`,
    );
    expect(framed.max).toBeLessThanOrEqual(1);
    expect(middle.mean).toBeLessThan(whole.mean);
  });

  it("paints a large image at the working size and returns it at full size", async () => {
    // 640x440 reduces to 256x176, a multiple of 4 the bare session can take as is.
    const photo = await photoPixels(testPhoto("motorcycle_left.png"), { width: 640, height: 440 });
    const settings = { workingSize: 256, tileSize: 1024 };
    const { image, trace } = await restyle(photo, { entry: udnie, strength: 1, preserveColors: false }, context, settings);
    expect(trace.working).toEqual({ width: 256, height: 176 });
    expect(trace.paint?.tiles).toBe(1);
    expect([image.width, image.height]).toEqual([640, 440]);

    // Seen at the working size, the result is the bare network's painting of the reduced photo, and
    // clearly not a painting made at full size (whose strokes are 2.5 times finer).
    const shrink = async (raw: RawImage) => photoPixels(await png(raw), trace.working);
    const atWorkingSize = await bareFramed("udnie", await shrink(photo));
    const atFullSize = await bareFramed("udnie", photo);
    const resultSmall = await shrink(image);
    const near = difference(resultSmall, atWorkingSize).mean;
    const far = difference(resultSmall, await shrink(atFullSize)).mean;
    console.log(`[style] 640x440 at working size 256: mean |result - working-size painting| ${near.toFixed(2)}, vs full-size painting ${far.toFixed(2)}`);
    expect(near).toBeLessThan(4);
    expect(far).toBeGreaterThan(3 * near);
  });

  it("tiles a working image larger than the tile limit without seams", async () => {
    const photo = await photoPixels(testPhoto("motorcycle_left.png"), { width: 600, height: 404 });
    const settings = { workingSize: 1024, tileSize: 256 };
    const paint = async (overlap: number) => {
      const entry = { ...udnie, geometry: { ...udnie.geometry, tileOverlap: overlap } };
      const { image, trace } = await restyle(photo, { entry, strength: 1, preserveColors: false }, context, settings);
      return { image, tiles: trace.paint!.tiles, plan: paintingPlan(photo, entry, settings) };
    };
    /**
     * Largest mean step across a tile edge (a row or column where a tile starts or ends), relative to
     * the median step of the 16 rows or columns on either side of it, on both axes. Tiles are planned
     * on the framed image, `margin` pixels larger on every side.
     */
    const seamRatio = (image: RawImage, { margin, tiling }: ReturnType<typeof paintingPlan>) => {
      let worst = 0;
      for (const [steps, length] of [[columnSteps(image), image.width], [columnSteps(transpose(image)), image.height]] as const) {
        const tiles = planAxis(length + 2 * margin, { tile: tiling.tileSize!, overlap: tiling.tileOverlap!, multiple: 4, fixed: false });
        const edges = tiles
          .flatMap((t, i) => [...(i > 0 ? [t.start - 1] : []), ...(i < tiles.length - 1 ? [t.start + t.length - 1] : [])])
          .map((edge) => edge - margin);
        for (const edge of edges) {
          const around = [...steps.slice(Math.max(0, edge - 16), edge - 1), ...steps.slice(edge + 2, edge + 17)].sort((a, b) => a - b);
          worst = Math.max(worst, steps[edge]! / around[Math.floor(around.length / 2)]!);
        }
      }
      return worst;
    };
    const blended = await paint(64);
    const hard = await paint(0);
    expect(blended.tiles).toBe(6);
    const blendedRatio = seamRatio(blended.image, blended.plan);
    const hardRatio = seamRatio(hard.image, hard.plan);
    console.log(`[style] 600x404 in ${blended.tiles} tiles: worst step at a tile edge / median step around it: blended ${blendedRatio.toFixed(2)}, unblended ${hardRatio.toFixed(2)}`);
    // Hard tile edges (the control) stand out 4 to 6 times above their surroundings; blended ones do not.
    expect(blendedRatio).toBeLessThan(2);
    expect(hardRatio).toBeGreaterThan(2 * blendedRatio);
  });

  it("strength 0 returns the original, 0.5 lies halfway", async () => {
    const photo = await photoPixels(testPhoto("chelsea.png"), { width: 150, height: 100 });
    const bytes = await png(photo);
    const full = await run(bytes);
    expect(difference(await run(bytes, { strength: 0 }), photo).max).toBe(0);
    const half = await run(bytes, { strength: 0.5 });
    const midpoint: RawImage = { ...photo, data: photo.data.map((v, i) => Math.round((v + full.data[i]!) / 2)) };
    expect(difference(half, midpoint).max).toBeLessThanOrEqual(1);
    const fromPhoto = difference(half, photo).mean;
    expect(fromPhoto).toBeGreaterThan(0.4 * difference(full, photo).mean);
    expect(fromPhoto).toBeLessThan(0.6 * difference(full, photo).mean);
  });

  it.each(["mathura", "candy-lite"])("preserveColors keeps the photo's chroma and takes the texture (%s)", async (style) => {
    const photo = await photoPixels(testPhoto("chelsea.png"), { width: 300, height: 200 });
    const bytes = await png(photo);
    const styled = await run(bytes, { style });
    const kept = await run(bytes, { style, preserveColors: true });
    const [cb, cr] = chromaMeans(photo);
    const [styledCb, styledCr] = chromaMeans(styled);
    const [keptCb, keptCr] = chromaMeans(kept);
    const [styledShift, keptShift] = [chromaDistance(styled, photo), chromaDistance(kept, photo)];
    console.log(
      `[style] ${style} mean Cb/Cr: photo ${cb.toFixed(1)}/${cr.toFixed(1)}, styled ${styledCb.toFixed(1)}/${styledCr.toFixed(1)}, ` +
        `preserveColors ${keptCb.toFixed(1)}/${keptCr.toFixed(1)}; mean per-pixel chroma change: styled ${styledShift.toFixed(1)}, preserveColors ${keptShift.toFixed(1)}`,
    );
    expect(Math.hypot(keptCb - cb, keptCr - cr)).toBeLessThan(1.5);
    expect(keptShift).toBeLessThan(2);
    expect(styledShift).toBeGreaterThan(4 * keptShift + 5);
    // Texture did change: the result is far from the photo.
    expect(difference(kept, photo).mean).toBeGreaterThan(8);
  });

  it("keeps alpha exactly and paints the colour", async () => {
    const photo = await photoPixels(testPhoto("chelsea.png"), { width: 181, height: 121 });
    const alpha = new Uint8Array(181 * 121).map((_, p) => Math.min(255, Math.round(Math.hypot((p % 181) - 90, Math.floor(p / 181) - 60) * 3)));
    const rgba = await sharp(photo.data, { raw: { width: 181, height: 121, channels: 3 } }).joinChannel(Buffer.from(alpha), { raw: { width: 181, height: 121, channels: 1 } }).png().toBuffer();
    const out = await run(rgba);
    expect([out.width, out.height, out.channels]).toEqual([181, 121, 4]);
    const outAlpha = new Uint8Array(181 * 121).map((_, p) => out.data[p * 4 + 3]!);
    expect(Buffer.from(outAlpha).equals(Buffer.from(alpha))).toBe(true);
    const rgb: RawImage = { data: new Uint8Array(181 * 121 * 3).map((_, i) => out.data[Math.floor(i / 3) * 4 + (i % 3)]!), width: 181, height: 121, channels: 3 };
    expect(difference(rgb, photo).mean).toBeGreaterThan(10);
  });

  it("encodes PNG results losslessly in bands: the painting with the source's alpha plane joined", async () => {
    const photo = await photoPixels(testPhoto("chelsea.png"), { width: 181, height: 121 });
    const alpha = new Uint8Array(181 * 121).map((_, p) => Math.min(255, Math.round(Math.hypot((p % 181) - 90, Math.floor(p / 181) - 60) * 3)));
    const rgba = await sharp(photo.data, { raw: { width: 181, height: 121, channels: 3 } }).joinChannel(Buffer.from(alpha), { raw: { width: 181, height: 121, channels: 1 } }).png().toBuffer();
    const encodePng = pngEncoder.encodePng;
    const handed: { image: RawImage; options: PngEncodeOptions }[] = [];
    const spy = vi.spyOn(pngEncoder, "encodePng").mockImplementation((image, options = {}) => {
      handed.push({ image: { ...image, data: Uint8Array.from(image.data) }, options: { ...options, alpha: options.alpha && { ...options.alpha, data: Uint8Array.from(options.alpha.data) } } });
      return encodePng(image, options);
    });
    try {
      const out = await run(rgba, { style: "candy-lite" });
      expect(handed).toHaveLength(1);
      const { image, options } = handed[0]!;
      // The painting as restyle makes it (what was interleaved with the alpha and handed to libvips before).
      const painted = (await restyle(photo, { entry: catalogEntry("candy-lite")!, strength: 1, preserveColors: false }, context, DEFAULT_STYLE_SETTINGS)).image;
      expect(Buffer.from(image.data).equals(Buffer.from(painted.data))).toBe(true);
      expect(Buffer.from(options.alpha!.data).equals(Buffer.from(alpha))).toBe(true);
      expect(options.strategy).toBeUndefined();
      expect(Buffer.from(out.data).equals(Buffer.from(mergeAlpha(image, options.alpha).data))).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it("logs each step's time, so a slow call shows where it went", async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
        callback();
      },
    });
    const bytes = await png(await photoPixels(testPhoto("chelsea.png"), { width: 120, height: 80 }));
    const logged = { ...context, logger: pino({ level: "debug" }, sink) };
    await styleTransfer(request(bytes, { style: "candy-lite" }), logged, DEFAULT_STYLE_SETTINGS, new AbortController().signal);
    const line = lines.find((entry) => entry.msg === "style applied");
    expect(line).toMatchObject({ style: "candy-lite", size: "120x80", tiles: 1 });
    const steps = ["decodeMs", "paintMs", "runMs", "encodeMs"] as const;
    for (const step of steps) expect(line?.[step], step).toEqual(expect.any(Number));
    // The network runs are part of painting.
    expect(line!.runMs as number).toBeLessThanOrEqual(line!.paintMs as number);
  });

  it("answers the gRPC contract's errors before any work", async () => {
    const bytes = await png(await photoPixels(testPhoto("chelsea.png"), { width: 40, height: 30 }));
    const failure = (fields: Partial<StyleTransferRequest>) => styleTransfer(request(bytes, fields), context, DEFAULT_STYLE_SETTINGS, new AbortController().signal);
    await expect(failure({ style: "" })).rejects.toMatchObject({ code: "INVALID_INPUT", message: /Expected a style id.*udnie, mathura|mathura, udnie/ });
    await expect(failure({ strength: 1.5 })).rejects.toMatchObject({ code: "INVALID_INPUT", message: "Expected number between 0 and 1 for strength but received 1.5." });
    await expect(failure({ image: undefined })).rejects.toMatchObject({ code: "INVALID_INPUT", issues: [{ path: "image" }] });
    await expect(failure({ style: "wave" })).rejects.toMatchObject({ code: "MODEL_NOT_INSTALLED", message: /npm run models -- pull wave/ });
    await expect(failure({ style: "starry-night" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      issues: [{ path: "style", message: expect.stringMatching(/^Expected one of la-muse, .*, udnie-lite but received "starry-night"\.$/) }],
    });
  });
});
