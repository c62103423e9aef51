/**
 * How the pipeline reaches its three ONNX graphs: a {@link GraphHandle} holds a graph loaded for one
 * phase of the work (encode, denoise, decode), and a {@link DiffusionGraph} runs it. Feeds are float32
 * values whatever the export declares; this layer hands each input to the runtime in the element
 * type the loaded session takes (token ids as int32, timesteps as int64, …).
 *
 * The runtime (workers/onnx) feeds float32 only today, so graphs get a float32 facade at load time
 * (float32-facade.ts). When tensor-data.ts exports `FEED_ELEMENT_TYPES` (the runtime change in the
 * README), the types it lists are fed natively and the facade is skipped for them.
 */
import type { ModelHandle, ModelRuntime, PinnedModel } from "../../onnx/onnx-runtime.js";
import * as tensorData from "../../onnx/tensor-data.js";
import type { ModelSignature, TensorData, TensorMap, TensorSignature } from "../../onnx/tensor-data.js";
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

/** Element types the runtime feeds natively: what tensor-data.ts advertises, float32 when it is silent. */
export function runtimeFeedTypes(): readonly string[] {
  const advertised = (tensorData as { FEED_ELEMENT_TYPES?: unknown }).FEED_ELEMENT_TYPES;
  return Array.isArray(advertised) && advertised.every((type) => typeof type === "string") ? advertised : ["float32"];
}

/** A feed of a non-float32 element type, as the runtime change defines it (tensor data by typed array). */
type NativeFeed = { data: Int32Array | BigInt64Array | Float32Array; dims: number[] };

/** `feed` in the element type `input` declares; integers truncate toward zero like numpy's astype. */
export function toDeclaredType(input: TensorSignature, feed: TensorData): NativeFeed {
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
      const converted: Record<string, NativeFeed> = {};
      for (const [name, feed] of Object.entries(feeds)) {
        const input = byName.get(name);
        converted[name] = input ? toDeclaredType(input, feed) : feed;
      }
      // Integer typed arrays only reach here for inputs the runtime says it feeds natively.
      return model.run(converted as unknown as TensorMap, { signal: runSignal ?? signal });
    },
  };
}

/** What the runtime's loader returns: ONNX bytes (and, once the runtime loads by path, a model file). */
type RuntimeLoader = Parameters<ModelRuntime["model"]>[1];

/**
 * A graph of the runtime: `load` reads the export's ONNX bytes; what the runtime cannot feed gets
 * a float32 facade. A graph the loader hands over by path (weights in external data files) is
 * loaded as it is.
 */
export function runtimeGraph(runtime: ModelRuntime, key: string, load: RuntimeLoader): GraphHandle {
  const fed = runtimeFeedTypes();
  const handle: ModelHandle = runtime.model(key, async () => {
    const source: unknown = await load();
    if (!(source instanceof Uint8Array)) return source as Awaited<ReturnType<RuntimeLoader>>;
    return float32Facade(source, fed).bytes;
  });
  return {
    key,
    use: (work, signal) => handle.pin((model) => work(adaptPinnedModel(model, signal)), signal ? { signal } : {}),
  };
}
