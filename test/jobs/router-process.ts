/**
 * One router in a process of its own, for tests that kill it mid-job (SIGKILL: no shutdown code
 * runs, as when a host dies). Configured by its environment like `npm start`; prints
 * `READY <url>` once it serves.
 */
import { loadConfig } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { startAtelier } from "../../bin/start-atelier.js";

const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", ATELIER_METRICS_PORT: "0", ATELIER_PROVISION_MODELS: "false", ...process.env });
const running = await startAtelier(config, createLogger("silent"));
process.stdout.write(`READY ${running.url}\n`);
