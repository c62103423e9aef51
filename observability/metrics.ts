/**
 * Every Prometheus metric the service exports, defined once. Router and worker code record into
 * these through small hooks; gauges that describe live objects (queues, model runtimes, worker
 * reachability) are read when Prometheus scrapes, so nothing polls in between.
 *
 * The default registry is used on purpose: one process serves one `/metrics`, whether it hosts the
 * router, a worker, or both (`npm start`).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, register } from "prom-client";

export { register as metricsRegistry };

collectDefaultMetrics({ prefix: "atelier_" });

/** Seconds; from a fast upscale (tens of ms) to a slow generation (minutes). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export const httpRequests = new Counter({
  name: "atelier_http_requests_total",
  help: "HTTP requests answered, by operation (tRPC procedure path, shared by REST and tRPC), transport and status.",
  labelNames: ["operation", "transport", "status"] as const,
});

export const httpRequestDuration = new Histogram({
  name: "atelier_http_request_duration_seconds",
  help: "Time from the request's arrival to the end of its response.",
  labelNames: ["operation", "transport", "status"] as const,
  buckets: DURATION_BUCKETS,
});

export const httpRequestsInFlight = new Gauge({
  name: "atelier_http_requests_in_flight",
  help: "HTTP requests being served now.",
});

export const quotaRejections = new Counter({
  name: "atelier_quota_rejections_total",
  help: "Requests refused with 429 because the key's quota was spent.",
  labelNames: ["operation"] as const,
});

export const inferenceDuration = new Histogram({
  name: "atelier_inference_duration_seconds",
  help: "Time of one model run, by model and stage (the graph: e.g. unet, vae_decoder, or model).",
  labelNames: ["model", "stage"] as const,
  buckets: DURATION_BUCKETS,
});

export const modelLoads = new Counter({
  name: "atelier_model_loads_total",
  help: "Model sessions loaded (or failed to load), by model and stage.",
  labelNames: ["model", "stage", "outcome"] as const,
});

export const modelLoadDuration = new Histogram({
  name: "atelier_model_load_duration_seconds",
  help: "Time to read and initialise a model session.",
  labelNames: ["model", "stage"] as const,
  buckets: DURATION_BUCKETS,
});

export const workerCalls = new Counter({
  name: "atelier_worker_calls_total",
  help: "gRPC calls a worker answered, by method and outcome code.",
  labelNames: ["method", "code"] as const,
});

export const workerCallDuration = new Histogram({
  name: "atelier_worker_call_duration_seconds",
  help: "Time a worker spent on a gRPC call, queueing included.",
  labelNames: ["method"] as const,
  buckets: DURATION_BUCKETS,
});

export const queueWait = new Histogram({
  name: "atelier_queue_wait_seconds",
  help: "Time inference jobs waited in a worker's queue before starting.",
  buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
});

export const queueRejections = new Counter({
  name: "atelier_queue_rejections_total",
  help: "Inference jobs refused because a worker's queue was full (503 OVERLOADED).",
});

/** Things whose current state the scrape reads; weakly held so a closed object just disappears. */
interface QueueLike {
  readonly waiting: number;
  readonly running: number;
}
interface RuntimeLike {
  stats(): { chargedBytes: number; loadedSessions: number; processLimitBytes: number; peakResidentBytes: number };
}
const queues = new Set<WeakRef<QueueLike>>();
const runtimes = new Set<WeakRef<RuntimeLike>>();

function live<T extends object>(refs: Set<WeakRef<T>>): T[] {
  const found: T[] = [];
  for (const ref of refs) {
    const value = ref.deref();
    if (value === undefined) refs.delete(ref);
    else found.push(value);
  }
  return found;
}

/** Reports `queue`'s depth from now on. */
export function observeQueue(queue: QueueLike): void {
  queues.add(new WeakRef(queue));
}

/** Reports `runtime`'s loaded sessions, their memory and the process's limit and peak from now on. */
export function observeRuntime(runtime: RuntimeLike): void {
  runtimes.add(new WeakRef(runtime));
}

