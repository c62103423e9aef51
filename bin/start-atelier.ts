/**
 * Starts the whole service in this process: a worker for every capability that has no configured
 * worker address (called directly by the router, and served on loopback gRPC as well), the router's
 * stores and clients, and the HTTP facade.
 *
 * The worker is imported only when one is started here: a router whose workers all run elsewhere
 * never loads onnxruntime, sharp or the model code (test/facade/router-imports.test.ts holds it to that).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { WORKER_SERVICES, type AtelierConfig, type WorkerServiceName } from "../core/config.js";
import { createLogger, type Logger } from "../core/logger.js";
import { packageVersion } from "../core/package-root.js";
import type { AtelierServices } from "../server/context.js";
import { createImageSource } from "../server/image-source/image-source.js";
import type { AccountStore } from "../server/accounts/account-store.js";
import { openAccountStore } from "../server/accounts/open-account-store.js";
import type { ApiKeyStore } from "../server/keys/api-key-store.js";
import { openApiKeyStore } from "../server/keys/open-api-key-store.js";
import { openQuotaStore } from "../server/quota/open-quota-store.js";
import type { QuotaStore } from "../server/quota/quota-store.js";
import { ModelInstalls } from "../server/model-installs/model-installs.js";
import { openUsageStore } from "../server/usage/open-usage-store.js";
import { UsageService } from "../server/usage/usage-service.js";
import { createWorkerClients } from "../server/workers/worker-clients.js";
import { compileOperationSchemas } from "../server/compile-operation-schemas.js";
import { withLocalCalls } from "../server/workers/local-worker-clients.js";
import type { InProcessWorker } from "../transport/local-worker.js";
import { HubClient } from "../models/store/hub-files.js";
import type { RunningWorker } from "../workers/worker-server.js";
import type { WorkerContext } from "../workers/worker-context.js";
import { serviceReadiness } from "../operations/health/service-readiness.js";
import { warmUpCheck } from "../operations/health/warm-up-check.js";
import type { Readiness } from "../operations/health/readiness.js";
import { createFacadeApp, JSON_BODY_PREFIXES } from "../facade/app.js";
import { continueWhenBodyIsRead } from "../facade/expect-continue.js";
import { httpServerOptions } from "../facade/http-server-options.js";
import { startJobs, type RunningJobs } from "../jobs/start-jobs.js";
import { FirstAdminSetup } from "../console/server/first-admin-setup.js";
import { setServiceHeapGrowth } from "../core/heap-growth.js";

export interface RunningAtelier {
  /** Base URL of the HTTP facade, e.g. `http://127.0.0.1:8080`. */
  url: string;
  port: number;
  services: AtelierServices;
  /** The background jobs (queue, runner) of this router. */
  jobs: RunningJobs;
  /** The in-process worker, when one was started. */
  worker: RunningWorker | undefined;
  /** The HTTP listener (graceful shutdown stops it first). */
  server: http.Server;
  /** What `/readyz` reports; more checks can be added (model provisioning). */
  readiness: Readiness;
  /** The console's one-time link for creating the first administrator (the start banner prints it while no account exists). */
  firstAdmin: FirstAdminSetup;
  /**
   * Stops and closes everything. Webhook attempts in flight may run until `graceEndsAtMs` (epoch ms;
   * ATELIER_SHUTDOWN_GRACE_MS from now when omitted) and are cut off then, to be retried later.
   */
  close(graceEndsAtMs?: number): Promise<void>;
}

async function startInProcessWorker(config: AtelierConfig, logger: Logger, context?: WorkerContext): Promise<RunningWorker> {
  const { startWorkerServer } = await import("../workers/worker-server.js");
  return startWorkerServer(config, logger.child({ part: "worker" }), { host: "127.0.0.1", port: 0 }, context);
}

export interface StartOptions {
  /** The in-process worker's models, runtime and queue (benches run bare sessions in the very runtime the service uses). */
  workerContext?: WorkerContext;
}

