/**
 * The request context a job runs in: the router's own procedures called as the key that submitted
 * the job, with the quota already charged at submission, and worker calls that report progress.
 * The procedures cannot tell a job from a synchronous request, so the result is the same body.
 */
import type { AtelierServices, RequestContext } from "../server/context.js";
import type { ApiKeyRecord, ApiKeyStore } from "../server/keys/api-key-store.js";
import type { QuotaStore } from "../server/quota/quota-store.js";
import type { ProgressClients, ProgressListener } from "../server/workers/progress-clients.js";
import type { WorkerClients } from "../server/workers/worker-clients.js";

/** The key store seen by a context whose caller is already known to be `apiKey`. */
export function authenticatedAs(keys: ApiKeyStore, apiKey: ApiKeyRecord): ApiKeyStore {
  return {
    authenticate: async () => apiKey,
    create: (input) => keys.create(input),
    list: () => keys.list(),
    get: (id) => keys.get(id),
    revoke: (id) => keys.revoke(id),
    setHourlyLimit: (id, limit) => keys.setHourlyLimit(id, limit),
    close: async () => undefined,
  };
}

/**
 * A quota that grants without counting: the job was counted when it was submitted, and the runner
 * alone gives it back when the job fails with a server error.
 */
function prepaidQuota(windowSeconds: number): QuotaStore {
  const granted = async (_keyId: string, limit: number) => ({ allowed: true, limit, remaining: limit, resetSeconds: windowSeconds, windowSeconds });
  return { consume: granted, refund: granted, close: async () => undefined };
}

function reportingWorkers(workers: WorkerClients, progress: ProgressClients, onProgress: ProgressListener): WorkerClients {
  return {
    ...workers,
    generate: (request, options) => progress.generate(request, options ?? {}, onProgress),
  };
}

/** Bearer value a job context presents; {@link authenticatedAs} accepts it without a lookup. */
const JOB_CREDENTIAL = "Bearer job";

export function jobContext(
  services: AtelierServices,
  progress: ProgressClients,
  job: { requestId: string; apiKey: ApiKeyRecord },
  signal: AbortSignal,
  onProgress: ProgressListener,
): RequestContext {
  return {
    requestId: job.requestId,
    authorization: JOB_CREDENTIAL,
    setHeader: () => undefined,
    signal,
    services: {
      ...services,
      keys: authenticatedAs(services.keys, job.apiKey),
      quota: prepaidQuota(services.config.quota.windowSeconds),
      workers: reportingWorkers(services.workers, progress, onProgress),
    },
  };
}
