/**
 * One UNet evaluation per denoising step, fitted to the export's signature:
 *
 * - `timestep` may be float or int64, shaped `[1]`, `[batch]` (the same symbol as the sample's
 *   batch, as diffusers' conversion script writes it) or a scalar `[]`; its own symbol (Optimum's
 *   `steps`) gets one value, as the reference pipelines feed it;
 * - a dynamic batch takes the unconditional and conditional rows together (uncond first, as
 *   diffusers concatenates them); a graph exported at batch 1 runs once per row;
 * - LCM UNets take `timestep_cond`, the guidance scale embedding.
 */
import { AtelierError } from "../../../core/errors.js";
import type { TensorMap, TensorSignature } from "../../onnx/tensor-data.js";
import type { DiffusionGraph } from "./diffusion-graph.js";

export const UNET_INPUTS = { sample: "sample", timestep: "timestep", context: "encoder_hidden_states", timestepCond: "timestep_cond" } as const;
export const UNET_OUTPUT = "out_sample";

/** What one export's UNet takes, read from its signature. */
export interface UnetLayout {
  /** Fixed batch size, or undefined when dynamic. */
  fixedBatch: number | undefined;
  /** Latent channels (4 for SD). */
  channels: number;
  /** Fixed latent height and width, when the export was made at one size. */
  fixedLatentSize: [number, number] | undefined;
  /** How many timestep values to feed per run: `"batch"` for one per row, `"scalar"` for rank 0, else a count. */
  timestepCount: number | "batch" | "scalar";
  /** Size of `timestep_cond`, when the UNet takes one (LCM: 256). */
  timestepCondSize: number | undefined;
  output: string;
}

function input(inputs: readonly TensorSignature[], name: string): TensorSignature | undefined {
  return inputs.find((value) => value.name === name);
}

export function unetLayout(inputs: readonly TensorSignature[], outputs: readonly TensorSignature[], timestepCondFallback = 256): UnetLayout {
  const sample = input(inputs, UNET_INPUTS.sample);
  const timestep = input(inputs, UNET_INPUTS.timestep);
  const context = input(inputs, UNET_INPUTS.context);
  if (!sample || !timestep || !context) {
    throw new AtelierError("INTERNAL", `The UNet must take "sample", "timestep" and "encoder_hidden_states"; it takes ${inputs.map((v) => `"${v.name}"`).join(", ")}.`);
  }
  const known = new Set<string>(Object.values(UNET_INPUTS));
  const unknown = inputs.filter((value) => !known.has(value.name));
  if (unknown.length > 0) {
    throw new AtelierError("INTERNAL", `The UNet takes inputs this pipeline does not provide (SDXL-style conditioning?): ${unknown.map((v) => `"${v.name}"`).join(", ")}.`);
  }
  const batch = sample.shape[0];
  const channels = typeof sample.shape[1] === "number" ? sample.shape[1] : 4;
  const [h, w] = [sample.shape[2], sample.shape[3]];
  let timestepCount: UnetLayout["timestepCount"];
  if (timestep.shape.length === 0) timestepCount = "scalar";
  else if (typeof timestep.shape[0] === "number") timestepCount = timestep.shape[0];
  else timestepCount = timestep.shape[0] === batch ? "batch" : 1;
  const cond = input(inputs, UNET_INPUTS.timestepCond);
  let timestepCondSize: number | undefined;
  if (cond) timestepCondSize = typeof cond.shape[1] === "number" ? cond.shape[1] : timestepCondFallback;
  return {
    fixedBatch: typeof batch === "number" ? batch : undefined,
    channels,
    fixedLatentSize: typeof h === "number" && typeof w === "number" ? [h, w] : undefined,
    timestepCount,
    timestepCondSize,
    output: (outputs.find((value) => value.name === UNET_OUTPUT) ?? outputs[0])!.name,
  };
}

export interface UnetCall {
  /** Latents, `[channels, h, w]` values. */
  sample: Float32Array;
  /** Factor the sampler applies to the latents before the UNet (1/√(σ²+1) for Euler; 1 for the others). */
  sampleScale: number;
  latentHeight: number;
  latentWidth: number;
  timestep: number;
  /** Text states per row (1 or 2 rows), each `[length, hidden]`. */
  contexts: readonly Float32Array[];
  length: number;
  hidden: number;
  /** LCM guidance embedding, when the UNet takes one. */
  timestepCond?: Float32Array;
}

