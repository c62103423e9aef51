/**
 * The worker's one way to run ONNX models: it owns every inference session (onnxruntime-node itself
 * is loaded only by the inference thread this module drives, inference-thread.mjs):
 *
 * - sessions load lazily on first use, keyed by the caller (`"<model id>/<graph>"`); concurrent first
 *   users share one load, later users reuse the session;
 * - the memory of all sessions stays under a budget by evicting idle sessions, least recently used
 *   first; a session that is loading, running or pinned is never evicted. Each session is charged
 *   what it was measured to cost in this process (resident growth when it loaded plus the peak of its
 *   runs, read by the inference thread around each; session-cost.ts's estimate only until then), and
 *   a session loads only once the process's live resident memory plus its cost fits the budget plus
 *   PROCESS_MARGIN_BYTES, evicting idle sessions until it does;
 * - runs on one session pass a gate (one at a time by default, in the order of their calls'
 *   arrival, work-order.ts), so its intra-op threads are never shared by two runs and the call that
 *   came first finishes first; a run whose caller has gone away leaves the queue unrun;
 * - feeds are checked against the model's declared inputs, so a wrong shape fails with a message that
 *   names the tensor instead of deep inside onnxruntime.
 *
 * A session whose settings ask to be released when idle counts its idle time from its last use by a
 * call a person or program made: work the service does for itself ahead of need (background work,
 * core/work-priority.ts: the warm-up) leaves it loaded for that first call, as long as the budget
 * does not need the room.
 *
 * The budget is soft: a single model larger than it still loads (alone, with a warning), and a new
 * session may load while busy sessions keep the total over the budget; the excess is evicted as soon
 * as those sessions go idle.
 *
 * onnxruntime-node 1.30 creates sessions and runs them synchronously on the calling JS thread, so
 * the sessions live in a dedicated inference thread (inference-thread.mjs): this thread keeps
 * serving gRPC and HTTP while a model runs. Runs of different sessions still take turns in that
 * thread, and an abort is seen between runs, which is why long work (tiling) is split into many
 * short runs.
 */
import { AtelierError } from "../../core/errors.js";
import { currentWorkPriority } from "../../core/work-priority.js";
import { inferenceDuration, modelLoadDuration, modelLoads, observeRuntime, sessionLabels } from "../../observability/metrics.js";
import { InferenceThread, type MemoryReading } from "./inference-thread-host.js";
import { throwIfCancelled, untilCancelled } from "./cancellation.js";
import { RunGate } from "./run-gate.js";
import { collectGarbage, processPeakBytes, residentBytes } from "./process-memory.mjs";
import { chargedBytes, estimateSessionBytes, PROCESS_MARGIN_BYTES, type MeasuredCost } from "./session-cost.js";
import { DEFAULT_SESSION_SETTINGS, sessionOptionsFor, type SessionSettings } from "./session-settings.js";
import type { ByteTensor, ByteTensorMap, FeedMap, ModelSignature, TensorData, TensorMap } from "./tensor-data.js";
import { validateFeeds } from "./validate-feeds.js";
import { currentWorkRank } from "../work-order.js";

export type { ByteTensor, ByteTensorMap, FeedData, FeedMap, ModelSignature, TensorData, TensorMap, TensorSignature } from "./tensor-data.js";

