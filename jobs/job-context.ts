/**
 * The request context a job runs in: the operation's own handler (server/procedures/handlers.ts)
 * called with worker calls that report progress. The handler cannot tell a job from a synchronous
 * request, so the result is the same body.
 * As for a REST call, the request's data URLs are read from their bytes and the result's images
 * come back as bytes (RequestContext.bodyStringBytes, keepImage): the runner stores those bytes.
 */
import type { AtelierServices, RequestContext } from "../server/context.js";
import type { ProgressListener, WorkerClients } from "../server/workers/worker-clients.js";

function reportingWorkers(workers: WorkerClients, onProgress: ProgressListener): WorkerClients {
  return {
    ...workers,
    generate: (request, options) => workers.generate(request, { ...options, onProgress }),
    upscale: (request, options) => workers.upscale(request, { ...options, onProgress }),
    styleTransfer: (request, options) => workers.styleTransfer(request, { ...options, onProgress }),
    removeBackground: (request, options) => workers.removeBackground(request, { ...options, onProgress }),
  };
}

/**
 * How a job's images travel: the request's long strings read from their bytes, and the result's
 * images handed over as bytes (job-images.ts), as a REST call's are (RequestContext.keepImage).
 */
export type JobImageHandling = Pick<RequestContext, "keepImage" | "bodyStringBytes">;

export function jobContext(
  services: AtelierServices,
  job: { requestId: string },
  signal: AbortSignal,
  onProgress: ProgressListener,
  images: JobImageHandling = {},
): RequestContext {
  return {
    ...images,
    requestId: job.requestId,
    // The job runs as the key that submitted it, checked and charged then (job-runner.ts).
    authorization: undefined,
    setHeader: () => undefined,
    signal,
    services: {
      ...services,
      workers: reportingWorkers(services.workers, onProgress),
    },
  };
}
