/**
 * A whole Atelier in a process of its own, for hostile tests that watch it from outside: whether
 * it is still alive, and how much memory it holds. Configured by its environment like `npm start`;
 * prints `READY <url>` once it serves. Asked `"memory"` over IPC, it collects garbage (it runs with
 * `--expose-gc`) and answers its `process.memoryUsage()`, so a heap figure is what is still
 * referenced rather than what the collector has not reached yet.
 */
import { loadConfig } from "../../../core/config.js";
import { createLogger } from "../../../core/logger.js";
import { startAtelier } from "../../../bin/start-atelier.js";

const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "error", ATELIER_METRICS_PORT: "0", ATELIER_PROVISION_MODELS: "false", ...process.env });
const running = await startAtelier(config, createLogger(config.logLevel));

process.on("message", (message) => {
  if (message !== "memory") return;
  globalThis.gc?.();
  process.send?.({ memory: process.memoryUsage() });
});
// The parent going away (its test ended or crashed) ends this process too.
process.on("disconnect", () => {
  void running.close().finally(() => process.exit(0));
});
process.stdout.write(`READY ${running.url}\n`);
