/**
 * First-start provisioning: installs the starter models that are missing, one after another in the
 * background, from the configured mirror or else their public origins, with progress in the logs,
 * in `/readyz` and in metrics. Without network it says so once and the service goes on with what
 * it has. ATELIER_PROVISION_MODELS=false turns it off.
 */
import type { AtelierConfig } from "../../core/config.js";
import type { Logger } from "../../core/logger.js";
import { setProvisioningProbe } from "../../observability/metrics.js";
import { catalogEntry, weightSize, type CatalogEntry } from "../../models/catalog/model-catalog.js";
import { modelConverters } from "../../models/convert/model-converters.js";
import { cleanStaging, pullModel } from "../../models/store/model-installer.js";
import { ModelStore } from "../../models/store/model-store.js";
import type { ReadinessCheck } from "../health/readiness.js";
import { arrivalsIn } from "../../models/store/arriving-models.js";
import { STARTER_MODELS } from "../../models/catalog/starter-models.js";

export type ModelState = "pending" | "downloading" | "installed" | "failed";

export interface ProvisioningStatus {
  state: "running" | "done" | "offline" | "stopped";
  source: string;
  models: { id: string; state: ModelState; receivedBytes: number; totalBytes: number; error?: string }[];
}

const NETWORK_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ENETUNREACH", "EHOSTUNREACH", "ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_SOCKET"]);

/** True when `error` (or a cause of it) says the origin could not be reached at all. */
export function isNetworkFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 6; current = current.cause, depth++) {
    const code = (current as { code?: string }).code;
    if (code && NETWORK_CODES.has(code)) return true;
    if (/fetch failed|no data for \d+ ms/.test(current.message)) return true;
  }
  return false;
}

export class ModelProvisioner {
  private readonly store: ModelStore;
  private readonly controller = new AbortController();
  private readonly models = new Map<string, ProvisioningStatus["models"][number]>();
  private state: ProvisioningStatus["state"] = "running";
  private running: Promise<void> | undefined;

  constructor(
    private readonly config: AtelierConfig,
    private readonly logger: Logger,
    private readonly ids: readonly string[] = STARTER_MODELS,
  ) {
    this.store = new ModelStore(config.modelsDir);
  }

  private get source(): string {
    return this.config.modelMirror ?? "public origins";
  }

  /** The starter models not installed yet. */
  missing(): CatalogEntry[] {
    return this.ids
      .map((id) => catalogEntry(id))
      .filter((entry): entry is CatalogEntry => entry !== undefined && !this.store.isInstalled(entry));
  }

  /** Starts installing in the background; resolves `done()` when finished. */
  start(): this {
    const missing = this.missing();
    const arrivals = arrivalsIn(this.config.modelsDir);
    for (const entry of missing) {
      const totalBytes = weightSize(entry);
      this.models.set(entry.id, { id: entry.id, state: "pending", receivedBytes: 0, totalBytes });
      arrivals.set(entry.id, { receivedBytes: 0, totalBytes });
    }
    setProvisioningProbe(() => this.counts());
    if (missing.length === 0) {
      this.state = "done";
      this.running = Promise.resolve();
      return this;
    }
    const megabytes = (missing.reduce((sum, entry) => sum + weightSize(entry), 0) / 1_000_000).toFixed(1);
    this.logger.info({ models: missing.map((entry) => entry.id), source: this.source, megabytes }, `installing ${missing.length} starter models (${megabytes} MB) in the background`);
    this.running = this.installAll(missing).finally(() => {
      for (const entry of missing) arrivals.delete(entry.id);
    });
    return this;
  }

