/**
 * Graphs that convert their own pixels (byte-image-graph.ts) against the JavaScript conversions they
 * replace (image-tensor.ts): the input conversion gives imageToTensor's float32 values exactly, for
 * every sample value; and the same real network, on a real photo, once with float tensors converted
 * in JavaScript and once with bytes in and out, must give the same bytes.
 */
import os from "node:os";
import onnxProto from "onnx-proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import type { CatalogEntry, ImageTensorFormat } from "../../models/catalog/catalog-types.js";
import { OnnxGraphBuilder } from "../../models/convert/onnx-graph.js";
import { byteSessionKey, withByteImageIO } from "../../workers/image/byte-image-graph.js";
import { byteConversion, imageToTensor, toSample, type ByteConversion } from "../../workers/image/image-tensor.js";
import type { RawImage } from "../../workers/image/raw-image.js";
import { runOneByteTile, runTiled, runTiledBytes } from "../../workers/image/tiling.js";
import { planAxis } from "../../workers/image/tile-grid.js";
import { ModelLoader } from "../../workers/model-loader.js";
import { ModelStore } from "../../models/store/model-store.js";
import { ModelRuntime } from "../../workers/onnx/onnx-runtime.js";
import { styleFamily } from "../../workers/style/style-families.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel, hasTestPhotos } from "../support/test-assets.js";
import { photoCrop } from "../upscale/upscale-fixtures.js";

const modelsFolder = fileTempDir("test-models");

const { onnx } = onnxProto;

/** 16x16 RGB pixels holding every sample value 0..255 in every channel (in different places). */
function everySample(): RawImage {
  const data = new Uint8Array(256 * 3);
  for (let v = 0; v < 256; v++) data.set([v, 255 - v, (v * 7) % 256], v * 3);
  return { data, width: 16, height: 16, channels: 3 };
}

/**
 * A "network" that shows whether its input is exactly `expected`: it answers the sample 128 where
 * its input equals `expected` and, where it is off by as little as one float32 ulp, a sample that
 * clamps to 0 or 255 (the difference times 2^32; the smallest input value above 0 is 1/255).
 */
function exactnessProbe(expected: { data: Float32Array; dims: number[] }, outputFactor: number): Uint8Array {
  const graph = new OnnxGraphBuilder({ graphName: "exactness_probe" });
  const dims = expected.dims.map((dim, axis) => (axis === 0 ? 1 : dim));
  graph.addInput("image", dims);
  const target = graph.addFloatInitializer("expected", dims, expected.data);
  const difference = graph.op("Sub", ["image", target]);
  const amplified = graph.op("Mul", [difference, graph.addScalar("gain", 2 ** 32)]);
  graph.addNode({ opType: "Add", inputs: [amplified, graph.addScalar("middle", 128 / outputFactor)], outputs: ["painted"] });
  graph.addOutput("painted", dims);
  return graph.toBytes();
}

const opTypes = (graph: Uint8Array) => (onnx.ModelProto.decode(graph).graph?.node ?? []).map((node) => node.opType);

describe("the byte graph's input conversion", () => {
  let runtime: ModelRuntime;
  beforeAll(() => {
    runtime = new ModelRuntime({ threads: 2, memoryBudgetBytes: 256 * 1024 ** 2, logger: createLogger("silent") });
  });
  afterAll(async () => {
    await runtime?.dispose();
  });

  /** Bytes of `everySample()` through the probe of `expected`, rewritten to take and give bytes with `conversion`. */
  async function probe(key: string, conversion: ByteConversion, expected: { data: Float32Array; dims: number[] }) {
    const graph = withByteImageIO(exactnessProbe(expected, conversion.outputFactor), conversion, "image", "painted");
    const image = everySample();
    const outputs = await runtime.model(key, async () => graph).pin((model) => model.runToBytes({ image: { data: image.data, dims: [1, 16, 16, 3] } }));
    return { graph, samples: [...new Set(outputs.painted!.data)] };
  }

  const formats: [string, ImageTensorFormat][] = [
    ["0..255, planar (the styles, ESRGAN)", { layout: "NCHW", channelOrder: "RGB", range: [0, 255] }],
    ["0..1, planar (LSDIR)", { layout: "NCHW", channelOrder: "RGB", range: [0, 1] }],
    ["0..1, interleaved", { layout: "NHWC", channelOrder: "RGB", range: [0, 1] }],
  ];
  it.each(formats)("gives imageToTensor's values exactly, with a Cast and at most a Div instead of a table lookup: %s", async (label, format) => {
    const { graph, samples } = await probe(`probe ${label}`, byteConversion(format)!, imageToTensor(everySample(), format));
    expect(samples).toEqual([128]);
    expect(opTypes(graph)).not.toContain("Gather");
    expect(opTypes(graph).slice(0, 2)).toEqual(format.range[1] === 255 ? ["Cast", "Transpose"] : ["Cast", "Div"]);
  });

  it("looks the values up in the table when no division gives them", async () => {
    const inputTable = Float32Array.from({ length: 256 }, (_, v) => v * 0.3 + 0.25);
    const conversion: ByteConversion = { layout: "NCHW", inputTable, outputFactor: 1 };
    const image = everySample();
    // The table's values in NCHW order, as the network must receive them.
    const expected = new Float32Array(256 * 3);
    for (let p = 0; p < 256; p++) for (let c = 0; c < 3; c++) expected[c * 256 + p] = inputTable[image.data[p * 3 + c]!]!;
    const { graph, samples } = await probe("probe lookup", conversion, { data: expected, dims: [1, 3, 16, 16] });
    expect(samples).toEqual([128]);
    expect(opTypes(graph)).toContain("Gather");
  });
});

