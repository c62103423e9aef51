/** Standalone worker process: `npm run start:workers`. The router reaches it via ATELIER_*_WORKER. */
import { ConfigError, loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { Readiness } from "../operations/health/readiness.js";
import { startOperations } from "../operations/service-operations.js";
import { startWorkerServer } from "../workers/worker-server.js";

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, "atelier-worker");
  const worker = await startWorkerServer(config, logger);
  // Its readiness is the gRPC health service, which turns NOT_SERVING as the drain begins.
  await startOperations(config, logger, { readiness: new Readiness(), hostsWorker: true, close: () => worker.shutdown(config.shutdownGraceMs) });
  if (config.inference.warmUp) worker.warmUp.start();
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
