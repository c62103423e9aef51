/**
 * Converts published non-ONNX weights into ONNX files onnxruntime-node can run.
 *
 *   npx tsx scripts/convert-model.ts keras <modelDir> <out.onnx> [--name <kerasLayer>=<onnxName>]...
 *     a TF.js layers model folder (model.json + shards), e.g.
 *     node_modules/@upscalerjs/esrgan-slim/models/x2 or ../shared/models/cvae-quickdraw;
 *     --name renames an input or output (default: input/output, or the Keras names when several), e.g.
 *     --name latent_input=latent --name conv2d_transpose_3=image for the CVAE
 *   npx tsx scripts/convert-model.ts fast-style <checkpointDir> <out.onnx>
 *     an ml5 / deeplearn.js style-transfer checkpoint, e.g. ../shared/models/style-fast-ml5/raw/udnie
 *
 * Prints the input/output signature and the conventions stored in the model's doc string.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { ConvertedOnnxModel } from "../models/convert/converted-model.js";
import { convertFastStyleCheckpoint } from "../models/convert/fast-style-checkpoint-to-onnx.js";
import { convertKerasToOnnx } from "../models/convert/keras-to-onnx.js";
import type { Dim } from "../models/convert/onnx-graph.js";
import { readTfjsLayersModel } from "../models/convert/tfjs-layers-model.js";
import { convertEsrgan, detectEsrganModelDir } from "../models/convert/upscalerjs-esrgan.js";

const USAGE = `usage:
  npx tsx scripts/convert-model.ts keras <modelDir> <out.onnx> [--name <kerasLayer>=<onnxName>]...
  npx tsx scripts/convert-model.ts fast-style <checkpointDir> <out.onnx>`;

async function convert(kind: string, source: string, names: Record<string, string>): Promise<ConvertedOnnxModel> {
  if (kind === "fast-style") {
    if (Object.keys(names).length > 0) throw new Error("--name applies to keras models only");
    return convertFastStyleCheckpoint(source);
  }
  if (kind === "keras") {
    // UpscalerJS ESRGAN folders get their value range recorded; other models a generic doc string.
    const esrgan = detectEsrganModelDir(source);
    if (esrgan && Object.keys(names).length === 0) return convertEsrgan(esrgan.variant, esrgan.scale, source);
    return convertKerasToOnnx(await readTfjsLayersModel(source), { inputNames: names, outputNames: names });
  }
  throw new Error(`unknown kind "${kind}"\n${USAGE}`);
}

/** Positional arguments plus repeated `--name keras=onnx` pairs. */
function parseArguments(argv: string[]): { positional: string[]; names: Record<string, string> } {
  const positional: string[] = [];
  const names: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--name") {
      const pair = argv[++i] ?? "";
      const [from, to] = pair.split("=");
      if (!from || !to) throw new Error(`--name expects <kerasLayer>=<onnxName>, got "${pair}"`);
      names[from] = to;
    } else {
      positional.push(arg);
    }
  }
  return { positional, names };
}

function formatDims(dims: readonly Dim[]): string {
  return `[${dims.map((d) => (d === null ? "?" : String(d))).join(", ")}]`;
}

async function main(argv: string[]): Promise<void> {
  const { positional, names } = parseArguments(argv);
  const [kind, source, out] = positional;
  if (!kind || !source || !out || positional.length > 3) {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  const started = performance.now();
  const model = await convert(kind, source, names);
  await fs.mkdir(path.dirname(path.resolve(out)), { recursive: true });
  await fs.writeFile(out, model.bytes);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`wrote ${out} (${(model.bytes.length / 1e6).toFixed(2)} MB) in ${seconds} s`);
  for (const i of model.signature.inputs) console.log(`  input  ${i.name}: ${i.elementType} ${formatDims(i.dims)}`);
  for (const o of model.signature.outputs) console.log(`  output ${o.name}: ${o.elementType} ${formatDims(o.dims)}`);
  console.log(`  ${model.docString}`);
  if (model.unusedWeights.length > 0) {
    console.warn(`  warning: ${model.unusedWeights.length} source weights were not used: ${model.unusedWeights.slice(0, 5).join(", ")}…`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
