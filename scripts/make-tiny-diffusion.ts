/**
 * Writes a tiny Stable Diffusion ONNX export with random weights, laid out exactly like an Optimum
 * export (text_encoder/, unet/, vae_decoder/, tokenizer/, scheduler/) and with the tensor signatures
 * of the real ones: names, element types, ranks, symbolic batch and size dimensions, 4 latent
 * channels, 77 tokens; only the hidden sizes are small (32 instead of 768/1024). Tests and the
 * benchmark run the whole diffusion pipeline on it.
 *
 *   npx tsx scripts/make-tiny-diffusion.ts OUT_DIR [--variant sd15|sd21|turbo|lcm|legacy]
 *     [--fixed-batch] [--half] [--external-data] [--hidden 32] [--channels 8] [--depth 0] [--merges FILE] [--no-tokenizer]
 *
 * Variants: `sd15` (Optimum: int32 input_ids, int64 timestep ["steps"], pad <|endoftext|>), `sd21`
 * (pad "!", v-prediction), `turbo` (sd-turbo's trailing Euler config, pad "!"), `lcm` (UNet takes
 * timestep_cond [batch, 256]), `legacy` (diffusers' conversion script: float32 timestep ["batch"],
 * dims "batch"/"channels"/"sequence"). `--fixed-batch` exports the text encoder and UNet at batch 1,
 * `--half` declares the UNet's float tensors float16 (like the fp16 exports), `--external-data` puts the
 * UNet's weights in unet/model.onnx_data (like full-precision exports over 2 GB). The tokenizer files are
 * derived from OpenAI's CLIP merges (`--merges`, default the mirror's clip-bpe-vocab); with
 * `--no-tokenizer` the merges file is copied to clip/ instead.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";
import onnxProto from "onnx-proto";
import { modelMirror } from "../test/support/test-assets.js";
import { GENERATION_OPTIONS, type CatalogEntry, type GraphSource, type WeightFile } from "../models/catalog/catalog-types.js";
import { attr, OnnxGraphBuilder, type Dim } from "../models/convert/onnx-graph.js";
import { seededRandom } from "../core/seeded-random.js";
import { DIFFUSION_GRAPH_SOURCES, EXPORT_FILES } from "../models/catalog/diffusion-export-layout.js";
import { vocabularyFromClipMerges, vocabularyToFiles } from "../workers/clip-tokenizer/clip-vocabulary.js";
import { INSTALL_RECORD, type InstallRecord } from "../models/store/model-store.js";

const { onnx } = onnxProto;
const DataType = onnx.TensorProto.DataType;

export type TinyVariant = "sd15" | "sd21" | "turbo" | "lcm" | "legacy";
export const TINY_VARIANTS: readonly TinyVariant[] = ["sd15", "sd21", "turbo", "lcm", "legacy"];

export interface TinyDiffusionOptions {
  variant?: TinyVariant;
  /** Text hidden size (real: 768 SD 1.x, 1024 SD 2.x); default 32. */
  hidden?: number;
  /** Inner channels of the tiny UNet and VAE; default 8. */
  channels?: number;
  /** Extra 3x3 convolutions in the UNet (for benchmarks with heavier runs); default 0. */
  depth?: number;
  /** Text encoder and UNet exported at batch 1 (guidance then takes two UNet runs). */
  fixedBatch?: boolean;
  /** UNet float inputs and output declared float16. */
  half?: boolean;
  /** UNet weights in `unet/model.onnx_data` (ONNX external data), as large exports store them. */
  externalData?: boolean;
  /** Write tokenizer/ (vocab.json, merges.txt, configs); false copies the merges file to clip/. */
  tokenizerFiles?: boolean;
  /** OpenAI's bpe_simple_vocab_16e6.txt.gz; default the mirror's clip-bpe-vocab. */
  mergesFile?: string;
  /** Weight seed; default 1. */
  seed?: number;
}

/** Text length of every CLIP text encoder. */
const TEXT_LENGTH = 77;
const LATENT_CHANNELS = 4;
/** Rows of the tiny token embedding (ids are taken modulo this). */
const EMBEDDING_ROWS = 1000;
/** LCM's time_cond_proj_dim. */
const TIMESTEP_COND_SIZE = 256;