export async function startAtelier(config: AtelierConfig, logger: Logger = createLogger(config.logLevel), options: StartOptions = {}): Promise<RunningAtelier> {
  setServiceHeapGrowth();
  const missing = WORKER_SERVICES.filter((name) => config.workers.addresses[name] === undefined);
  const worker = missing.length > 0 ? await startInProcessWorker(config, logger, options.workerContext) : undefined;
  // The router calls the worker in this process directly; gRPC stays for workers elsewhere and for other callers.
  const local: InProcessWorker | undefined = worker && { worker: worker.local, services: new Set(missing) };
  const addresses = Object.fromEntries(
    WORKER_SERVICES.map((name) => [name, config.workers.addresses[name] ?? worker!.address]),
  ) as Record<WorkerServiceName, string>;

  // PostgreSQL and Redis when configured (several routers share them), else SQLite in dataDir.
  // Either being unreachable stops start-up, with what was already started shut down.
  let keys: ApiKeyStore | undefined;
  let accounts: AccountStore | undefined;
  let quota: QuotaStore | undefined;
  let usage: UsageService;
  try {
    keys = await openApiKeyStore(config, { logger: logger.child({ part: "keys" }) });
    accounts = await openAccountStore(config, { logger: logger.child({ part: "accounts" }) });
    quota = await openQuotaStore(config, { logger: logger.child({ part: "quota" }) });
    const usageLogger = logger.child({ part: "usage" });
    usage = new UsageService(await openUsageStore(config, { logger: usageLogger }), { ...config.usage, logger: usageLogger });
  } catch (error) {
    await keys?.close();
    await accounts?.close();
    await quota?.close();
    await worker?.shutdown();
    throw error;
  }
  // The services this process serves itself go over gRPC only if a call is made that way.
  const remoteClients = createWorkerClients(config, addresses, new Set(WORKER_SERVICES.filter((name) => !missing.includes(name))));
  const services: AtelierServices = {
    config,
    logger,
    keys,
    accounts,
    quota,
    usage,
    modelInstalls: new ModelInstalls({
      modelsDir: config.modelsDir,
      from: config.modelMirror,
      hub: new HubClient({ baseUrl: config.modelHub.url, token: config.modelHub.token }),
      logger: logger.child({ part: "model-installs" }),
    }),
    workers: local ? withLocalCalls(config, remoteClients, local) : remoteClients,
    images: createImageSource(config),
  };
  const ready = serviceReadiness(config, keys, addresses, worker !== undefined);
  let jobs: RunningJobs;
  try {
    jobs = await startJobs(services);
  } catch (error) {
    await ready.close();
    services.workers.close();
    await worker?.shutdown();
    await keys.close();
    await quota.close();
    throw error;
  }
  const firstAdmin = new FirstAdminSetup(accounts);
  const app = createFacadeApp(services, packageVersion(), { readiness: ready.readiness, jobs: jobs.service, firstAdmin });
  const server = http.createServer(httpServerOptions(config), app);
  server.on("checkContinue", continueWhenBodyIsRead(app, JSON_BODY_PREFIXES));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.http.port, config.http.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.http.host.includes(":") ? `[${config.http.host}]` : config.http.host;
  const url = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`;
  logger.info({ url, workers: addresses }, "atelier listening");
  // Only now that it serves, so warming never delays the first requests or the start itself.
  const schemasCompiling = new AbortController();
  const schemasCompiled = config.inference.warmUp
    ? compileOperationSchemas(schemasCompiling.signal).catch((error: unknown) => logger.warn({ err: error }, "compiling the operations' parsers failed; their first calls compile them"))
    : Promise.resolve();
  if (worker && config.inference.warmUp) {
    ready.readiness.add(warmUpCheck(worker.warmUp));
    worker.warmUp.start();
  }

  return {
    url,
    port,
    services,
    jobs,
    worker,
    server,
    readiness: ready.readiness,
    firstAdmin,
    close: async (graceEndsAtMs = Date.now() + config.shutdownGraceMs) => {
      ready.readiness.startDraining();
      schemasCompiling.abort();
      await schemasCompiled;
      await jobs.stop(graceEndsAtMs);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await ready.close();
      await jobs.close();
      services.workers.close();
      await worker?.shutdown(config.shutdownGraceMs);
      await services.keys.close();
      await services.accounts.close();
      await services.quota.close();
      await services.usage.close();
      await services.modelInstalls.close();
    },
  };
}
