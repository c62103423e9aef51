/**
 * The request context a job runs in: the router's own procedures called as the key that submitted
 * the job, with the quota already charged at submission, and worker calls that report progress.
 * The procedures cannot tell a job from a synchronous request, so the result is the same body.
 * As for a REST call, the request's data URLs are read from their bytes and the result's images
 * come back as bytes (RequestContext.bodyStringBytes, keepImage): the runner stores those bytes.
 */
import type { AtelierServices, RequestContext } from "../server/context.js";
import type { ApiKeyRecord, ApiKeyStore } from "../server/keys/api-key-store.js";
import type { QuotaCharge, QuotaDecision, QuotaStore } from "../server/quota/quota-store.js";
import type { ProgressClients, ProgressListener } from "../server/workers/progress-clients.js";
import type { WorkerClients } from "../server/workers/worker-clients.js";

/**
 * `target` with some methods replaced, every other one its own: a proxy, so the services can grow
 * methods without this module changing.
 */
export function overriding<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}

export function withAuthenticate(keys: ApiKeyStore, authenticate: ApiKeyStore["authenticate"]): ApiKeyStore {
  return overriding(keys, { authenticate });
}

/** The key store seen by a context whose caller is already known to be `apiKey`. */
export function authenticatedAs(keys: ApiKeyStore, apiKey: ApiKeyRecord): ApiKeyStore {
  return withAuthenticate(keys, async () => apiKey);
}

/**
 * A quota that grants without counting: the job was counted when it was submitted, and the runner
 * alone gives it back when the job fails with a server error.
 */
function prepaidQuota(quota: QuotaStore, windowSeconds: number): QuotaStore {
  const granted = async ({ key }: QuotaCharge): Promise<QuotaDecision> => {
    const use = { limit: key.limit, used: 0, remaining: key.limit, resetSeconds: windowSeconds };
    return { allowed: true, bound: "key", limit: use.limit, remaining: use.remaining, resetSeconds: use.resetSeconds, windowSeconds, key: use };
  };
  return overriding(quota, { consume: granted, refund: granted });
}

function reportingWorkers(workers: WorkerClients, progress: ProgressClients, onProgress: ProgressListener): WorkerClients {
  return {
    ...workers,
    generate: (request, options) => progress.generate(request, options ?? {}, onProgress),
    upscale: (request, options) => progress.upscale(request, options ?? {}, onProgress),
    styleTransfer: (request, options) => progress.styleTransfer(request, options ?? {}, onProgress),
    removeBackground: (request, options) => progress.removeBackground(request, options ?? {}, onProgress),
  };
}

/** Bearer value a job context presents; {@link authenticatedAs} accepts it without a lookup. */
const JOB_CREDENTIAL = "Bearer job";

/**
 * How a job's images travel: the request's long strings read from their bytes, and the result's
 * images handed over as bytes (job-images.ts), as a REST call's are (RequestContext.keepImage).
 */
export type JobImageHandling = Pick<RequestContext, "keepImage" | "bodyStringBytes">;

export function jobContext(
  services: AtelierServices,
  progress: ProgressClients,
  job: { requestId: string; apiKey: ApiKeyRecord },
  signal: AbortSignal,
  onProgress: ProgressListener,
  images: JobImageHandling = {},
): RequestContext {
  return {
    ...images,
    requestId: job.requestId,
    authorization: JOB_CREDENTIAL,
    setHeader: () => undefined,
    signal,
    services: {
      ...services,
      keys: authenticatedAs(services.keys, job.apiKey),
      quota: prepaidQuota(services.quota, services.config.quota.windowSeconds),
      workers: reportingWorkers(services.workers, progress, onProgress),
    },
  };
}
