/**
 * Builds the fast style transfer network of ml5.js `StyleTransfer` (Johnson et al. as implemented in
 * lengstrom/fast-style-transfer, exported for deeplearn.js) as ONNX, from a deeplearn.js checkpoint
 * folder (`manifest.json` + one raw float32 file per variable `Variable`, `Variable_1` … `Variable_47`).
 *
 * Network, as in ml5's `transferInternal`: conv 9×9/1 (32) → IN → ReLU; conv 3×3/2 (64) → IN → ReLU;
 * conv 3×3/2 (128) → IN → ReLU; 5 residual blocks [conv 3×3 → IN → ReLU → conv 3×3 → IN, + skip];
 * convT 3×3/2 (64) → IN → ReLU; convT 3×3/2 (32) → IN → ReLU; conv 9×9/1 (3) → IN → tanh;
 * `clip(150·tanh + 127.5, 0, 255)`. Convolutions have no bias; each is followed by instance
 * normalisation (eps 1e-3) whose variables come right after the kernel: shift (beta), then scale (gamma).
 * Padding is TF "SAME" throughout.
 */
import type { ConvertedOnnxModel } from "./converted-model.js";
import { readDeeplearnCheckpoint } from "./deeplearn-checkpoint.js";
import { OnnxGraphBuilder, attr } from "./onnx-graph.js";
import { permuteTensor } from "./permute-tensor.js";
import { convPaddingAttributes, transposedConvAxisPadding } from "./tf-padding.js";
import type { WeightTensor } from "./tfjs-layers-model.js";

/** I/O contract of a converted fast-style model. */
export const FAST_STYLE_SIGNATURE = {
  input: { name: "input", layout: "NCHW", channels: "RGB", dims: ["batch", 3, "height", "width"], range: [0, 255] },
  output: { name: "output", layout: "NCHW", channels: "RGB", dims: ["batch", 3, "height", "width"], range: [0, 255] },
  /**
   * The encoder halves the size twice (SAME, so ceil) and the decoder doubles it twice, exactly as
   * ml5 does: the output is `4·ceil(h/4) × 4·ceil(w/4)`, equal to the input only when both are
   * multiples of 4. Pad or resize to multiples of 4 first.
   */
  sizeMultiple: 4,
} as const;

const DOC_STRING =
  "Fast style transfer (ml5.js StyleTransfer / lengstrom fast-style-transfer), converted from a deeplearn.js checkpoint. " +
  'Input "input": float32 [batch, 3, height, width], RGB, values 0..255 (no normalisation). ' +
  'Output "output": float32 [batch, 3, height, width], RGB, values 0..255 (clip(150*tanh(x)+127.5, 0, 255)). ' +
  "height and width must be multiples of 4 (otherwise the output is 4*ceil(h/4) x 4*ceil(w/4)).";

const INSTANCE_NORM_EPSILON = 1e-3;

/** ml5's variable naming: id 0 is `Variable`, id n is `Variable_n`. */
function variableName(id: number): string {
  return id === 0 ? "Variable" : `Variable_${id}`;
}

/** Emits the network into a graph builder, reading variables by ml5's numeric ids. */
class FastStyleNetwork {
  readonly used = new Set<string>();

  constructor(
    private readonly graph: OnnxGraphBuilder,
    private readonly variables: ReadonlyMap<string, WeightTensor>,
  ) {}

  private variable(id: number, rank: number): WeightTensor {
    const name = variableName(id);
    const v = this.variables.get(name);
    if (!v) throw new Error(`checkpoint lacks ${name}`);
    if (v.shape.length !== rank) throw new Error(`${name} has shape [${v.shape.join(", ")}], expected rank ${rank}`);
    this.used.add(name);
    return v;
  }

  private instanceNorm(x: string, id: number, label: string): string {
    const shift = this.variable(id, 1);
    const scale = this.variable(id + 1, 1);
    const channels = shift.shape[0]!;
    const scaleName = this.graph.addFloatInitializer(`${label}_in_scale`, [channels], scale.data);
    const biasName = this.graph.addFloatInitializer(`${label}_in_bias`, [channels], shift.data);
    return this.graph.op("InstanceNormalization", [x, scaleName, biasName], { epsilon: attr.float(INSTANCE_NORM_EPSILON) }, `${label}_in`);
  }