const available = hasTestPhotos() && hasMirrorModel("superres-lsdir-compact-x4") && hasMirrorModel("style-fast-ml5") && hasMirrorModel("style-fast-nc16");

/** Samples that differ, and by how much at most. */
function compare(a: RawImage, b: RawImage): { differing: number; max: number } {
  expect([b.width, b.height, b.channels]).toEqual([a.width, a.height, a.channels]);
  let differing = 0;
  let max = 0;
  for (let i = 0; i < a.data.length; i++) {
    const d = Math.abs(a.data[i]! - b.data[i]!);
    if (d > 0) differing++;
    max = Math.max(max, d);
  }
  return { differing, max };
}

describe.skipIf(!available)("networks with bytes in and out, against the JavaScript conversions", () => {
  let runtime: ModelRuntime;
  let models: ModelLoader;

  beforeAll(async () => {
    const dir = await installModels(modelsFolder, ["lsdir-compact-x4", "udnie", "candy-lite"]);
    models = new ModelLoader(new ModelStore(dir), { disableNonCommercial: false });
    runtime = new ModelRuntime({ threads: os.availableParallelism(), memoryBudgetBytes: 2 * 1024 ** 3, logger: createLogger("silent") });
  });
  afterAll(async () => {
    await runtime?.dispose();
  });

  /** `image` through graph `graph` of `entry` at `scale`, in one tile, both ways. */
  async function bothWays(entry: CatalogEntry, graph: string, scale: number, image: RawImage, prepare = (bytes: Uint8Array) => bytes) {
    const format = entry.imageFormat!;
    const input = entry.signature!.inputs[0]!.name;
    const output = entry.signature!.outputs[0]!.name;
    const conversion = byteConversion(format)!;
    const load = async () => prepare(await models.graphLoader(entry, graph)());
    const key = models.sessionKey(entry, graph);
    const whole = { tileSize: Math.max(image.width, image.height), sizeMultiple: entry.geometry?.sizeMultiple };
    const floats = await runtime.model(key, load).pin((model) =>
      runTiled(image, { format, scale, geometry: whole, runTile: async (tile) => (await model.run({ [input]: tile }))[output]! }),
    );
    const bytes = await runtime
      .model(byteSessionKey(key), async () => withByteImageIO(await load(), conversion, input, output))
      .pin((model) => runOneByteTile(image, { scale, geometry: whole, runTile: async (tile) => (await model.runToBytes({ [input]: tile }))[output]! }));
    return { floats, bytes };
  }

  it("lsdir-compact-x4 (0..1 tensors) gives the same bytes on a 256x256 photo crop (1 MP out)", async () => {
    const photo = await photoCrop("coffee.png", { left: 150, top: 100, width: 256, height: 256 });
    const { floats, bytes } = await bothWays(catalogEntry("lsdir-compact-x4")!, "x4", 4, photo);
    expect(bytes.width).toBe(1024);
    expect(compare(floats, bytes)).toEqual({ differing: 0, max: 0 });
  });

  it("lsdir-compact-x4 in several tiles differs from the float tiles by at most 1, only where tiles overlap", async () => {
    const entry = catalogEntry("lsdir-compact-x4")!;
    const format = entry.imageFormat!;
    const photo = await photoCrop("coffee.png", { left: 100, top: 80, width: 180, height: 130 });
    const geometry = { tileSize: 96, tileOverlap: 16 };
    const key = models.sessionKey(entry, "x4");
    const load = models.graphLoader(entry, "x4");
    const floats = await runtime.model(key, load).pin((model) =>
      runTiled(photo, { format, scale: 4, geometry, runTile: async (tile) => (await model.run({ input: tile })).output! }),
    );
    const bytes = await runtime
      .model(byteSessionKey(key), async () => withByteImageIO(await load(), byteConversion(format)!, "input", "output"))
      .pin((model) => runTiledBytes(photo, { scale: 4, geometry, runTile: async (tile) => (await model.runToBytes({ input: tile })).output! }));
    const bands = (size: number) =>
      planAxis(size, { tile: 96, overlap: 16, multiple: 1, fixed: false }).flatMap((tile) => (tile.overlapBefore > 0 ? [[tile.start * 4, (tile.start + tile.overlapBefore) * 4]] : []));
    const [columnBands, rowBands] = [bands(180), bands(130)];
    expect(columnBands.length * rowBands.length).toBeGreaterThan(0);
    const inside = (at: number, ranges: number[][]) => ranges.some(([from, to]) => at >= from! && at < to!);
    let outside = 0;
    for (let y = 0; y < bytes.height; y++) {
      for (let x = 0; x < bytes.width; x++) {
        if (inside(x, columnBands) || inside(y, rowBands)) continue;
        for (let c = 0; c < 3; c++) if (bytes.data[(y * bytes.width + x) * 3 + c] !== floats.data[(y * bytes.width + x) * 3 + c]) outside++;
      }
    }
    expect(outside).toBe(0);
    // Inside the bands a blended sample moves by less than half a step before its rounding: 1 at most,
    // unless a tile's output left 0..255 there (the byte graph clamps each tile before the blend, the
    // float path after it): measured, 5 samples of 1.1 M differ by 2, 49.5 k by 1.
    let beyondOne = 0;
    for (let i = 0; i < bytes.data.length; i++) if (Math.abs(bytes.data[i]! - floats.data[i]!) > 1) beyondOne++;
    const { differing, max } = compare(floats, bytes);
    expect(max).toBeLessThanOrEqual(2);
    expect(beyondOne).toBeLessThan(bytes.data.length / 50_000);
    expect(differing).toBeGreaterThan(0);
  });

  it("esrgan-slim x2 (0..255 tensors) gives the same bytes on a padded photo crop", async () => {
    // 90x70 is padded to the size multiple inside the tile and cropped back.
    const photo = await photoCrop("astronaut.png", { left: 200, top: 160, width: 90, height: 70 });
    const { floats, bytes } = await bothWays(catalogEntry("esrgan-slim")!, "x2", 2, photo);
    expect(compare(floats, bytes)).toEqual({ differing: 0, max: 0 });
  });

  it("the style udnie (ml5 family) gives the same bytes on a 448x300 photo crop", async () => {
    const photo = await photoCrop("chelsea.png", { left: 0, top: 0, width: 448, height: 300 });
    const { floats, bytes } = await bothWays(catalogEntry("udnie")!, "default", 1, photo);
    expect(compare(floats, bytes)).toEqual({ differing: 0, max: 0 });
  });

  it("the style candy-lite (nc16 family, opset 9, made size-independent first) gives the same bytes", async () => {
    const entry = catalogEntry("candy-lite")!;
    const photo = await photoCrop("coffee.png", { left: 0, top: 0, width: 400, height: 300 });
    const { floats, bytes } = await bothWays(entry, "default", 1, photo, styleFamily(entry).prepareGraph);
    expect(compare(floats, bytes)).toEqual({ differing: 0, max: 0 });
  });
});