export function defaultMergesFile(): string {
  return path.join(modelMirror, "clip-bpe-vocab", "bpe_simple_vocab_16e6.txt.gz");
}

type Random = () => number;

function weights(random: Random, count: number, scale: number): Float32Array {
  return Float32Array.from({ length: count }, () => random() * scale);
}

interface Patch {
  name: string;
  elemType: number;
}

/** Serialises with the element types the builder cannot declare (int32, float16) patched in. */
function finish(graph: OnnxGraphBuilder, patches: readonly Patch[]): Uint8Array {
  const model = graph.toModelProto();
  for (const patch of patches) {
    const value = [...model.graph!.input!, ...model.graph!.output!].find((v) => v.name === patch.name);
    if (!value) throw new Error(`no graph value ${patch.name} to patch`);
    value.type!.tensorType!.elemType = patch.elemType;
  }
  return onnx.ModelProto.encode(model).finish();
}

/** The UNet's data file name next to its graph, as Optimum names it. */
export const UNET_EXTERNAL_DATA = "unet/model.onnx_data";

/**
 * Moves the weight initializers' bytes into one external data file named `location` (next to the
 * graph). Integer tensors (Reshape shapes, axes) stay inline, as exporters keep small tensors:
 * onnxruntime's shape inference reads them before external data is loaded.
 */
function toExternalData(bytes: Uint8Array, location: string): { graph: Uint8Array; data: Uint8Array } {
  const model = onnx.ModelProto.decode(bytes);
  const chunks: Uint8Array[] = [];
  let offset = 0;
  for (const tensor of model.graph!.initializer!) {
    if (tensor.dataType === onnx.TensorProto.DataType.INT64 || tensor.dataType === onnx.TensorProto.DataType.INT32) continue;
    const raw = tensor.rawData ?? new Uint8Array();
    tensor.rawData = new Uint8Array();
    tensor.dataLocation = onnx.TensorProto.DataLocation.EXTERNAL;
    tensor.externalData = [
      { key: "location", value: location },
      { key: "offset", value: String(offset) },
      { key: "length", value: String(raw.length) },
    ];
    chunks.push(raw);
    offset += raw.length;
  }
  return { graph: onnx.ModelProto.encode(model).finish(), data: Buffer.concat(chunks) };
}

interface Names {
  batch: Dim;
  sequence: Dim;
  channels: Dim;
  height: Dim;
  width: Dim;
  latentHeight: Dim;
  latentWidth: Dim;
  timestep: Dim;
}

function dimNames(variant: TinyVariant, fixedBatch: boolean): Names {
  const legacy = variant === "legacy";
  const batch = fixedBatch ? 1 : legacy ? "batch" : "batch_size";
  return {
    batch,
    sequence: fixedBatch ? TEXT_LENGTH : legacy ? "sequence" : "sequence_length",
    channels: legacy ? "channels" : LATENT_CHANNELS,
    height: "height",
    width: "width",
    latentHeight: legacy ? "height" : "height_latent",
    latentWidth: legacy ? "width" : "width_latent",
    timestep: fixedBatch ? 1 : legacy ? "batch" : "steps",
  };
}

