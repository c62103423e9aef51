/**
 * Installing and removing models from the console (admins, Models page): the same installer as `npm run models -- pull`
 * (every file verified against its checksum, staged, then moved into place with one rename), run in
 * the background one model at a time, with progress the Models page polls.
 *
 * Installs land in this process's ATELIER_MODELS_DIR, which the in-process workers read on every
 * call; workers in other processes see them only when they share that folder.
 */
import PQueue from "p-queue";
import { AtelierError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { catalogEntry, unpinnedFiles, weightSize } from "../../models/catalog/model-catalog.js";
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";
import { ModelInstallError } from "../../models/store/fetch-weight-file.js";
import type { HubClient } from "../../models/store/hub-files.js";
import { cleanStaging, pullModel, removeModel, type ModelConverters } from "../../models/store/model-installer.js";
import { assertLicenseAccepted } from "./license-terms.js";
import { ModelStore } from "../../models/store/model-store.js";

export type InstallState = "queued" | "running" | "installed" | "failed" | "cancelled";

/** One install as the Models page shows it. */
export interface InstallJob {
  modelId: string;
  state: InstallState;
  /** Bytes fetched and verified so far, over every file of the model. */
  receivedBytes: number;
  /** Bytes to fetch in all; 0 while unknown (hub exports announce sizes file by file). */
  totalBytes: number;
  /** The file being fetched. */
  currentFile?: string;
  /** Why it failed, for people (installer messages name no secrets). */
  message?: string;
  /** Who asked for it (a user id). */
  requestedBy: string;
  startedAt: string;
  finishedAt?: string;
}

export interface ModelInstallsOptions {
  modelsDir: string;
  /** Mirror folder or http(s) mirror URL to fetch from; undefined: each file's public origin. */
  from?: string;
  /** The model hub for models that come from one. */
  hub?: HubClient;
  converters?: ModelConverters;
  logger?: Logger;
}

/** Installs run one at a time: they are bandwidth- and disk-bound, and conversions take the CPU. */
const INSTALLS_AT_ONCE = 1;

export class ModelInstalls {
  readonly store: ModelStore;
  private readonly queue = new PQueue({ concurrency: INSTALLS_AT_ONCE });
  private readonly jobs = new Map<string, InstallJob>();
  private readonly controllers = new Map<string, AbortController>();

  constructor(private readonly options: ModelInstallsOptions) {
    this.store = new ModelStore(options.modelsDir);
  }

  /**
   * Queues an install of `modelId` and returns its job at once; asking again while one is queued
   * or running returns that job. Throws NOT_FOUND for an unknown id and INVALID_INPUT for a model
   * that cannot be installed from here (built in, shipped by npm, or an export only an operator can make),
   * or whose licence must be accepted (license-terms.ts) and was not.
   */
  install(modelId: string, requestedBy: string, options: { licenseAccepted?: boolean } = {}): InstallJob {
    const entry = this.installable(modelId);
    assertLicenseAccepted(entry, options.licenseAccepted === true);
    const current = this.jobs.get(modelId);
    if (current && (current.state === "queued" || current.state === "running")) return { ...current };
    const job: InstallJob = { modelId, state: "queued", receivedBytes: 0, totalBytes: weightSize(entry), requestedBy, startedAt: new Date().toISOString() };
    const controller = new AbortController();
    this.jobs.set(modelId, job);
    this.controllers.set(modelId, controller);
    void this.queue.add(() => this.run(entry, job, controller.signal));
    return { ...job };
  }

  /** Stops a queued or running install; nothing half-installed stays. False when none was going. */
  cancel(modelId: string): boolean {
    const job = this.jobs.get(modelId);
    if (!job || (job.state !== "queued" && job.state !== "running")) return false;
    this.controllers.get(modelId)?.abort(new ModelInstallError("cancelled from the console"));
    return true;
  }

  /**
   * Deletes an installed model's files. False when it was not installed. Throws INVALID_INPUT while
   * an install of it is going, or for models that are not removable here.
   */
  remove(modelId: string): boolean {
    const entry = this.known(modelId);
    const job = this.jobs.get(modelId);
    if (job && (job.state === "queued" || job.state === "running")) {
      throw new AtelierError("INVALID_INPUT", `${modelId} is being installed; cancel the install or wait for it before removing the model.`);
    }
    try {
      const removed = removeModel(entry, this.store);
      if (removed) this.jobs.delete(modelId);
      return removed;
    } catch (error) {
      if (error instanceof ModelInstallError) throw new AtelierError("INVALID_INPUT", error.message);
      throw error;
    }
  }

  /** The latest install of each model this process ran or is running. */
  list(): InstallJob[] {
    return [...this.jobs.values()].map((job) => ({ ...job }));
  }

  job(modelId: string): InstallJob | undefined {
    const job = this.jobs.get(modelId);
    return job ? { ...job } : undefined;
  }

  /** Whether the console can install this model (pinned files or a hub export). */
  canInstall(entry: CatalogEntry): boolean {
    return entry.source.kind === "files" && unpinnedFiles(entry).length === 0;
  }

  /** Cancels everything and waits for the installer to stop. */
  async close(): Promise<void> {
    this.queue.clear();
    for (const controller of this.controllers.values()) controller.abort(new ModelInstallError("the service is stopping"));
    await this.queue.onIdle();
  }

  private known(modelId: string): CatalogEntry {
    const entry = catalogEntry(modelId);
    if (!entry) throw new AtelierError("NOT_FOUND", `No model "${modelId}" in the catalog.`);
    return entry;
  }

  private installable(modelId: string): CatalogEntry {
    const entry = this.known(modelId);
    if (!this.canInstall(entry)) {
      const how = this.store.installCommand(entry);
      throw new AtelierError("INVALID_INPUT", how ? `${modelId} cannot be installed from the console: ${how}.` : `${modelId} is built in; there is nothing to install.`);
    }
    return entry;
  }

  private async run(entry: CatalogEntry, job: InstallJob, signal: AbortSignal): Promise<void> {
    if (signal.aborted) {
      this.finish(job, "cancelled");
      return;
    }
    job.state = "running";
    const files = new Map<string, { received: number; total: number }>();
    try {
      cleanStaging(this.store);
      const result = await pullModel(entry, this.store, {
        from: this.options.from,
        hub: this.options.hub,
        // Loaded with the first install: a router whose workers run elsewhere carries no converter code.
        converters: this.options.converters ?? (await import("../../models/convert/model-converters.js")).modelConverters,
        signal,
        onProgress: ({ file, receivedBytes, totalBytes }) => {
          files.set(file, { received: receivedBytes, total: totalBytes });
          let received = 0;
          let total = 0;
          for (const progress of files.values()) {
            received += progress.received;
            total += progress.total;
          }
          job.currentFile = file;
          job.receivedBytes = received;
          job.totalBytes = Math.max(job.totalBytes, total);
        },
      });
      if (result === "installed" || result === "already-installed") job.receivedBytes = job.totalBytes;
      this.finish(job, "installed");
      this.options.logger?.info({ model: entry.id, requestedBy: job.requestedBy, result }, "model installed from the console");
    } catch (error) {
      if (signal.aborted) {
        this.finish(job, "cancelled", "Cancelled; nothing was installed.");
      } else {
        const message = error instanceof ModelInstallError ? error.message : "The install failed; the server log has the details.";
        this.finish(job, "failed", message);
        this.options.logger?.warn({ model: entry.id, err: error }, "model install from the console failed");
      }
    } finally {
      this.controllers.delete(entry.id);
    }
  }

  private finish(job: InstallJob, state: InstallState, message?: string): void {
    job.state = state;
    job.currentFile = undefined;
    if (message !== undefined) job.message = message;
    job.finishedAt = new Date().toISOString();
  }
}
