/**
 * How the pipeline reaches its three ONNX graphs: a {@link GraphHandle} holds a graph loaded for one
 * phase of the work (encode, denoise, decode), and a {@link DiffusionGraph} runs it. The pipeline's
 * feeds are float32 values whatever the export declares; this layer hands each input to the runtime
 * in the element type the loaded session declares (token ids as int32, timesteps as int64, …).
 *
 * The runtime (workers/onnx) feeds float32, int32, int64 and uint8 (`FEED_ELEMENT_TYPES`) and returns
 * float32 (uint8 too, for image graphs); toDeclaredType feeds the first three. A graph loaded from bytes whose inputs or outputs have another type (float16, in
 * half-precision exports) gets a float32 facade at load time (float32-facade.ts); a graph handed over
 * by path (weights in external data files) is loaded as it is.
 */
import type { ModelHandle, ModelRuntime, PinnedModel } from "../../onnx/onnx-runtime.js";
import { FEED_ELEMENT_TYPES, type FeedData, type FeedMap, type ModelSignature, type TensorData, type TensorMap, type TensorSignature } from "../../onnx/tensor-data.js";
import { float32Facade } from "./float32-facade.js";

/** One loaded graph, held for a phase of the work. */
export interface DiffusionGraph {
  /** Inputs and outputs as the loaded session declares them. */
  readonly signature: ModelSignature;
  /** Runs the graph once; every feed is float32 values, outputs are float32. */
  run(feeds: TensorMap, signal?: AbortSignal): Promise<TensorMap>;
}

/** A graph that loads on first use and stays loaded while `use` runs. */
export interface GraphHandle {
  readonly key: string;
  use<T>(work: (graph: DiffusionGraph) => Promise<T>, signal?: AbortSignal): Promise<T>;
}

/** The feed types toDeclaredType converts values to; an input of any other type gets the float32 facade. */
const DECLARED_FEED_TYPES = FEED_ELEMENT_TYPES.filter((type) => type !== "uint8");

/** `feed` in the element type `input` declares; integers truncate toward zero like numpy's astype. */
export function toDeclaredType(input: TensorSignature, feed: TensorData): FeedData {
  switch (input.type) {
    case "int32":
      return { data: Int32Array.from(feed.data, Math.trunc), dims: feed.dims };
    case "int64":
      return { data: BigInt64Array.from(feed.data, (value) => BigInt(Math.trunc(value))), dims: feed.dims };
    default:
      return feed;
  }
}

/** Wraps a pinned model: converts feeds to the session's declared element types. */
export function adaptPinnedModel(model: PinnedModel, signal: AbortSignal | undefined): DiffusionGraph {
  const byName = new Map(model.signature.inputs.map((input) => [input.name, input]));
  return {
    signature: model.signature,
    run: (feeds, runSignal) => {
      const converted: FeedMap = {};
      for (const [name, feed] of Object.entries(feeds)) {
        const input = byName.get(name);
        converted[name] = input ? toDeclaredType(input, feed) : feed;
      }
      return model.run(converted, { signal: runSignal ?? signal });
    },
  };
}

/** What the runtime's loader returns: ONNX bytes, or a model file it opens by path. */
type RuntimeLoader = Parameters<ModelRuntime["model"]>[1];

/**
 * A graph of the runtime: `load` reads the export's ONNX bytes, and what the runtime cannot feed or
 * return gets a float32 facade. A graph the loader hands over by path (weights in external data
 * files) is loaded as it is.
 */
export function runtimeGraph(runtime: ModelRuntime, key: string, load: RuntimeLoader): GraphHandle {
  const handle: ModelHandle = runtime.model(key, async () => {
    const source: unknown = await load();
    if (!(source instanceof Uint8Array)) return source as Awaited<ReturnType<RuntimeLoader>>;
    return float32Facade(source, DECLARED_FEED_TYPES).bytes;
  });
  return {
    key,
    use: (work, signal) => handle.pin((model) => work(adaptPinnedModel(model, signal)), signal ? { signal } : {}),
  };
}