/** The logging the runtime does; the worker's pino logger fits. */
export interface RuntimeLogger {
  debug(details: object, message: string): void;
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface ModelRuntimeOptions {
  /** onnxruntime intra-op threads of each session, at least 1 (usually the cores given to inference). */
  threads: number;
  /** Soft limit, in bytes, on the memory all loaded sessions are charged together (measured, else estimated). */
  memoryBudgetBytes: number;
  /** What the process may hold beyond the budget before idle sessions are evicted; default PROCESS_MARGIN_BYTES. */
  processMarginBytes?: number;
  logger: RuntimeLogger;
  /** Runs let through at once on one session, at least 1; default 1. */
  runsPerSession?: number;
  /** Let the intra-op threads busy-wait between runs (onnxruntime's default); default false. */
  spinning?: boolean;
  /**
   * How long a session whose settings ask for it (`releaseWhenIdle`) stays loaded with nobody using
   * it, in ms; 0 keeps it until the budget needs the room. Default 0.
   */
  idleReleaseMs?: number;
  /** Called when a session is released for having been idle, so memory kept for it between calls can go too. */
  onIdleRelease?: () => void;
}

/**
 * An ONNX file the inference thread opens itself, so weights kept in external data files beside it
 * (graphs over protobuf's 2 GB, e.g. a full-precision SD UNet) are found; `bytes` is the total size
 * of the graph and its data files, for the memory estimate.
 */
export interface ModelFile {
  path: string;
  bytes: number;
}

/** Reads a model's ONNX bytes (from disk, a converter, …), or names its file; called only when the session must load. */
export type ModelLoader = () => Promise<Uint8Array | ModelFile>;

export interface ModelOptions {
  /** A tiny feed run once right after loading, so kernel set-up is not paid by the first real call. */
  warmUp?: FeedMap;
  /** Peak activation memory, in bytes, of one run; added to the estimate until a run has been measured. */
  workingBytes?: number;
  /** The model's session options (its catalog entry's); default DEFAULT_SESSION_SETTINGS. */
  session?: SessionSettings;
}

export interface RunOptions {
  /** Aborting skips the run if it has not started (it rejects with CANCELLED); a started run completes. */
  signal?: AbortSignal;
  /**
   * Moves the feeds' buffers to the inference thread instead of copying them: once the run is let
   * through the gate, the caller's typed arrays are detached (empty). For feeds made for this one run
   * (image tiles): a 1 MP RGB tile is 12 MB of float32 the copy would clone on this thread. Feeds that
   * are views into a larger buffer are copied all the same.
   */
  handOver?: boolean;
}

/** A loaded model held for a piece of work: it cannot be evicted until the work settles. */
export interface PinnedModel {
  readonly key: string;
  readonly signature: ModelSignature;
  /** Runs the model once; outputs are keyed by output name. */
  run(feeds: FeedMap, options?: RunOptions): Promise<TensorMap>;
  /** Runs a model whose outputs are uint8 (a graph that converts its own pixels, byte-image-graph.ts) once. */
  runToBytes(feeds: FeedMap, options?: RunOptions): Promise<ByteTensorMap>;
}

/** A cheap reference to one model; nothing loads until it is used. */
export interface ModelHandle {
  readonly key: string;
  /** Loads the model if needed and runs it once. */
  run(feeds: FeedMap, options?: RunOptions): Promise<TensorMap>;
  /** Loads the model if needed and returns its declared inputs and outputs. */
  signature(options?: RunOptions): Promise<ModelSignature>;
  /**
   * Keeps the model loaded while `work` runs, for work made of many runs (the tiles of one image), so
   * the session cannot be evicted and reloaded between them.
   */
  pin<T>(work: (model: PinnedModel) => Promise<T>, options?: RunOptions): Promise<T>;
}

export interface SessionStats {
  key: string;
  /** False while the session is still being created. */
  loaded: boolean;
  /** Size of the ONNX model in bytes (0 until read). */
  modelBytes: number;
  /** The first guess of its cost, from its size and declared working memory (0 until the model is read). */
  estimatedBytes: number;
  /** Bytes counted against the budget: measured where measured, else estimated (0 until the model is read). */
  chargedBytes: number;
  /** What this process measured the model to cost (kept across its evictions). */
  measured: MeasuredCost;
  /** Runs inside the gate now. */
  running: number;
  /** Runs queued at the gate. */
  waiting: number;
  /** Users holding the session (runs, pins and its load); 0 means it may be evicted. */
  users: number;
  /** Runs completed, warm-up excluded. */
  runs: number;
}

export interface RuntimeStats {
  /** Sessions loaded or loading, least recently used first. */
  sessions: SessionStats[];
  /** Sessions loaded and ready. */
  loadedSessions: number;
  /** Sum of the sessions' estimates, in bytes. */
  estimatedBytes: number;
  /** Sum of what the sessions are charged, in bytes: the figure the budget bounds. */
  chargedBytes: number;
  budgetBytes: number;
  /** The budget plus the process margin: the process's resident memory a load may not push it past. */
  processLimitBytes: number;
  /** Resident memory of the whole process now. */
  residentBytes: number;
  /** Peak resident memory of the whole process since it started. */
  peakResidentBytes: number;
  /** Uses served by a session already loaded or loading. */
  hits: number;
  /** Sessions created. */
  loads: number;
  /** Sessions released to make room or after being idle. */
  evictions: number;
  /** Of those, the sessions released after being idle. */
  idleReleases: number;
}

interface LoadedSession {
  /** The session's number in the inference thread. */
  id: number;
  signature: ModelSignature;
}

/** One session's bookkeeping, from the start of its load until it is evicted or disposed. */
class SessionEntry {
  loaded: LoadedSession | undefined;
  modelBytes = 0;
  /** The first guess of its cost: 0 until the model is read, reserved before the session is created. */
  estimatedBytes = 0;
  /** Activation memory its caller declared (part of the estimate). */
  workingBytes = 0;
  /** Its settings ask for release after the runtime's idle time. */
  releaseWhenIdle = false;
  /** It has been used by a call, not only by background work done ahead of need. */
  calledFor = false;
  // The load itself is a user until it settles, so a half-made session is never evicted.
  users = 1;
  /** Value of the runtime's use counter at the last use; smaller means less recently used. */
  lastUse = 0;
  runs = 0;
  /** Set while the session waits, idle, to be released (idle release). */
  idleTimer: NodeJS.Timeout | undefined;
  readonly gate: RunGate;
  readonly ready: Promise<LoadedSession>;

