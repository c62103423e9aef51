/**
 * The session settings of graphs whose run takes a few milliseconds or less (the portrait mattes, the
 * doodle decoder): one intra-op thread. Handing part of such a run to a second thread and waiting for
 * it costs more than the thread saves, so on two threads these ran slower than a bare session with
 * onnxruntime's defaults, and on one as fast (bench/session-options.ts measures every model both
 * ways: the service's row against the anchor). The arena and memory pattern are the default settings'.
 */
import type { SessionSettings } from "../catalog-types.js";

export const SMALL_GRAPH_SESSION: SessionSettings = { cpuArena: true, memoryPattern: false, maxThreads: 1 };
