/**
 * What one loaded inference session is expected to keep resident: the runtime's first guess, used
 * until it has measured the model itself (see {@link chargedBytes}; onnx-runtime.ts measures every load
 * and run in the inference thread, where they happen one at a time).
 *
 * The estimate is a multiple of the model's byte size. The factor comes from measuring every model in the mirror, each in a fresh process with onnxruntime-node
 * 1.30 on CPU, graph optimisation "all" (`bench/model-memory.ts` shows the same within one process):
 *
 * - creation grows resident memory by about 2x to 3x the file size (6.4 MB style nets: +13.5 to
 *   +19.2 MB; 2.4 MB LSDIR: +5.3 to +7.1 MB; 2.0 MB nc16: +6.5 to +7.5 MB): the weights, plus the
 *   pre-packed copies MLAS makes of convolution and GEMM weights;
 * - on top, a fixed part of about 0.5 to 2.5 MB (graph, kernels, the session's thread pool), which is
 *   most of the cost of the sub-megabyte models (0.2 to 0.4 MB files: +0.4 to +2.9 MB).
 *
 * `3 x file + 2 MiB` is at or above the measured growth of every model in the mirror.
 *
 * Not included: activation memory, which callers that know a model's working set pass as `workingBytes`.
 * With `enableCpuMemArena` a session keeps the peak working memory of the inputs it has run (LSDIR x4 at
 * 256x256: about +120 MB; ISNet at 1024x1024: about +0.9 GB), and onnxruntime-node cannot shrink it per
 * run; the runtime charges it as measured, and a model whose catalog entry asks for it is released
 * when idle (session-settings.ts) so that memory goes back.
 */

const MiB = 1024 * 1024;

/** Resident bytes per byte of ONNX model (measured about 2 to 3 on the mirror's models). */
export const SESSION_BYTES_PER_MODEL_BYTE = 3;

/** Resident bytes every session costs regardless of its size (measured 0.5 to 2.5 MB). */
export const SESSION_FIXED_BYTES = 2 * MiB;

/**
 * Expected resident bytes of a session over a model of `modelBytes` bytes, plus `workingBytes` of
 * activation memory the caller expects it to keep (default 0).
 */
export function estimateSessionBytes(modelBytes: number, workingBytes = 0): number {
  return Math.ceil(modelBytes * SESSION_BYTES_PER_MODEL_BYTE) + SESSION_FIXED_BYTES + workingBytes;
}

/**
 * Changes in resident memory smaller than this are within what V8, the allocator and the work of the
 * main thread move on their own while a session loads or runs; a measurement under it cannot tell a
 * model's cost, so the estimate (capped at this) stands for it.
 */
export const RESIDENT_NOISE_BYTES = 16 * MiB;

/**
 * What the process may hold beyond ATELIER_MODEL_MEMORY_MB: node, V8, sharp and gRPC with no model
 * loaded (measured 170 to 230 MB in a worker at start) and the images and tensors of the calls in
 * flight (a 1 MP background removal: about 60 MB; bench/model-memory.ts prints the figures). A session
 * loads only when the process's live resident memory plus the model's cost fits the budget plus this.
 */
export const PROCESS_MARGIN_BYTES = 512 * MiB;

/** A model's cost as measured in this process, in bytes; a part is absent until measured. */
export interface MeasuredCost {
  /** Resident growth from creating the session (after collecting the model's bytes). */
  loadBytes?: number;
  /** Highest resident growth while creating it (over the resident size before). */
  loadPeakBytes?: number;
  /** Highest resident growth during one of its runs, over the resident size before that run. */
  runPeakBytes?: number;
}

/** A measured part where it is above the noise; else the estimated part, capped at the noise. */
function measuredOr(measured: number | undefined, estimated: number): number {
  if (measured !== undefined && measured >= RESIDENT_NOISE_BYTES) return measured;
  return measured === undefined ? estimated : Math.min(estimated, RESIDENT_NOISE_BYTES);
}

/**
 * The bytes the budget charges a session: what it keeps resident plus the peak of one of its runs,
 * measured where the runtime has measured them, estimated (`modelBytes`, `workingBytes`) where not.
 */
export function chargedBytes(modelBytes: number, workingBytes: number, measured: MeasuredCost = {}): number {
  const resident = measuredOr(measured.loadBytes, estimateSessionBytes(modelBytes));
  const running = measuredOr(measured.runPeakBytes, workingBytes);
  return Math.max(resident + running, measured.loadPeakBytes ?? 0);
}