function textEncoder(names: Names, hidden: number, random: Random): Uint8Array {
  const g = new OnnxGraphBuilder({ graphName: "text_encoder", producerName: "atelier-tiny-diffusion" });
  g.addInput("input_ids", [names.batch, names.sequence], "int64");
  const ids = g.op("Cast", ["input_ids"], { to: attr.int(DataType.INT64) });
  const rows = g.op("Mod", [ids, g.addInt64Initializer("rows", [], [EMBEDDING_ROWS])]);
  const embedded = g.op("Gather", [g.addFloatInitializer("token_embedding", [EMBEDDING_ROWS, hidden], weights(random, EMBEDDING_ROWS * hidden, 1)), rows], { axis: attr.int(0) });
  const positioned = g.op("Add", [embedded, g.addFloatInitializer("position_embedding", [TEXT_LENGTH, hidden], weights(random, TEXT_LENGTH * hidden, 0.5))]);
  const mixed = g.op("Tanh", [g.op("Add", [g.op("MatMul", [positioned, g.addFloatInitializer("w1", [hidden, hidden], weights(random, hidden * hidden, 1 / Math.sqrt(hidden)))]), g.addFloatInitializer("b1", [hidden], weights(random, hidden, 0.1))])]);
  // Every position sees the whole prompt (real CLIP sees the tokens up to itself).
  const context = g.op("ReduceMean", [mixed], { axes: attr.ints([1]), keepdims: attr.int(1) });
  const withContext = g.op("Add", [mixed, g.op("MatMul", [context, g.addFloatInitializer("w2", [hidden, hidden], weights(random, hidden * hidden, 1 / Math.sqrt(hidden)))])]);
  g.addNode({
    opType: "LayerNormalization",
    inputs: [withContext, g.addFloatInitializer("ln_scale", [hidden], new Float32Array(hidden).fill(1)), g.addFloatInitializer("ln_bias", [hidden], new Float32Array(hidden))],
    outputs: ["last_hidden_state"],
    attributes: { axis: attr.int(-1) },
  });
  g.addNode({ opType: "ReduceMean", inputs: ["last_hidden_state"], outputs: ["pooler_output"], attributes: { axes: attr.ints([1]), keepdims: attr.int(0) } });
  g.addOutput("last_hidden_state", [names.batch, names.sequence, hidden]);
  g.addOutput("pooler_output", [names.batch, hidden]);
  return finish(g, [{ name: "input_ids", elemType: DataType.INT32 }]);
}

function conv(g: OnnxGraphBuilder, input: string, out: number, inChannels: number, kernel: number, random: Random, label: string): string {
  const w = g.addFloatInitializer(`${label}_w`, [out, inChannels, kernel, kernel], weights(random, out * inChannels * kernel * kernel, 1 / Math.sqrt(inChannels * kernel * kernel)));
  const b = g.addFloatInitializer(`${label}_b`, [out], weights(random, out, 0.1));
  const pad = (kernel - 1) / 2;
  return g.op("Conv", [input, w, b], { kernel_shape: attr.ints([kernel, kernel]), pads: attr.ints([pad, pad, pad, pad]) }, label);
}

function unet(variant: TinyVariant, names: Names, hidden: number, channels: number, depth: number, half: boolean, random: Random): Uint8Array {
  const g = new OnnxGraphBuilder({ graphName: "unet", producerName: "atelier-tiny-diffusion" });
  const patches: Patch[] = [];
  /** A float input, declared float16 with an inner cast when `half`. */
  const floatInput = (name: string, dims: Dim[]): string => {
    g.addInput(name, dims);
    if (!half) return name;
    patches.push({ name, elemType: DataType.FLOAT16 });
    return g.op("Cast", [name], { to: attr.int(DataType.FLOAT) });
  };
  const sample = floatInput("sample", [names.batch, names.channels, "height", "width"]);
  const intTimestep = variant !== "legacy" && names.timestep !== 1;
  let timestep: string;
  if (intTimestep) {
    g.addInput("timestep", [names.timestep], "int64");
    timestep = g.op("Cast", ["timestep"], { to: attr.int(DataType.FLOAT) });
  } else {
    timestep = floatInput("timestep", [names.timestep]);
  }
  const context = floatInput("encoder_hidden_states", [names.batch, names.sequence, hidden]);

  const frequencies = Float32Array.from({ length: 8 }, (_, i) => Math.exp(-i * Math.log(1000) / 8) / 10);
  const angles = g.op("Mul", [g.op("Reshape", [timestep, g.addInt64Initializer("t_shape", [2], [-1, 1])]), g.addFloatInitializer("t_freq", [1, 8], frequencies)]);
  const timeEmbedding = g.op("Concat", [g.op("Sin", [angles]), g.op("Cos", [angles])], { axis: attr.int(1) });
  const toChannels = g.addInt64Initializer("to_channels", [4], [-1, channels, 1, 1]);
  const timeBias = g.op("Reshape", [g.op("MatMul", [timeEmbedding, g.addFloatInitializer("t_proj", [16, channels], weights(random, 16 * channels, 0.5))]), toChannels]);
  const pooled = g.op("ReduceMean", [context], { axes: attr.ints([1]), keepdims: attr.int(0) });
  const textBias = g.op("Reshape", [g.op("MatMul", [pooled, g.addFloatInitializer("c_proj", [hidden, channels], weights(random, hidden * channels, 1 / Math.sqrt(hidden)))]), toChannels]);

  let h = g.op("Add", [g.op("Add", [conv(g, sample, channels, LATENT_CHANNELS, 3, random, "conv_in"), timeBias]), textBias]);
  if (variant === "lcm") {
    g.addInput("timestep_cond", [names.batch, TIMESTEP_COND_SIZE]);
    const guidanceBias = g.op("MatMul", ["timestep_cond", g.addFloatInitializer("g_proj", [TIMESTEP_COND_SIZE, channels], weights(random, TIMESTEP_COND_SIZE * channels, 1 / 16))]);
    h = g.op("Add", [h, g.op("Reshape", [guidanceBias, toChannels])]);
  }
  h = g.op("Tanh", [h]);
  for (let i = 0; i < depth; i++) h = g.op("Tanh", [g.op("Add", [h, conv(g, h, channels, channels, 3, random, `conv_mid${i}`)])]);
  const out = conv(g, h, LATENT_CHANNELS, channels, 3, random, "conv_out");
  if (half) {
    g.addNode({ opType: "Cast", inputs: [out], outputs: ["out_sample"], attributes: { to: attr.int(DataType.FLOAT16) } });
    patches.push({ name: "out_sample", elemType: DataType.FLOAT16 });
  } else {
    g.addNode({ opType: "Identity", inputs: [out], outputs: ["out_sample"] });
  }
  g.addOutput("out_sample", [names.batch, names.channels, "height", "width"]);
  return finish(g, patches);
}