  constructor(readonly key: string, runsPerSession: number, load: (entry: SessionEntry) => Promise<LoadedSession>) {
    this.gate = new RunGate(runsPerSession);
    this.ready = load(this);
    // Waiters may all have been cancelled; the failure still reaches each one that waits.
    this.ready.catch(() => undefined);
  }
}

/** What a run's outputs are: float32 (every model) or uint8 (graphs that convert their own pixels). */
type OutputType = "float32" | "uint8";
interface OutputTensor {
  float32: TensorData;
  uint8: ByteTensor;
}

const MiB = 1024 * 1024;
const mib = (bytes: number) => Math.round((bytes / MiB) * 10) / 10;

/**
 * The session options of every model the service loads (arena settings aside, chosen per model),
 * exported so the benches' bare sessions run as the service's do.
 */
export function serviceSessionOptions(threads: number, spinning = false) {
  return {
    executionProviders: ["cpu"],
    intraOpNumThreads: threads,
    // Graphs here are chains of convolutions; parallel branches are rare, so one inter-op thread
    // avoids a second pool competing with the intra-op threads for the same cores.
    interOpNumThreads: 1,
    executionMode: "sequential" as const,
    graphOptimizationLevel: "all" as const,
    // Old exporters list initializers as graph inputs, and onnxruntime warns once per initializer
    // (about a hundred lines for ESPCN); errors still reach the log through the thrown exception.
    logSeverityLevel: 3 as const,
    // By default onnxruntime's intra-op threads busy-wait for more work after each run; on a machine
    // whose cores are shared (the JavaScript and libvips steps around a run, other processes) that
    // spinning takes the cores from them: a run burns several times its CPU waiting, for little or
    // no time saved (bench/onnx-spinning.ts and bench/session-options.ts measure both).
    ...(spinning ? {} : { extra: { session: { intra_op: { allow_spinning: "0" } } } }),
  };
}

export class ModelRuntime {
  private readonly entries = new Map<string, SessionEntry>();
  private readonly sessionOptions: ReturnType<typeof serviceSessionOptions>;
  private thread: InferenceThread | undefined;
  private nextSessionId = 1;
  private readonly runsPerSession: number;
  private readonly idleReleaseMs: number;
  private readonly onIdleRelease: () => void;
  /** Sessions released for having been idle. */
  private idleReleases = 0;
  private readonly logger: RuntimeLogger;
  private readonly budget: number;
  private readonly processLimit: number;
  /** Each model's cost as measured in this process, by key; outlives the model's evictions. */
  private readonly measured = new Map<string, MeasuredCost>();
  /** The process's peak as the inference thread saw it before resetting the kernel's mark. */
  private threadPeak = 0;
  /** Work holding a session, awaited by dispose. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Releases of evicted sessions still under way, awaited by dispose. */
  private readonly releasing = new Set<Promise<void>>();
  private useCounter = 0;
  private hits = 0;
  private loads = 0;
  private evictions = 0;
  private disposing: Promise<void> | undefined;

