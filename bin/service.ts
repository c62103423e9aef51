/** `npm start`: the whole service on one machine, configured from the environment. */
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { startOperations } from "../operations/service-operations.js";
import { startBanner } from "../operations/start-banner.js";
import { startAtelier } from "./start-atelier.js";

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const atelier = await startAtelier(config, logger);
  const hostsWorker = atelier.worker !== undefined;
  const operations = await startOperations(config, logger, { readiness: atelier.readiness, server: atelier.server, hostsWorker, close: (graceEndsAtMs) => atelier.close(graceEndsAtMs) });
  // After the signal handlers: whoever waits for this line may stop the service at once.
  console.log(await startBanner(config, atelier.url, operations, hostsWorker, atelier.firstAdmin));
}

main().catch((error: unknown) => {
  // Start-up failures (bad configuration, unreachable database) are the operator's to fix: the
  // message says what and where; a stack trace would only bury it.
  console.error(error instanceof Error ? `Atelier could not start: ${error.message}` : error);
  process.exit(1);
});
