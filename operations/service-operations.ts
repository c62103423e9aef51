/**
 * What turns a started service into a well-behaved process: the metrics listener, first-start model
 * provisioning (where this process hosts a worker) and graceful shutdown on SIGTERM/SIGINT.
 * Used by both entry points: `npm start` and `npm run start:workers`.
 */
import type http from "node:http";
import type { AtelierConfig } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import { startMetricsServer, type MetricsServer } from "../observability/metrics-server.js";
import type { Readiness } from "./health/readiness.js";
import type { ModelProvisioner } from "./provisioning/model-provisioner.js";
import { installGracefulShutdown } from "./shutdown/graceful-shutdown.js";

export interface ProcessParts {
  readiness: Readiness;
  /** The HTTP listener, when this process has one. */
  server?: http.Server;
  /** True when model weights are used in this process (an in-process or standalone worker). */
  hostsWorker: boolean;
  /**
   * Closes the service (workers drain, stores close) once HTTP requests are done; work still running
   * at `graceEndsAtMs` (epoch ms, the end of the shutdown's grace period) is cut off.
   */
  close(graceEndsAtMs: number): Promise<void>;
}

export interface RunningOperations {
  metrics: MetricsServer | undefined;
  provisioner: ModelProvisioner | undefined;
}

export async function startOperations(config: AtelierConfig, logger: Logger, parts: ProcessParts): Promise<RunningOperations> {
  const metrics = await startMetricsServer(config.metrics, logger.child({ part: "metrics" }));
  // Imported only where a worker runs: a router-only process never loads the installer or catalog.
  const provisioner =
    parts.hostsWorker && config.provisionModels
      ? new (await import("./provisioning/model-provisioner.js")).ModelProvisioner(config, logger.child({ part: "provisioning" })).start()
      : undefined;
  if (provisioner) parts.readiness.add(provisioner.check());
  installGracefulShutdown({
    logger,
    readiness: parts.readiness,
    server: parts.server,
    graceMs: config.shutdownGraceMs,
    stop: async (graceEndsAtMs) => {
      await provisioner?.stop();
      await parts.close(graceEndsAtMs);
      await metrics?.close();
    },
  });
  return { metrics, provisioner };
}
