/**
 * What one loaded inference session is expected to keep resident, for the runtime's memory budget.
 *
 * The estimate is a multiple of the model's byte size rather than resident memory measured around
 * session creation: in a worker, other sessions load, run and free memory concurrently and the
 * allocator keeps freed pages, so a measured delta is noise at best and negative at worst. The
 * factor comes from measuring every model in the mirror, each in a fresh process with onnxruntime-node
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
 * Not included: the activation arena. With `enableCpuMemArena` a session keeps the peak working memory
 * of the largest input it has run (LSDIR x4 at 256x256: about +120 MB; at 64x64: +7 MB), and onnxruntime-node
 * cannot shrink it per run. Tiling bounds that input size; callers that know a model's working set pass
 * it as `workingBytes` so the budget counts it.
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
