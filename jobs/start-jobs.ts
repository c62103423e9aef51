/**
 * The jobs system of one router: the store, the live event hub and the scheduler (SQLite in the
 * data folder, or shared by every router through Redis when ATELIER_REDIS_URL is set), the runner
 * and the service the HTTP routes use.
 */
import type { AtelierServices } from "../server/context.js";
import { AddressPolicy } from "../server/image-source/address-policy.js";
import { JobEventHub } from "./job-events.js";
import { JobRunner, type JobScheduler } from "./job-runner.js";
import { JobService } from "./job-service.js";
import type { JobStore } from "./job-store.js";
import { LocalJobScheduler } from "./local-job-scheduler.js";
import { SqliteJobStore } from "./sqlite-job-store.js";
import { WebhookDeliverer } from "./webhooks/webhook-deliverer.js";

/** Failed webhooks are retried for a day (Standard Webhooks' recommendation). */
const WEBHOOK_RETRY_WINDOW_MS = 24 * 3_600_000;

export interface RunningJobs {
  service: JobService;
  /**
   * Stops running jobs (they stay queued for the next start), lets webhook attempts in flight run
   * until `graceEndsAtMs` (epoch ms; now when omitted; cut off then, retried later) and ends open
   * event streams.
   */
  stop(graceEndsAtMs?: number): Promise<void>;
  /** Releases the store; call after the HTTP server has closed. */
  close(): Promise<void>;
}

interface JobQueueBackend {
  store: JobStore;
  hub: JobEventHub;
  scheduler: JobScheduler;
  close(): Promise<void>;
}

async function openBackend(services: AtelierServices): Promise<JobQueueBackend> {
  const { config } = services;
  if (config.jobs.redisUrl !== undefined) {
    // Loaded only when used: BullMQ is large and the embedded queue never needs it.
    const { openRedisJobQueue } = await import("./redis-job-queue.js");
    return openRedisJobQueue(config.jobs.redisUrl, config.jobs, services.logger.child({ part: "jobs" }));
  }
  const store = new SqliteJobStore(config.dataDir);
  return { store, hub: new JobEventHub(), scheduler: new LocalJobScheduler(store, config.jobs.concurrency), close: () => store.close() };
}

/** Jobs call the workers through `services.workers`, with progress (server/workers/worker-clients.ts). */
export async function startJobs(services: AtelierServices): Promise<RunningJobs> {
  const { config } = services;
  const backend = await openBackend(services);
  const { store, hub } = backend;
  const webhooks = new WebhookDeliverer(
    store,
    new AddressPolicy(config.fetch.allowedPrivateHosts),
    { retryBaseMs: config.jobs.webhookRetryBaseMs, timeoutMs: config.jobs.webhookTimeoutMs, windowMs: WEBHOOK_RETRY_WINDOW_MS },
    services.logger.child({ part: "webhooks" }),
  );
  const runner = new JobRunner(store, services, hub, backend.scheduler, {
    onFinished: (job) => void webhooks.enqueue(job).catch((error: unknown) => services.logger.warn({ err: error, jobId: job.id }, "webhook not queued")),
    resultRetentionMs: config.jobs.resultRetentionMs,
    recordRetentionMs: config.jobs.recordRetentionMs,
  });
  const service = new JobService(store, runner, hub, services, new AddressPolicy(config.fetch.allowedPrivateHosts));
  try {
    await runner.start();
    webhooks.start();
  } catch (error) {
    await runner.stop();
    await backend.close();
    throw error;
  }
  return {
    service,
    stop: async (graceEndsAtMs) => {
      await runner.stop();
      await webhooks.stop(graceEndsAtMs);
      hub.shutdown();
    },
    close: async () => {
      await runner.stop();
      await backend.close();
    },
  };
}
