/** The readiness checks of a router process, from its configuration. */
import type { AtelierConfig, WorkerServiceName } from "../../core/config.js";
import { setWorkerProbe } from "../../observability/metrics.js";
import type { ApiKeyStore } from "../../server/keys/api-key-store.js";
import { Readiness } from "./readiness.js";
import { keyStoreCheck, modelsFolderCheck, redisCheck, WorkerHealth } from "./readiness-checks.js";

export interface ServiceReadiness {
  readiness: Readiness;
  close(): Promise<void>;
}

export function serviceReadiness(
  config: AtelierConfig,
  keys: ApiKeyStore,
  workerAddresses: Record<WorkerServiceName, string>,
  /** True when this process hosts a worker, whose models folder must then be readable here. */
  hostsWorker: boolean,
): ServiceReadiness {
  const readiness = new Readiness();
  const workers = new WorkerHealth(workerAddresses);
  readiness.add(workers.check());
  readiness.add(keyStoreCheck(keys, config.databaseUrl ? "postgresql" : "sqlite"));
  const redis = config.quota.redisUrl ? redisCheck(config.quota.redisUrl) : undefined;
  if (redis) readiness.add(redis);
  if (hostsWorker) readiness.add(modelsFolderCheck(config.modelsDir));
  setWorkerProbe(() => workers.byService());
  return {
    readiness,
    close: async () => {
      setWorkerProbe(undefined);
      workers.close();
      await redis?.close();
    },
  };
}