function repeat(row: Float32Array, times: number): Float32Array {
  const out = new Float32Array(row.length * times);
  for (let i = 0; i < times; i++) out.set(row, i * row.length);
  return out;
}

/** `times` copies of `row · scale`, in one pass. */
function scaledRepeat(row: Float32Array, scale: number, times: number): Float32Array {
  if (scale === 1) return times === 1 ? row : repeat(row, times);
  const out = new Float32Array(row.length * times);
  for (let i = 0; i < row.length; i++) out[i] = row[i]! * scale;
  for (let t = 1; t < times; t++) out.copyWithin(t * row.length, 0, row.length);
  return out;
}

function concat(rows: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(rows.reduce((sum, row) => sum + row.length, 0));
  let offset = 0;
  for (const row of rows) {
    out.set(row, offset);
    offset += row.length;
  }
  return out;
}

/** UNet runs with this layout: one prediction per context row, in order. */
export class UnetRunner {
  /** UNet runs made (for tests and benchmarks). */
  runs = 0;
  /** The text states and guidance embedding are the same every step: batched once, reused. */
  private readonly batched = new WeakMap<object, Float32Array>();

  private once(key: object, make: () => Float32Array): Float32Array {
    let value = this.batched.get(key);
    if (!value) {
      value = make();
      this.batched.set(key, value);
    }
    return value;
  }

  constructor(readonly layout: UnetLayout) {}

  private feeds(call: UnetCall, rows: readonly Float32Array[]): TensorMap {
    const { layout } = this;
    const batch = rows.length;
    const sampleDims = [batch, layout.channels, call.latentHeight, call.latentWidth];
    const timesteps = layout.timestepCount === "scalar" ? 1 : layout.timestepCount === "batch" ? batch : layout.timestepCount;
    const feeds: TensorMap = {
      [UNET_INPUTS.sample]: { data: scaledRepeat(call.sample, call.sampleScale, batch), dims: sampleDims },
      [UNET_INPUTS.timestep]: { data: new Float32Array(timesteps).fill(call.timestep), dims: layout.timestepCount === "scalar" ? [] : [timesteps] },
      [UNET_INPUTS.context]: { data: rows.length === 1 ? rows[0]! : this.once(rows, () => concat(rows)), dims: [batch, call.length, call.hidden] },
    };
    if (layout.timestepCondSize !== undefined) {
      if (!call.timestepCond) throw new AtelierError("INTERNAL", "The UNet takes timestep_cond but no guidance embedding was given.");
      const cond = call.timestepCond;
      feeds[UNET_INPUTS.timestepCond] = { data: batch === 1 ? cond : this.once(cond, () => repeat(cond, batch)), dims: [batch, layout.timestepCondSize] };
    }
    return feeds;
  }

  private async runRows(graph: DiffusionGraph, call: UnetCall, rows: readonly Float32Array[], signal?: AbortSignal): Promise<Float32Array[]> {
    const outputs = await graph.run(this.feeds(call, rows), signal);
    this.runs++;
    const result = outputs[this.layout.output];
    const size = call.sample.length;
    if (!result || result.data.length !== size * rows.length) {
      throw new AtelierError("INTERNAL", `The UNet returned ${result ? `shape [${result.dims.join(", ")}]` : "nothing"} for "${this.layout.output}".`);
    }
    return rows.map((_, row) => result.data.subarray(row * size, (row + 1) * size));
  }

  /** The UNet's prediction for each context row (1: conditional only; 2: unconditional, conditional). */
  async predict(graph: DiffusionGraph, call: UnetCall, signal?: AbortSignal): Promise<Float32Array[]> {
    const { fixedBatch } = this.layout;
    const rows = call.contexts;
    if (fixedBatch === undefined || fixedBatch === rows.length) return this.runRows(graph, call, rows, signal);
    if (fixedBatch === 1) {
      const out: Float32Array[] = [];
      for (const row of rows) out.push(...(await this.runRows(graph, call, [row], signal)));
      return out;
    }
    if (fixedBatch === 2 && rows.length === 1) {
      // A UNet exported for guidance only: the conditional row twice, one prediction kept.
      return (await this.runRows(graph, call, [rows[0]!, rows[0]!], signal)).slice(0, 1);
    }
    throw new AtelierError("INTERNAL", `The UNet is exported for a batch of ${fixedBatch}; ${rows.length} rows were asked for.`);
  }
}
