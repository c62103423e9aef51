/** `npm start`: the whole service on one machine, configured from the environment. */
import { loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { startAtelier } from "./start-atelier.js";

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const atelier = await startAtelier(config, logger);
  const stop = () => {
    logger.info("shutting down");
    void atelier.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  // After the handlers: whoever waits for this line may stop the service at once.
  console.log(`Atelier is listening on ${atelier.url} (API under ${atelier.url}/api/v1, OpenAPI at ${atelier.url}/api/v1/openapi.json)`);
}

main().catch((error: unknown) => {
  // Start-up failures (bad configuration, unreachable database) are the operator's to fix: the
  // message says what and where; a stack trace would only bury it.
  console.error(error instanceof Error ? `Atelier could not start: ${error.message}` : error);
  process.exit(1);
});
