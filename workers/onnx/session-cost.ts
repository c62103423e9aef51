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
 * Not included: activation memory, which callers that know a model's working set pass as `workingBytes`.
 * With `enableCpuMemArena` a session keeps the peak working memory of the inputs it has run (LSDIR x4 at
 * 256x256: about +120 MB; at 64x64: +7 MB), and onnxruntime-node cannot shrink it per run. That is worth
 * it for tiled models (tiles of one size then allocate nothing; measured 0.92x the time of a run without
 * it, LSDIR 128x128 tiles, bench-free spot check under load 25), but not for a large one-shot network:
 * ISNet at 1024x1024 in a fresh process (onnxruntime-node 1.30, 2 threads, `VmHWM` = peak resident of the
 * whole process, load average 18 to 24, so timings are not comparable, memory is):
 *
 * | arena | RSS loaded | RSS after run 1 | after run 2 | after release | peak (VmHWM) |
 * |-------|-----------:|----------------:|------------:|--------------:|-------------:|
 * | on    |     669 MB |         1445 MB |     2282 MB |        252 MB |     > 2.2 GB |
 * | off   |     613 MB |          579 MB |           — |        413 MB |      1091 MB |
 *
 * (baseline 222 MB, of which the process's own 84 MB copy of the model bytes until collected). The
 * time cost is small: interleaved ISNet runs without the arena (and memory patterns) took 1.04x the
 * time of runs with them (medians of 4, load average 3.3). So a
 * session whose working set exceeds {@link ARENA_MAX_WORKING_BYTES} runs without the arena: its working
 * memory is resident only while it runs, and the budget still counts it, as the peak of a run.
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
 * Largest per-run working set a session keeps between runs in onnxruntime's arena. Above it (ISNet:
 * about 500 MB per 1024x1024 run) the arena is off, so memory is returned after every run instead of
 * growing with each one (measured +0.8 GB per ISNet run with the arena).
 */
export const ARENA_MAX_WORKING_BYTES = 256 * MiB;

/** Whether a session with a working set of `workingBytes` keeps onnxruntime's CPU memory arena. */
export function keepsArena(workingBytes = 0): boolean {
  return workingBytes <= ARENA_MAX_WORKING_BYTES;
}
