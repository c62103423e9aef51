/**
 * The tiny exports written by scripts/make-tiny-diffusion.ts have the tensor signatures of the real
 * Stable Diffusion ONNX exports, and the float32 facade turns their integer and half-precision
 * tensors into float32 ones the runtime feeds, without changing what the graphs compute.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import onnxProto from "onnx-proto";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../core/logger.js";
import { adaptPinnedModel, toDeclaredType } from "../../../workers/generation/diffusion/diffusion-graph.js";
import { EXPORT_FILES } from "../../../models/catalog/diffusion-export-layout.js";
import { declaredValues, float32Facade } from "../../../workers/generation/diffusion/float32-facade.js";
import { ModelRuntime, type FeedMap, type PinnedModel } from "../../../workers/onnx/onnx-runtime.js";
import { writeTinyDiffusion } from "../../../scripts/make-tiny-diffusion.js";
import { hasClipMerges } from "./tiny-export.js";

const folders: string[] = [];
function exportDir(options: Parameters<typeof writeTinyDiffusion>[1]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-tiny-sig-"));
  folders.push(dir);
  writeTinyDiffusion(dir, options);
  return dir;
}
const read = (dir: string, file: string) => declaredValues(fs.readFileSync(path.join(dir, file)));

afterAll(() => {
  for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true });
});

describe.runIf(hasClipMerges())("tiny export layout and signatures", () => {
  it("writes the Optimum folder layout", () => {
    const dir = exportDir({ variant: "sd15" });
    for (const file of [
      EXPORT_FILES.textEncoder,
      EXPORT_FILES.unet,
      EXPORT_FILES.vaeDecoder,
      EXPORT_FILES.schedulerConfig,
      EXPORT_FILES.modelIndex,
      "tokenizer/vocab.json",
      "tokenizer/merges.txt",
      "tokenizer/tokenizer_config.json",
      "tokenizer/special_tokens_map.json",
    ]) {
      expect(fs.existsSync(path.join(dir, file)), file).toBe(true);
    }
  });

  it("Optimum SD 1.5: int32 input_ids, int64 timestep [steps], symbolic batch and sizes, 4 latent channels, 77 tokens", () => {
    const dir = exportDir({ variant: "sd15" });
    expect(read(dir, EXPORT_FILES.textEncoder)).toEqual({
      inputs: [{ name: "input_ids", type: "int32", shape: ["batch_size", "sequence_length"] }],
      outputs: [
        { name: "last_hidden_state", type: "float32", shape: ["batch_size", "sequence_length", 32] },
        { name: "pooler_output", type: "float32", shape: ["batch_size", 32] },
      ],
    });
    expect(read(dir, EXPORT_FILES.unet)).toEqual({
      inputs: [
        { name: "sample", type: "float32", shape: ["batch_size", 4, "height", "width"] },
        { name: "timestep", type: "int64", shape: ["steps"] },
        { name: "encoder_hidden_states", type: "float32", shape: ["batch_size", "sequence_length", 32] },
      ],
      outputs: [{ name: "out_sample", type: "float32", shape: ["batch_size", 4, "height", "width"] }],
    });
    expect(read(dir, EXPORT_FILES.vaeDecoder)).toEqual({
      inputs: [{ name: "latent_sample", type: "float32", shape: ["batch_size", 4, "height_latent", "width_latent"] }],
      outputs: [{ name: "sample", type: "float32", shape: ["batch_size", 3, "height", "width"] }],
    });
  });

  it("diffusers' conversion script: float32 timestep sharing the sample's batch; LCM: timestep_cond; fixed batch; fp16 UNet", () => {
    const legacy = read(exportDir({ variant: "legacy" }), EXPORT_FILES.unet);
    expect(legacy.inputs.map((v) => [v.name, v.type, v.shape])).toEqual([
      ["sample", "float32", ["batch", "channels", "height", "width"]],
      ["timestep", "float32", ["batch"]],
      ["encoder_hidden_states", "float32", ["batch", "sequence", 32]],
    ]);
    const lcm = read(exportDir({ variant: "lcm" }), EXPORT_FILES.unet);
    expect(lcm.inputs.at(-1)).toEqual({ name: "timestep_cond", type: "float32", shape: ["batch_size", 256] });
    const fixed = exportDir({ variant: "sd15", fixedBatch: true });
    expect(read(fixed, EXPORT_FILES.textEncoder).inputs[0]).toEqual({ name: "input_ids", type: "int32", shape: [1, 77] });
    expect(read(fixed, EXPORT_FILES.unet).inputs.map((v) => v.shape[0])).toEqual([1, 1, 1]);
    const half = read(exportDir({ variant: "turbo", half: true }), EXPORT_FILES.unet);
    expect(half.inputs.map((v) => v.type)).toEqual(["float16", "int64", "float16"]);
    expect(half.outputs[0]!.type).toBe("float16");
  });
});

describe.runIf(hasClipMerges())("float32 facade", () => {
  const runtime = new ModelRuntime({ threads: 1, memoryBudgetBytes: 256 * 1024 * 1024, logger: createLogger("silent") });
  afterAll(() => runtime.dispose());

  it("casts integer and float16 boundary tensors and leaves float32 graphs untouched", () => {
    const dir = exportDir({ variant: "turbo", half: true });
    const unet = float32Facade(fs.readFileSync(path.join(dir, EXPORT_FILES.unet)));
    expect(unet.cast).toEqual(["sample", "timestep", "encoder_hidden_states", "out_sample"]);
    const after = declaredValues(unet.bytes);
    expect(after.inputs.map((v) => [v.name, v.type, v.shape])).toEqual(unet.declared.inputs.map((v) => [v.name, "float32", v.shape]));
    expect(after.outputs[0]!.type).toBe("float32");
    const vaeBytes = fs.readFileSync(path.join(dir, EXPORT_FILES.vaeDecoder));
    const vae = float32Facade(vaeBytes);
    expect(vae.cast).toEqual([]);
    expect(vae.bytes).toBe(vaeBytes);
    // A runtime that feeds int64 natively keeps the int64 timestep.
    expect(float32Facade(fs.readFileSync(path.join(dir, EXPORT_FILES.unet)), ["int32", "int64"]).cast).toEqual(["sample", "encoder_hidden_states", "out_sample"]);
  });

  it("gives the same text states through the facade for token ids fed as float32", async () => {
    const dir = exportDir({ variant: "sd15" });
    const facade = float32Facade(fs.readFileSync(path.join(dir, EXPORT_FILES.textEncoder)));
    const ids = Float32Array.from({ length: 2 * 77 }, (_, i) => (i % 77 === 0 ? 49406 : i % 77 < 6 ? 320 + i : 49407));
    const out = await runtime.run("facade-text", async () => facade.bytes, { input_ids: { data: ids, dims: [2, 77] } });
    expect(out.last_hidden_state!.dims).toEqual([2, 77, 32]);
    // Row 0 and row 1 differ only in their token ids, so their states differ.
    expect(out.last_hidden_state!.data.slice(0, 32)).not.toEqual(out.last_hidden_state!.data.slice(77 * 32, 77 * 32 + 32));
  });

  it("refuses models whose weights are in external data files", () => {
    const { onnx } = onnxProto;
    const model = onnx.ModelProto.create({
      irVersion: 8,
      opsetImport: [{ domain: "", version: 17 }],
      graph: {
        name: "external",
        initializer: [{ name: "w", dims: [1], dataType: 1, dataLocation: onnx.TensorProto.DataLocation.EXTERNAL, externalData: [{ key: "location", value: "weights.pb" }] }],
        node: [{ opType: "Add", input: ["x", "w"], output: ["y"] }],
        input: [{ name: "x", type: { tensorType: { elemType: 1, shape: { dim: [{ dimValue: 1 }] } } } }],
        output: [{ name: "y", type: { tensorType: { elemType: 1, shape: { dim: [{ dimValue: 1 }] } } } }],
      },
    });
    expect(() => float32Facade(onnx.ModelProto.encode(model).finish())).toThrow(/external data/);
  });
});

describe("feeds in the session's declared types (the typed-runtime path)", () => {
  it("truncates toward zero into int32 and int64 like numpy's astype", () => {
    const feed = { data: Float32Array.of(999, 957.75, 0.5, 49407), dims: [4] };
    expect([...toDeclaredType({ name: "t", type: "int64", shape: [4] }, feed).data]).toEqual([999n, 957n, 0n, 49407n]);
    expect(toDeclaredType({ name: "ids", type: "int32", shape: [4] }, feed).data).toEqual(Int32Array.of(999, 957, 0, 49407));
    expect(toDeclaredType({ name: "x", type: "float32", shape: [4] }, feed)).toBe(feed);
  });

  it("converts each feed by the pinned model's signature", async () => {
    let seen: FeedMap | undefined;
    const pinned: PinnedModel = {
      key: "fake",
      signature: {
        inputs: [
          { name: "input_ids", type: "int32", shape: ["batch", 77] },
          { name: "sample", type: "float32", shape: [1] },
        ],
        outputs: [],
      },
      run: async (feeds) => {
        seen = feeds;
        return {};
      },
      runToBytes: async () => ({}),
    };
    await adaptPinnedModel(pinned, undefined).run({ input_ids: { data: new Float32Array(77).fill(7), dims: [1, 77] }, sample: { data: Float32Array.of(0.5), dims: [1] } });
    expect(seen!.input_ids!.data).toBeInstanceOf(Int32Array);
    expect(seen!.sample!.data).toBeInstanceOf(Float32Array);
  });
});