  constructor(options: ModelRuntimeOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1) {
      throw new RangeError(`Expected integer of at least 1 for threads but received ${options.threads}`);
    }
    if (!(options.memoryBudgetBytes > 0)) {
      throw new RangeError(`Expected a positive number of bytes for memoryBudgetBytes but received ${options.memoryBudgetBytes}`);
    }
    this.budget = options.memoryBudgetBytes;
    this.processLimit = this.budget + (options.processMarginBytes ?? PROCESS_MARGIN_BYTES);
    this.logger = options.logger;
    this.runsPerSession = options.runsPerSession ?? 1;
    this.idleReleaseMs = options.idleReleaseMs ?? 0;
    this.onIdleRelease = options.onIdleRelease ?? (() => {});
    if (!(this.idleReleaseMs >= 0)) throw new RangeError(`Expected a non-negative number of ms for idleReleaseMs but received ${this.idleReleaseMs}`);
    if (!Number.isInteger(this.runsPerSession) || this.runsPerSession < 1) {
      throw new RangeError(`Expected integer of at least 1 for runsPerSession but received ${this.runsPerSession}`);
    }
    observeRuntime(this);
    this.sessionOptions = serviceSessionOptions(options.threads, options.spinning);
  }

  /** A handle on the model `key`; `load` is called only when the session must be (re)created. */
  model(key: string, load: ModelLoader, options: ModelOptions = {}): ModelHandle {
    const pin = <T>(work: (model: PinnedModel) => Promise<T>, runOptions: RunOptions = {}) =>
      this.pin(key, load, options, work, runOptions.signal);
    return {
      key,
      pin,
      run: (feeds, runOptions = {}) => pin((model) => model.run(feeds, runOptions), runOptions),
      signature: (runOptions = {}) => pin(async (model) => model.signature, runOptions),
    };
  }

  /** Shorthand for `model(key, load).run(feeds, options)`. */
  run(key: string, load: ModelLoader, feeds: FeedMap, options: RunOptions = {}): Promise<TensorMap> {
    return this.model(key, load).run(feeds, options);
  }

  stats(): RuntimeStats {
    const sessions = [...this.entries.values()]
      .sort((a, b) => a.lastUse - b.lastUse)
      .map((entry) => ({
        key: entry.key,
        loaded: entry.loaded !== undefined,
        modelBytes: entry.modelBytes,
        estimatedBytes: entry.estimatedBytes,
        chargedBytes: this.charge(entry),
        measured: { ...this.measured.get(entry.key) },
        running: entry.gate.running,
        waiting: entry.gate.waiting,
        users: entry.users,
        runs: entry.runs,
      }));
    return {
      sessions,
      loadedSessions: sessions.filter((s) => s.loaded).length,
      estimatedBytes: sessions.reduce((sum, session) => sum + session.estimatedBytes, 0),
      chargedBytes: this.totalCharged(),
      budgetBytes: this.budget,
      processLimitBytes: this.processLimit,
      residentBytes: residentBytes(),
      peakResidentBytes: processPeakBytes(this.threadPeak),
      hits: this.hits,
      loads: this.loads,
      evictions: this.evictions,
      idleReleases: this.idleReleases,
    };
  }

  /**
   * Refuses new work, rejects runs still queued, waits for running runs and loads to settle, then
   * releases every session. Calling it again returns the same promise.
   */
  dispose(): Promise<void> {
    this.disposing ??= (async () => {
      for (const entry of this.entries.values()) entry.gate.rejectWaiting(this.disposedError());
      while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
      // Loads nobody waits for any more (all their callers cancelled) still finish before the release.
      await Promise.allSettled([...this.entries.values()].map((entry) => entry.ready));
      const entries = [...this.entries.values()];
      for (const entry of entries) clearTimeout(entry.idleTimer);
      this.entries.clear();
      await Promise.allSettled([
        ...entries.map((entry) => (entry.loaded ? this.thread?.release(entry.loaded.id) : undefined)),
        ...this.releasing,
      ]);
      await this.thread?.terminate();
      this.thread = undefined;
      this.logger.debug({ sessions: entries.length }, "model runtime disposed");
    })();
    return this.disposing;
  }

  private disposedError(): AtelierError {
    return new AtelierError("WORKER_UNAVAILABLE", "The model runtime has been shut down; this worker no longer runs models.");
  }