function vaeDecoder(names: Names, channels: number, random: Random): Uint8Array {
  const g = new OnnxGraphBuilder({ graphName: "vae_decoder", producerName: "atelier-tiny-diffusion" });
  const batch = names.batch === 1 ? "batch_size" : names.batch;
  g.addInput("latent_sample", [batch, names.channels, names.latentHeight, names.latentWidth]);
  const h = g.op("Tanh", [conv(g, "latent_sample", channels, LATENT_CHANNELS, 1, random, "post_quant")]);
  const up = g.op("Resize", [h, "", g.addFloatInitializer("scales", [4], Float32Array.of(1, 1, 8, 8))], {
    mode: attr.string("nearest"),
    coordinate_transformation_mode: attr.string("asymmetric"),
    nearest_mode: attr.string("floor"),
  });
  g.addNode({ opType: "Tanh", inputs: [conv(g, up, 3, channels, 3, random, "conv_out")], outputs: ["sample"] });
  g.addOutput("sample", [batch, 3, names.height, names.width]);
  return finish(g, []);
}

function schedulerConfig(variant: TinyVariant): Record<string, unknown> {
  const common = { beta_start: 0.00085, beta_end: 0.012, beta_schedule: "scaled_linear", num_train_timesteps: 1000, trained_betas: null, clip_sample: false };
  switch (variant) {
    case "sd15":
    case "legacy":
      return { _class_name: "PNDMScheduler", _diffusers_version: "0.6.0", ...common, set_alpha_to_one: false, skip_prk_steps: true, steps_offset: 1 };
    case "sd21":
      return { _class_name: "DDIMScheduler", _diffusers_version: "0.8.0", ...common, prediction_type: "v_prediction", set_alpha_to_one: false, steps_offset: 1 };
    case "turbo":
      return { _class_name: "EulerDiscreteScheduler", _diffusers_version: "0.24.0", ...common, interpolation_type: "linear", prediction_type: "epsilon", steps_offset: 1, timestep_spacing: "trailing", use_karras_sigmas: false };
    case "lcm":
      return { _class_name: "LCMScheduler", _diffusers_version: "0.22.0", ...common, original_inference_steps: 50, prediction_type: "epsilon", set_alpha_to_one: true, steps_offset: 1, timestep_scaling: 10, timestep_spacing: "leading" };
  }
}

/** Defaults a catalog record gives each variant (`details.diffusion`). */
export function tinyDefaults(variant: TinyVariant): { scheduler: string; steps: number; guidanceScale: number } {
  switch (variant) {
    case "turbo":
      return { scheduler: "turbo", steps: 1, guidanceScale: 0 };
    case "lcm":
      return { scheduler: "lcm", steps: 4, guidanceScale: 8 };
    default:
      return { scheduler: "dpmpp-2m-karras", steps: 4, guidanceScale: 7.5 };
  }
}