  /** ml5 `convLayer`: SAME conv without bias, instance norm, optional ReLU. */
  conv(x: string, stride: number, relu: boolean, id: number, label: string): string {
    const kernel = this.variable(id, 4); // TF [kh, kw, in, out]
    const [kh, kw] = kernel.shape as [number, number];
    const w = permuteTensor(kernel, [3, 2, 0, 1]); // → ONNX [out, in, kh, kw]
    const y = this.graph.op(
      "Conv",
      [x, this.graph.addFloatInitializer(`${label}_weight`, w.shape, w.data)],
      {
        kernel_shape: attr.ints([kh, kw]),
        strides: attr.ints([stride, stride]),
        ...convPaddingAttributes("same", [kh, kw], [stride, stride], [1, 1]),
      },
      `${label}_conv`,
    );
    const normalised = this.instanceNorm(y, id + 1, label);
    return relu ? this.graph.op("Relu", [normalised], undefined, `${label}_relu`) : normalised;
  }

  /** ml5 `convTransposeLayer`: TF conv2d_transpose to exactly `stride`× the size (SAME), IN, ReLU. */
  convTranspose(x: string, stride: number, id: number, label: string): string {
    const kernel = this.variable(id, 4); // TF [kh, kw, out, in]
    const [kh, kw] = kernel.shape as [number, number];
    const w = permuteTensor(kernel, [3, 2, 0, 1]); // → ONNX [in, out, kh, kw]
    const [ph, pw] = [kh, kw].map((k) => transposedConvAxisPadding("same", k, stride, 1, null));
    const y = this.graph.op(
      "ConvTranspose",
      [x, this.graph.addFloatInitializer(`${label}_weight`, w.shape, w.data)],
      {
        kernel_shape: attr.ints([kh, kw]),
        strides: attr.ints([stride, stride]),
        pads: attr.ints([ph!.begin, pw!.begin, ph!.end, pw!.end]),
        output_padding: attr.ints([ph!.outputPadding, pw!.outputPadding]),
      },
      `${label}_convt`,
    );
    return this.graph.op("Relu", [this.instanceNorm(y, id + 1, label)], undefined, `${label}_relu`);
  }

  /** ml5 `residualBlock`: two convs, no ReLU after the second, plus the block input. */
  residual(x: string, id: number, label: string): string {
    const inner = this.conv(x, 1, true, id, `${label}_a`);
    const outer = this.conv(inner, 1, false, id + 3, `${label}_b`);
    return this.graph.op("Add", [outer, x], undefined, `${label}_sum`);
  }
}

/** Builds the ONNX model from checkpoint variables (see the module comment for the network). */
export function buildFastStyleOnnx(variables: ReadonlyMap<string, WeightTensor>, options: { docString?: string } = {}): ConvertedOnnxModel {
  const docString = options.docString ?? DOC_STRING;
  const graph = new OnnxGraphBuilder({ graphName: "fast_style_transfer", docString });
  const net = new FastStyleNetwork(graph, variables);
  const input = graph.addInput("input", ["batch", 3, "height", "width"]);

  let x = net.conv(input, 1, true, 0, "conv1");
  x = net.conv(x, 2, true, 3, "conv2");
  x = net.conv(x, 2, true, 6, "conv3");
  [9, 15, 21, 27, 33].forEach((id, i) => {
    x = net.residual(x, id, `res${i + 1}`);
  });
  x = net.convTranspose(x, 2, 39, "convt1");
  x = net.convTranspose(x, 2, 42, "convt2");
  x = net.conv(x, 1, false, 45, "conv_out");
  const tanh = graph.op("Tanh", [x], undefined, "tanh");
  const scaled = graph.op("Mul", [tanh, graph.addScalar("times", 150)], undefined, "scaled");
  const shifted = graph.op("Add", [scaled, graph.addScalar("plus", 255 / 2)], undefined, "shifted");
  graph.addNode({ opType: "Clip", inputs: [shifted, graph.addScalar("min", 0), graph.addScalar("max", 255)], outputs: ["output"] });
  graph.addOutput("output", ["batch", 3, "height", "width"]);

  return {
    bytes: graph.toBytes(),
    signature: graph.signature(),
    docString,
    unusedWeights: [...variables.keys()].filter((n) => !net.used.has(n)),
  };
}

/** Reads `<checkpointDir>/manifest.json` and its variable files and converts them. */
export async function convertFastStyleCheckpoint(checkpointDir: string): Promise<ConvertedOnnxModel> {
  return buildFastStyleOnnx(await readDeeplearnCheckpoint(checkpointDir));
}
