/** Axis permutation of a dense row-major float32 tensor (e.g. TF `[kh, kw, in, out]` kernels → ONNX `[out, in, kh, kw]`). */

/** A row-major float32 tensor. */
export interface DenseTensor {
  shape: number[];
  data: Float32Array;
}

/** Returns a new tensor whose axis `i` is the input's axis `perm[i]` (numpy `transpose` semantics). */
export function permuteTensor(tensor: DenseTensor, perm: readonly number[]): DenseTensor {
  const { shape, data } = tensor;
  const rank = shape.length;
  if (perm.length !== rank || [...perm].sort((a, b) => a - b).some((p, i) => p !== i)) {
    throw new Error(`permutation [${perm.join(", ")}] does not fit a rank-${rank} tensor`);
  }
  const outShape = perm.map((p) => shape[p]!);
  const inStrides = new Array<number>(rank);
  let stride = 1;
  for (let i = rank - 1; i >= 0; i--) {
    inStrides[i] = stride;
    stride *= shape[i]!;
  }
  if (data.length !== stride) throw new Error(`tensor holds ${data.length} values but its shape [${shape.join(", ")}] needs ${stride}`);
  // Stride of each output axis when walking the input.
  const walk = perm.map((p) => inStrides[p]!);
  const out = new Float32Array(data.length);
  const index = new Array<number>(rank).fill(0);
  let source = 0;
  for (let o = 0; o < out.length; o++) {
    out[o] = data[source]!;
    // Odometer increment over the output index, keeping `source` in step.
    for (let axis = rank - 1; axis >= 0; axis--) {
      const next = index[axis]! + 1;
      source += walk[axis]!;
      if (next < outShape[axis]!) {
        index[axis] = next;
        break;
      }
      source -= walk[axis]! * outShape[axis]!;
      index[axis] = 0;
    }
  }
  return { shape: outShape, data: out };
}