  private async pin<T>(
    key: string,
    load: ModelLoader,
    options: ModelOptions,
    work: (model: PinnedModel) => Promise<T>,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    if (this.disposing) throw this.disposedError();
    throwIfCancelled(signal);
    const entry = this.acquire(key, load, options);
    const job = (async () => {
      try {
        const loaded = await untilCancelled(entry.ready, signal);
        return await work({
          key,
          signature: loaded.signature,
          run: (feeds, runOptions = {}) => this.runOn(entry, loaded, feeds, runOptions, "float32"),
          runToBytes: (feeds, runOptions = {}) => this.runOn(entry, loaded, feeds, runOptions, "uint8"),
        });
      } finally {
        this.releaseUse(entry);
      }
    })();
    this.inFlight.add(job);
    try {
      return await job;
    } finally {
      this.inFlight.delete(job);
    }
  }

  /** Takes a use of the session for `key`, starting its load when there is none. */
  private acquire(key: string, load: ModelLoader, options: ModelOptions): SessionEntry {
    let entry = this.entries.get(key);
    if (entry) this.hits++;
    else {
      entry = new SessionEntry(key, this.runsPerSession, (created) => this.load(created, load, options));
      this.entries.set(key, entry);
    }
    clearTimeout(entry.idleTimer);
    entry.idleTimer = undefined;
    entry.users++;
    entry.lastUse = ++this.useCounter;
    if (currentWorkPriority() === "normal") entry.calledFor = true;
    return entry;
  }

  private releaseUse(entry: SessionEntry): void {
    entry.users--;
    entry.lastUse = ++this.useCounter;
    if (entry.users === 0) {
      this.evictOver(this.budget, entry);
      this.evictWhileProcessOver(0, entry);
      if (entry.releaseWhenIdle && entry.calledFor && this.idleReleaseMs > 0 && this.entries.get(entry.key) === entry) this.releaseWhenIdle(entry);
    }
  }

