/**
 * The jobs system of one router: the store (SQLite in the data folder), the live event hub, the
 * runner and the service the HTTP routes use.
 */
import type { WorkerServiceName } from "../core/config.js";
import type { AtelierServices } from "../server/context.js";
import { AddressPolicy } from "../server/image-source/address-policy.js";
import { createProgressClients } from "../server/workers/progress-clients.js";
import { JobEventHub } from "./job-events.js";
import { JobRunner } from "./job-runner.js";
import { JobService } from "./job-service.js";
import { SqliteJobStore } from "./sqlite-job-store.js";
import { WebhookDeliverer } from "./webhooks/webhook-deliverer.js";

/** Failed webhooks are retried for a day (Standard Webhooks' recommendation). */
const WEBHOOK_RETRY_WINDOW_MS = 24 * 3_600_000;

export interface RunningJobs {
  service: JobService;
  /** Stops running jobs (they stay queued for the next start) and ends open event streams. */
  stop(): Promise<void>;
  /** Releases the store; call after the HTTP server has closed. */
  close(): Promise<void>;
}

export async function startJobs(services: AtelierServices, addresses: Record<WorkerServiceName, string>): Promise<RunningJobs> {
  const { config } = services;
  const store = new SqliteJobStore(config.dataDir);
  const hub = new JobEventHub();
  const progress = createProgressClients(config, addresses);
  const webhooks = new WebhookDeliverer(
    store,
    new AddressPolicy(config.fetch.allowedPrivateHosts),
    { retryBaseMs: config.jobs.webhookRetryBaseMs, timeoutMs: config.jobs.webhookTimeoutMs, windowMs: WEBHOOK_RETRY_WINDOW_MS },
    services.logger.child({ part: "webhooks" }),
  );
  const runner = new JobRunner(store, services, progress, hub, {
    onFinished: (job) => void webhooks.enqueue(job).catch((error: unknown) => services.logger.warn({ err: error, jobId: job.id }, "webhook not queued")),
    concurrency: config.jobs.concurrency,
    resultRetentionMs: config.jobs.resultRetentionMs,
    recordRetentionMs: config.jobs.recordRetentionMs,
  });
  const service = new JobService(store, runner, hub, services, new AddressPolicy(config.fetch.allowedPrivateHosts));
  try {
    await runner.start();
    webhooks.start();
  } catch (error) {
    progress.close();
    await store.close();
    throw error;
  }
  return {
    service,
    stop: async () => {
      await runner.stop();
      await webhooks.stop();
      hub.shutdown();
    },
    close: async () => {
      await runner.stop();
      progress.close();
      await store.close();
    },
  };
}
