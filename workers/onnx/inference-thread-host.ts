/**
 * The main thread's side of the inference thread: sends session operations to it and matches the
 * replies. If the thread dies (a native crash), every pending call fails and `onLost` tells the
 * runtime, which forgets its sessions and lets the next use start a fresh thread.
 */
import { Worker } from "node:worker_threads";
import { AtelierError } from "../../core/errors.js";
import type { FeedMap, ModelSignature, TensorMap } from "./tensor-data.js";
import { disableOnnxTelemetry } from "./telemetry-off.js";

/** What the process's resident memory did during one operation of the inference thread, in bytes. */
export interface MemoryReading {
  /** Resident before (for a load, without the model's bytes the load frees). */
  before: number;
  /** Highest resident size during the operation. */
  peak: number;
  after: number;
  /** The whole process's peak so far, across the thread's resets of the kernel's mark. */
  processPeak: number;
}

interface Pending {
  resolve: (value: any) => void;
  reject: (error: Error) => void;
}

export class InferenceThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private lost: Error | undefined;

  constructor(private readonly onLost: (error: Error) => void) {
    disableOnnxTelemetry();
    this.worker = new Worker(new URL("./inference-thread.mjs", import.meta.url));
    // The thread must not keep a process alive on its own; dispose() ends it explicitly.
    this.worker.unref();
    this.worker.on("message", (reply: { id: number; error?: { message: string } }) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (reply.error) waiter.reject(new Error(reply.error.message));
      else waiter.resolve(reply);
    });
    const fail = (error: Error) => {
      if (this.lost) return;
      this.lost = error;
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
      this.onLost(error);
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`the inference thread exited with code ${code}`)));
  }

  get alive(): boolean {
    return this.lost === undefined;
  }

  private call<T>(message: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.lost) {
      return Promise.reject(new AtelierError("WORKER_UNAVAILABLE", "The inference thread stopped; retry the request.", { cause: this.lost, retryAfterSeconds: 1 }));
    }
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ ...message, id }, transfer);
    }).finally(() => {
      if (this.pending.size === 0) this.worker.unref();
    });
  }

  create(session: number, source: Uint8Array | { path: string }, options: object): Promise<{ signature: ModelSignature; memory: MemoryReading }> {
    if (!(source instanceof Uint8Array)) return this.call({ op: "create", session, path: source.path, options });
    // A copy the thread owns (Buffer#slice would be a view): the caller keeps its bytes intact.
    const owned = new Uint8Array(source);
    return this.call({ op: "create", session, bytes: owned, options }, [owned.buffer as ArrayBuffer]);
  }

  /**
   * Runs `session` on `feeds`. They are copied (structured clone), so callers may still read them,
   * unless `handOver`: then every feed that owns its whole buffer is transferred (detached here).
   */
  run(session: number, feeds: FeedMap, handOver = false): Promise<{ outputs: TensorMap; memory: MemoryReading }> {
    return this.call({ op: "run", session, feeds }, handOver ? ownedBuffers(feeds) : []);
  }

  async release(session: number): Promise<MemoryReading | undefined> {
    if (this.lost) return undefined;
    const reply = await this.call<{ memory: MemoryReading }>({ op: "release", session });
    return reply.memory;
  }

  async terminate(): Promise<void> {
    this.lost ??= new Error("terminated");
    await this.worker.terminate();
  }
}

/** The buffers of `feeds` that can move to another thread whole: each once, only where a feed owns all of it. */
function ownedBuffers(feeds: FeedMap): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const { data } of Object.values(feeds)) {
    const { buffer } = data;
    if (buffer instanceof ArrayBuffer && data.byteOffset === 0 && data.byteLength === buffer.byteLength) buffers.add(buffer);
  }
  return [...buffers];
}