function writeFile(root: string, name: string, data: Uint8Array | string, written: Map<string, Buffer>): void {
  const file = path.join(root, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, bytes);
  written.set(name, bytes);
}

/** Writes the export into `dir` (created); returns its files with sizes and sha256. */
export function writeTinyDiffusion(dir: string, options: TinyDiffusionOptions = {}): WeightFile[] {
  const variant = options.variant ?? "sd15";
  const hidden = options.hidden ?? 32;
  const channels = options.channels ?? 8;
  const names = dimNames(variant, options.fixedBatch ?? false);
  const gaussian = seededRandom(options.seed ?? 1);
  const random = () => gaussian.normal();
  const written = new Map<string, Buffer>();
  const mergesFile = options.mergesFile ?? defaultMergesFile();
  const sd2 = variant === "sd21" || variant === "turbo";

  writeFile(dir, EXPORT_FILES.textEncoder, textEncoder(names, hidden, random), written);
  const unetBytes = unet(variant, names, hidden, channels, options.depth ?? 0, options.half ?? false, random);
  if (options.externalData) {
    const { graph, data } = toExternalData(unetBytes, path.basename(UNET_EXTERNAL_DATA));
    writeFile(dir, EXPORT_FILES.unet, graph, written);
    writeFile(dir, UNET_EXTERNAL_DATA, data, written);
  } else {
    writeFile(dir, EXPORT_FILES.unet, unetBytes, written);
  }
  writeFile(dir, EXPORT_FILES.vaeDecoder, vaeDecoder(names, channels, random), written);
  writeFile(dir, EXPORT_FILES.schedulerConfig, `${JSON.stringify(schedulerConfig(variant), null, 2)}\n`, written);
  writeFile(dir, EXPORT_FILES.vaeConfig, `${JSON.stringify({ _class_name: "AutoencoderKL", latent_channels: 4, scaling_factor: 0.18215 }, null, 2)}\n`, written);
  const unetConfig: Record<string, unknown> = { _class_name: "UNet2DConditionModel", in_channels: 4, out_channels: 4, cross_attention_dim: hidden };
  if (variant === "lcm") unetConfig.time_cond_proj_dim = TIMESTEP_COND_SIZE;
  writeFile(dir, EXPORT_FILES.unetConfig, `${JSON.stringify(unetConfig, null, 2)}\n`, written);
  const modelIndex = { _class_name: "ORTStableDiffusionPipeline", text_encoder: ["optimum", "ORTModelTextEncoder"], unet: ["optimum", "ORTModelUnet"], vae_decoder: ["optimum", "ORTModelVaeDecoder"], tokenizer: ["transformers", "CLIPTokenizer"] };
  writeFile(dir, EXPORT_FILES.modelIndex, `${JSON.stringify(modelIndex, null, 2)}\n`, written);

  const merges = fs.readFileSync(mergesFile);
  if (options.tokenizerFiles ?? true) {
    const { vocabJson, mergesText } = vocabularyToFiles(vocabularyFromClipMerges(gunzipSync(merges).toString("utf8")));
    const padToken = sd2 ? "!" : "<|endoftext|>";
    const special = { bos_token: "<|startoftext|>", eos_token: "<|endoftext|>", unk_token: "<|endoftext|>", pad_token: padToken };
    writeFile(dir, "tokenizer/vocab.json", vocabJson, written);
    writeFile(dir, "tokenizer/merges.txt", mergesText, written);
    writeFile(dir, "tokenizer/special_tokens_map.json", `${JSON.stringify(special, null, 2)}\n`, written);
    const config = {
      tokenizer_class: "CLIPTokenizer",
      model_max_length: TEXT_LENGTH,
      do_lower_case: true,
      errors: "replace",
      ...special,
      // SD 2.x configs write tokens as AddedToken objects; both forms are read.
      pad_token: sd2 ? { __type: "AddedToken", content: "!", lstrip: false, normalized: true, rstrip: false, single_word: false } : padToken,
    };
    writeFile(dir, "tokenizer/tokenizer_config.json", `${JSON.stringify(config, null, 2)}\n`, written);
  } else {
    writeFile(dir, EXPORT_FILES.clipMerges, merges, written);
  }
  return [...written].map(([name, bytes]) => ({
    name,
    size: bytes.byteLength,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    origin: { mirror: `tiny-diffusion/${name}` },
  }));
}

