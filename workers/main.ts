/** Standalone worker process: `npm run start:workers`. The router reaches it via ATELIER_*_WORKER. */
import { ConfigError, loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { startWorkerServer } from "./worker-server.js";

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, "atelier-worker");
  const worker = await startWorkerServer(config, logger);
  const stop = () => {
    logger.info("worker shutting down");
    void worker.shutdown().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