  /** Evicts `entry` once it has stayed idle for the idle-release time (a use in between cancels it). */
  private releaseWhenIdle(entry: SessionEntry): void {
    clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => {
      entry.idleTimer = undefined;
      if (entry.users > 0 || entry.loaded === undefined || this.entries.get(entry.key) !== entry || this.disposing) return;
      this.idleReleases++;
      this.logger.info({ model: entry.key, idleMs: this.idleReleaseMs }, "model released after being idle");
      this.evict(entry);
      this.onIdleRelease();
    }, this.idleReleaseMs);
    // A pending release must not keep a process alive on its own.
    entry.idleTimer.unref();
  }

  private async load(entry: SessionEntry, load: ModelLoader, options: ModelOptions): Promise<LoadedSession> {
    const started = performance.now();
    try {
      let source: Uint8Array | ModelFile | undefined = await this.read(entry, load);
      if (this.disposing) throw this.disposedError();
      const size = source instanceof Uint8Array ? source.byteLength : source.bytes;
      entry.modelBytes = size;
      entry.workingBytes = options.workingBytes ?? 0;
      entry.estimatedBytes = estimateSessionBytes(size, options.workingBytes);
      await this.makeRoomFor(entry);
      if (this.disposing) throw this.disposedError();
      const thread = this.inferenceThread();
      const id = this.nextSessionId++;
      let loaded: LoadedSession;
      try {
        const settings = options.session ?? DEFAULT_SESSION_SETTINGS;
        entry.releaseWhenIdle = settings.releaseWhenIdle === true;
        const created = await thread.create(id, source, sessionOptionsFor(this.sessionOptions, settings));
        // The thread has its own copy: this one (84 MB for ISNet) goes now rather than at some later
        // collection that might come in the middle of the first run's peak.
        source = undefined;
        collectGarbage();
        loaded = { id, signature: created.signature };
        this.learn(entry.key, created.memory, "load");
      } catch (error) {
        if (error instanceof AtelierError) throw error;
        throw new AtelierError("INTERNAL", `Model "${entry.key}" is not a valid ONNX model for this runtime.`, { cause: error });
      }
      try {
        if (options.warmUp) {
          validateFeeds(entry.key, loaded.signature.inputs, options.warmUp);
          await this.execute(entry, loaded, options.warmUp, "float32");
        }
        if (this.disposing) throw this.disposedError();
      } catch (error) {
        await thread.release(id);
        throw error;
      }
      entry.loaded = loaded;
      this.loads++;
      modelLoads.inc({ ...sessionLabels(entry.key), outcome: "loaded" });
      modelLoadDuration.observe(sessionLabels(entry.key), (performance.now() - started) / 1000);
      this.logger.info(
        {
          model: entry.key,
          modelMiB: mib(entry.modelBytes),
          estimatedMiB: mib(entry.estimatedBytes),
          chargedMiB: mib(this.charge(entry)),
          residentMiB: mib(residentBytes()),
          ms: Math.round(performance.now() - started),
        },
        "model loaded",
      );
      return loaded;
    } catch (error) {
      // A failed load leaves nothing behind, so the next use tries again.
      modelLoads.inc({ ...sessionLabels(entry.key), outcome: "failed" });
      if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
      entry.estimatedBytes = 0;
      throw error;
    } finally {
      entry.users--;
    }
  }

  private async read(entry: SessionEntry, load: ModelLoader): Promise<Uint8Array | ModelFile> {
    try {
      // Through a promise, so a loader that throws synchronously fails like one that rejects, and
      // only after acquire() has registered the entry that the failure path removes.
      return await Promise.resolve().then(load);
    } catch (error) {
      if (error instanceof AtelierError) throw error;
      throw new AtelierError("INTERNAL", `Model "${entry.key}" could not be read.`, { cause: error });
    }
  }

  /**
   * Evicts idle sessions, least recently used first, until `entry`'s charge fits the budget and the
   * process's resident memory plus that charge fits the process limit. Evicted sessions are released
   * before the process is measured, so what they gave back is seen.
   */
  private async makeRoomFor(entry: SessionEntry): Promise<void> {
    this.evictOver(this.budget, entry);
    await Promise.allSettled([...this.releasing]);
    while (this.evictWhileProcessOver(this.charge(entry), entry, 1)) await Promise.allSettled([...this.releasing]);
    const resident = residentBytes();
    if (resident + this.charge(entry) > this.processLimit) {
      this.logger.warn(
        { model: entry.key, residentMiB: mib(resident), chargedMiB: mib(this.charge(entry)), processLimitMiB: mib(this.processLimit) },
        "process resident memory would exceed the model budget plus margin and no idle session is left to evict",
      );
    }
    const total = this.totalCharged();
    if (total <= this.budget) return;
    if (this.charge(entry) > this.budget) {
      this.logger.warn(
        { model: entry.key, chargedMiB: mib(this.charge(entry)), budgetMiB: mib(this.budget), otherSessions: this.entries.size - 1 },
        "model is larger than the whole model memory budget; loading it with no other idle session resident",
      );
    } else {
      this.logger.warn(
        { model: entry.key, totalMiB: mib(total), budgetMiB: mib(this.budget), busySessions: this.entries.size - 1 },
        "model memory budget exceeded while other sessions are busy; idle ones will be evicted as they finish",
      );
    }
  }

  /** Evicts idle loaded sessions other than `keep`, least recently used first, while their charges exceed `limit`. */
  private evictOver(limit: number, keep: SessionEntry): void {
    while (this.totalCharged() > limit) {
      const victim = this.leastRecentlyUsedIdle(keep);
      if (victim === undefined) return;
      this.evict(victim);
    }
  }

  /**
   * Evicts idle loaded sessions other than `keep`, least recently used first, while the process's
   * resident memory, less what the sessions evicted here are charged, plus `needed` is over the
   * process limit; at most `most` of them. Returns how many it evicted.
   */
  private evictWhileProcessOver(needed: number, keep: SessionEntry, most = Infinity): number {
    let projected = residentBytes() + needed;
    let evicted = 0;
    while (projected > this.processLimit && evicted < most) {
      const victim = this.leastRecentlyUsedIdle(keep);
      if (victim === undefined) break;
      projected -= this.charge(victim);
      this.evict(victim);
      evicted++;
    }
    return evicted;
  }

  private leastRecentlyUsedIdle(keep: SessionEntry): SessionEntry | undefined {
    let victim: SessionEntry | undefined;
    for (const candidate of this.entries.values()) {
      if (candidate === keep || candidate.users > 0 || candidate.loaded === undefined) continue;
      if (victim === undefined || candidate.lastUse < victim.lastUse) victim = candidate;
    }
    return victim;
  }

  private evict(entry: SessionEntry): void {
    clearTimeout(entry.idleTimer);
    entry.idleTimer = undefined;
    this.entries.delete(entry.key);
    this.evictions++;
    this.logger.debug({ model: entry.key, chargedMiB: mib(this.charge(entry)) }, "model evicted");
    const release = (this.thread?.release(entry.loaded!.id) ?? Promise.resolve(undefined)).then(
      (reading) => {
        if (reading) this.threadPeak = Math.max(this.threadPeak, reading.processPeak);
      },
      (error: unknown) => {
        this.logger.warn({ model: entry.key, err: error }, "releasing an evicted model failed");
      },
    );
    this.releasing.add(release);
    void release.finally(() => this.releasing.delete(release));
  }

  /** What `entry` is charged against the budget (0 until its model is read). */
  private charge(entry: SessionEntry): number {
    if (entry.estimatedBytes === 0) return 0;
    return chargedBytes(entry.modelBytes, entry.workingBytes, this.measured.get(entry.key));
  }

  private totalCharged(): number {
    let total = 0;
    for (const entry of this.entries.values()) total += this.charge(entry);
    return total;
  }

  /**
   * Takes what the inference thread measured around a load or run of `key` into its cost: a load's
   * growth replaces the last one's; a run's peak counts if it is the highest yet.
   */
  private learn(key: string, reading: MemoryReading, part: "load" | "run"): void {
    this.threadPeak = Math.max(this.threadPeak, reading.processPeak);
    const cost = this.measured.get(key) ?? {};
    const peak = Math.max(0, reading.peak - reading.before);
    if (part === "load") {
      cost.loadBytes = Math.max(0, reading.after - reading.before);
      cost.loadPeakBytes = peak;
    } else cost.runPeakBytes = Math.max(cost.runPeakBytes ?? 0, peak);
    this.measured.set(key, cost);
  }

  private async runOn<T extends OutputType>(
    entry: SessionEntry,
    loaded: LoadedSession,
    feeds: FeedMap,
    options: RunOptions,
    outputType: T,
  ): Promise<Record<string, OutputTensor[T]>> {
    if (this.disposing) throw this.disposedError();
    validateFeeds(entry.key, loaded.signature.inputs, feeds);
    const exit = await entry.gate.enter(options.signal, currentWorkRank());
    try {
      const outputs = await this.execute(entry, loaded, feeds, outputType, options.handOver);
      entry.runs++;
      return outputs;
    } finally {
      exit();
    }
  }

  /** The inference thread, started on first need and again after it was lost. */
  private inferenceThread(): InferenceThread {
    if (this.thread?.alive) return this.thread;
    const thread = new InferenceThread((error) => {
      // Its sessions died with it: forget them so the next use loads afresh in a new thread.
      this.logger.warn({ err: error }, "inference thread lost; models will reload on next use");
      for (const [key, entry] of this.entries) if (entry.loaded) this.entries.delete(key);
    });
    this.thread = thread;
    return thread;
  }

  /** One onnxruntime run with feeds already admitted; also used for the warm-up. */
  private async execute<T extends OutputType>(
    entry: SessionEntry,
    loaded: LoadedSession,
    feeds: FeedMap,
    outputType: T,
    handOver = false,
  ): Promise<Record<string, OutputTensor[T]>> {
    let outputs: Record<string, TensorData | ByteTensor>;
    const stopTimer = inferenceDuration.startTimer(sessionLabels(entry.key));
    try {
      const reply = await this.inferenceThread().run(loaded.id, feeds, handOver);
      stopTimer();
      outputs = reply.outputs;
      this.learn(entry.key, reply.memory, "run");
    } catch (error) {
      if (error instanceof AtelierError) throw error;
      throw new AtelierError("INTERNAL", `Model "${entry.key}" failed while running.`, { cause: error });
    }
    const expected = outputType === "uint8" ? Uint8Array : Float32Array;
    for (const [name, value] of Object.entries(outputs)) {
      if (!(value.data instanceof expected)) {
        throw new AtelierError("INTERNAL", `Model "${entry.key}": output tensor "${name}" is not ${outputType}, the type this run asked for.`);
      }
    }
    return outputs as Record<string, OutputTensor[T]>;
  }
}