  /** Resolves when provisioning has finished (or was stopped). */
  done(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async installAll(entries: CatalogEntry[]): Promise<void> {
    cleanStaging(this.store);
    const arrivals = arrivalsIn(this.config.modelsDir);
    for (const [index, entry] of entries.entries()) {
      if (this.controller.signal.aborted) break;
      const model = this.models.get(entry.id)!;
      model.state = "downloading";
      const done = new Map<string, number>();
      try {
        await pullModel(entry, this.store, {
          from: this.config.modelMirror,
          converters: modelConverters,
          signal: this.controller.signal,
          onProgress: ({ file, receivedBytes }) => {
            done.set(file, receivedBytes);
            model.receivedBytes = [...done.values()].reduce((sum, bytes) => sum + bytes, 0);
            arrivals.set(entry.id, { receivedBytes: model.receivedBytes, totalBytes: model.totalBytes });
          },
        });
        model.state = "installed";
        model.receivedBytes = model.totalBytes;
        arrivals.delete(entry.id);
        this.logger.info({ model: entry.id, progress: `${index + 1}/${entries.length}` }, "starter model installed");
      } catch (error) {
        arrivals.delete(entry.id);
        if (this.controller.signal.aborted) break;
        model.state = "failed";
        model.error = (error as Error).message;
        if (isNetworkFailure(error)) {
          this.state = "offline";
          const left = entries.slice(index).map((item) => item.id);
          for (const id of left) {
            const rest = this.models.get(id)!;
            rest.state = "failed";
            rest.error ??= "not attempted: no network";
            arrivals.delete(id);
          }
          // Said once, plainly; the service keeps serving what is installed.
          this.logger.warn(
            { source: this.source, notInstalled: left, reason: model.error },
            `cannot reach ${this.source} (no network?): serving the models already installed. ` +
              `Install the rest later with \`npm run models -- pull ${left.join(" ")}\` (or set ATELIER_MODEL_MIRROR).`,
          );
          return;
        }
        this.logger.warn({ model: entry.id, err: error }, "starter model could not be installed; continuing with the others");
      }
    }
    if (this.controller.signal.aborted) {
      this.state = "stopped";
      return;
    }
    this.state = "done";
    const failed = [...this.models.values()].filter((model) => model.state === "failed").map((model) => model.id);
    this.logger.info({ failed }, failed.length === 0 ? "starter models ready" : `starter models done; ${failed.length} failed`);
  }

  status(): ProvisioningStatus {
    return { state: this.state, source: this.source, models: [...this.models.values()].map((model) => ({ ...model })) };
  }

  private counts() {
    const models = [...this.models.values()];
    const count = (...states: ModelState[]) => models.filter((model) => states.includes(model.state)).length;
    return {
      pending: count("pending", "downloading"),
      installed: count("installed"),
      failed: count("failed"),
      receivedBytes: models.reduce((sum, model) => sum + model.receivedBytes, 0),
      totalBytes: models.reduce((sum, model) => sum + model.totalBytes, 0),
    };
  }

  /** `/readyz` entry: progress only; downloads never make the service unready (it serves what it has). */
  check(): ReadinessCheck {
    return {
      name: "provisioning",
      critical: false,
      run: async () => {
        const status = this.status();
        const { pending, installed, failed, receivedBytes, totalBytes } = this.counts();
        const percent = totalBytes > 0 ? Math.floor((100 * receivedBytes) / totalBytes) : 100;
        const detail =
          status.state === "running"
            ? `installing starter models from ${status.source}: ${installed} installed, ${pending} to go, ${percent}% of ${(totalBytes / 1_000_000).toFixed(1)} MB`
            : status.state === "offline"
              ? `no network: ${failed} starter model(s) not installed; serving what is installed`
              : `${status.state}: ${installed} installed${failed > 0 ? `, ${failed} failed` : ""}`;
        return { ok: status.state !== "offline" && failed === 0, detail, info: { ...status } };
      },
    };
  }

  /** Aborts a download in progress (nothing half-installed stays) and waits for it to end. */
  async stop(): Promise<void> {
    this.controller.abort(new Error("shutting down"));
    await this.running?.catch(() => {});
    setProvisioningProbe(undefined);
  }
}