new Gauge({
  name: "atelier_queue_depth",
  help: "Inference jobs in this process's worker queues, by state (waiting, running).",
  labelNames: ["state"] as const,
  collect() {
    const all = live(queues);
    this.set({ state: "waiting" }, all.reduce((sum, queue) => sum + queue.waiting, 0));
    this.set({ state: "running" }, all.reduce((sum, queue) => sum + queue.running, 0));
  },
});

new Gauge({
  name: "atelier_model_memory_bytes",
  help: "Memory the loaded model sessions are charged, as measured in this process where measured, else estimated (the figure ATELIER_MODEL_MEMORY_MB bounds).",
  collect() {
    this.set(live(runtimes).reduce((sum, runtime) => sum + runtime.stats().chargedBytes, 0));
  },
});

new Gauge({
  name: "atelier_model_memory_limit_bytes",
  help: "Resident memory a model load may not push this process past: ATELIER_MODEL_MEMORY_MB plus the process margin.",
  collect() {
    const limits = live(runtimes).map((runtime) => runtime.stats().processLimitBytes);
    if (limits.length > 0) this.set(Math.min(...limits));
  },
});

new Gauge({
  name: "atelier_process_peak_resident_bytes",
  help: "Peak resident memory of this process since it started (the kernel's high-water mark, across the model runtime's resets of it).",
  collect() {
    const peaks = live(runtimes).map((runtime) => runtime.stats().peakResidentBytes);
    if (peaks.length > 0) this.set(Math.max(...peaks));
  },
});

new Gauge({
  name: "atelier_model_sessions",
  help: "Model sessions loaded now.",
  collect() {
    this.set(live(runtimes).reduce((sum, runtime) => sum + runtime.stats().loadedSessions, 0));
  },
});

/** Answers, per worker service, whether it is reachable now (the router's readiness probe). */
type WorkerProbe = () => Promise<Record<string, boolean>>;
let workerProbe: WorkerProbe | undefined;

export function setWorkerProbe(probe: WorkerProbe | undefined): void {
  workerProbe = probe;
}

new Gauge({
  name: "atelier_worker_up",
  help: "1 when the router reaches the worker serving this capability through the gRPC health service, else 0.",
  labelNames: ["service"] as const,
  async collect() {
    if (!workerProbe) return;
    this.reset();
    for (const [service, up] of Object.entries(await workerProbe())) this.set({ service }, up ? 1 : 0);
  },
});

/** Progress of the first-start model provisioning, read at scrape time. */
type ProvisioningProbe = () => { pending: number; installed: number; failed: number; receivedBytes: number; totalBytes: number };
let provisioningProbe: ProvisioningProbe | undefined;

export function setProvisioningProbe(probe: ProvisioningProbe | undefined): void {
  provisioningProbe = probe;
}

new Gauge({
  name: "atelier_provisioning_models",
  help: "Starter models by provisioning state (pending, installed, failed).",
  labelNames: ["state"] as const,
  collect() {
    if (!provisioningProbe) return;
    const progress = provisioningProbe();
    for (const state of ["pending", "installed", "failed"] as const) this.set({ state }, progress[state]);
  },
});

new Gauge({
  name: "atelier_provisioning_bytes",
  help: "Bytes of starter-model weights received so far and expected in all.",
  labelNames: ["kind"] as const,
  collect() {
    if (!provisioningProbe) return;
    const progress = provisioningProbe();
    this.set({ kind: "received" }, progress.receivedBytes);
    this.set({ kind: "total" }, progress.totalBytes);
  },
});

/** `{ model, stage }` of a runtime session key `"<model id>/<graph>"`. */
export function sessionLabels(key: string): { model: string; stage: string } {
  const slash = key.indexOf("/");
  return slash < 0 ? { model: key, stage: "model" } : { model: key.slice(0, slash), stage: key.slice(slash + 1) };
}