/**
 * A tiny export installed as the model `id` in `modelsDir` (files plus the install record, as
 * `npm run models -- pull` leaves them), and a catalog record for it.
 */
export function installTinyDiffusion(modelsDir: string, id: string, options: TinyDiffusionOptions = {}): CatalogEntry {
  const folder = path.join(modelsDir, id);
  fs.rmSync(folder, { recursive: true, force: true });
  const files = writeTinyDiffusion(folder, options);
  const record: InstallRecord = {
    id,
    installedAt: new Date().toISOString(),
    files: Object.fromEntries(files.map((file) => [file.name, file.sha256])),
    converted: [],
    from: "scripts/make-tiny-diffusion.ts",
  };
  fs.writeFileSync(path.join(folder, INSTALL_RECORD), `${JSON.stringify(record, null, 2)}\n`);
  const variant = options.variant ?? "sd15";
  return {
    id,
    task: "generate",
    name: `Tiny random ${variant} export (tests only)`,
    description: "Random weights with the tensor signatures of a Stable Diffusion ONNX export.",
    license: "MIT",
    nonCommercial: false,
    source: { kind: "files", files },
    // With `externalData` the UNet's weights sit in a data file beside it, so the loader hands it over by path.
    graphs: options.externalData
      ? { ...DIFFUSION_GRAPH_SOURCES, unet: { onnx: EXPORT_FILES.unet, externalData: [UNET_EXTERNAL_DATA] } as GraphSource }
      : DIFFUSION_GRAPH_SOURCES,
    generation: { defaultWidth: 64, defaultHeight: 64, minSize: 8, maxWidth: 1024, maxHeight: 1024, sizeMultiple: 8, options: GENERATION_OPTIONS },
    photographic: false,
    details: { family: "stable-diffusion", diffusion: tinyDefaults(variant) },
  };
}

function main(argv: string[]): void {
  const out = argv.find((arg, i) => !arg.startsWith("--") && !(argv[i - 1] ?? "").match(/^--(variant|hidden|channels|depth|merges|seed)$/));
  if (!out) {
    console.error("usage: npx tsx scripts/make-tiny-diffusion.ts OUT_DIR [--variant sd15|sd21|turbo|lcm|legacy] [--fixed-batch] [--half] [--external-data] [--hidden N] [--channels N] [--depth N] [--merges FILE] [--no-tokenizer]");
    process.exitCode = 2;
    return;
  }
  const value = (flag: string) => {
    const index = argv.indexOf(flag);
    return index >= 0 ? argv[index + 1] : undefined;
  };
  const variant = (value("--variant") ?? "sd15") as TinyVariant;
  if (!TINY_VARIANTS.includes(variant)) throw new Error(`Expected one of ${TINY_VARIANTS.join(", ")} for --variant but received ${variant}`);
  const numberFlag = (flag: string) => (value(flag) === undefined ? undefined : Number(value(flag)));
  const options: TinyDiffusionOptions = {
    variant,
    fixedBatch: argv.includes("--fixed-batch"),
    half: argv.includes("--half"),
    externalData: argv.includes("--external-data"),
    tokenizerFiles: !argv.includes("--no-tokenizer"),
  };
  const hidden = numberFlag("--hidden");
  const channels = numberFlag("--channels");
  const depth = numberFlag("--depth");
  const seed = numberFlag("--seed");
  if (hidden !== undefined) options.hidden = hidden;
  if (channels !== undefined) options.channels = channels;
  if (depth !== undefined) options.depth = depth;
  if (seed !== undefined) options.seed = seed;
  const merges = value("--merges");
  if (merges !== undefined) options.mergesFile = merges;
  const files = writeTinyDiffusion(path.resolve(out), options);
  for (const file of files) console.log(`${file.sha256}  ${String(file.size).padStart(9)}  ${file.name}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) main(process.argv.slice(2));