describe("the byte graph's rounding", () => {
  /** The float32 `steps` representable values away from `x` (negative: below). */
  function float32Step(x: number, steps: number): number {
    const f = new Float32Array([x]);
    const bits = new Int32Array(f.buffer);
    bits[0]! += x >= 0 ? steps : -steps;
    return f[0]!;
  }

  it("rounds the float32 values around every half up, as toSample does, and clamps to 0..255", async () => {
    // Every k + 1/2 with the four float32 values on each side, the values around the binade edges
    // (0.25, 0.5, 1, 2, ... 128), the tie at 0.5 and the value just below it, and out-of-range ones.
    const values: number[] = [-3, -0.2, 0, 255, 255.2, 255.5, 256, 300, 1e6];
    for (let k = 0; k <= 255; k++) for (let step = -4; step <= 4; step++) values.push(float32Step(k + 0.5, step));
    for (let e = -2; e <= 7; e++) for (let step = -4; step <= 4; step++) values.push(float32Step(2 ** e, step));
    const width = values.length;
    // A network that ignores its input and returns `values` in channel 0 (channels 1 and 2: zero).
    const graph = new OnnxGraphBuilder({ graphName: "constant_output" });
    graph.addInput("image", [1, 3, 1, "w"]);
    const data = new Float32Array(3 * width);
    data.set(values);
    const constant = graph.addFloatInitializer("values", [1, 3, 1, width], data);
    const zero = graph.addScalar("zero", 0);
    graph.addNode({ opType: "Mul", inputs: ["image", zero], outputs: ["nothing"] });
    graph.addNode({ opType: "Add", inputs: ["nothing", constant], outputs: ["out"] });
    graph.addOutput("out", [1, 3, 1, "w"]);
    const conversion = byteConversion({ layout: "NCHW", channelOrder: "RGB", range: [0, 255] })!;
    const runtime = new ModelRuntime({ threads: 1, memoryBudgetBytes: 256 * 1024 ** 2, logger: createLogger("silent") });
    try {
      const model = runtime.model("test/constant-output:bytes", async () => withByteImageIO(graph.toBytes(), conversion, "image", "out"));
      const result = (await model.pin((session) => session.runToBytes({ image: { data: new Uint8Array(width * 3), dims: [1, 1, width, 3] } })))["out"]!;
      const got = values.map((_, i) => result.data[i * 3]!);
      expect(got).toEqual(values.map((value) => toSample(Math.fround(value))));
      // The case that rounding as floor(x + 0.5) in float32 gets wrong is among them.
      expect(values).toContain(float32Step(0.5, -1));
      expect(got[values.indexOf(float32Step(0.5, -1))]).toBe(0);
    } finally {
      await runtime.dispose();
    }
  });
});
