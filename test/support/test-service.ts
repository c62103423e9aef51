/**
 * A whole Atelier on ephemeral loopback ports with its own temporary data folder, and a key to call
 * it with: the same startAtelier that `npm start` runs.
 */
import { loadConfig, type AtelierConfig } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { startAtelier, type RunningAtelier } from "../../bin/start-atelier.js";
import { startOverOwnDir } from "./make-temp-dir.js";

export interface TestService extends RunningAtelier {
  dataDir: string;
  config: AtelierConfig;
  /** Creates a key and returns its secret. */
  createKey(name?: string, hourlyLimit?: number): Promise<string>;
  /** POSTs JSON to an `/api/v1` path with the given key (or none). */
  post(path: string, body: unknown, key?: string, headers?: Record<string, string>): Promise<Response>;
}

/**
 * Starts a service over `dataDir`, or over a temporary data folder of its own that `close()` removes
 * once the service has closed (a data folder the caller gives stays the caller's to remove).
 */
export async function startTestService(env: Record<string, string> = {}, dataDir?: string): Promise<TestService> {
  if (dataDir !== undefined) return startOver(env, dataDir);
  return startOverOwnDir("test", (ownDataDir) => startOver(env, ownDataDir));
}

async function startOver(env: Record<string, string>, dataDir: string): Promise<TestService> {
  // No metrics listener (a fixed port would clash between test files) and no first-start downloads,
  // unless a test asks for them.
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    ATELIER_DATA_DIR: dataDir,
    ATELIER_METRICS_PORT: "0",
    ATELIER_PROVISION_MODELS: "false",
    // The fast default models, whose outputs the tests pin; the time budget's stronger ways are
    // tested on their own (test/upscale/upscale-choice.test.ts, upscale-service.test.ts).
    ATELIER_UPSCALE_TIME_BUDGET_MS: "0",
    // No background warm-up runs competing with what a test times or counts (test/ops/warm-up.test.ts turns it on).
    ATELIER_WARM_UP: "false",
    ...env,
  });
  const running = await startAtelier(config, createLogger("silent"));
  return {
    ...running,
    dataDir,
    config,
    createKey: async (name = "test", hourlyLimit) => (await running.services.keys.create({ name, hourlyLimit: hourlyLimit ?? null })).key,
    post: (apiPath, body, key, headers = {}) =>
      fetch(`${running.url}/api/v1${apiPath}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...headers,
        },
        body: typeof body === "string" ? body : JSON.stringify(body),
      }),
  };
}
