/**
 * Warms the default model of each operation once the service serves: one small call of each through
 * the operation's own code (the image decoder and encoder, the model's session load and a first run of
 * it), so the first real call costs what a later one does. It runs in the background, one operation at
 * a time, through the worker's queue like any call (so it takes one of its places, never more); a
 * model is warmed only while its estimated cost fits what the memory budget has left, so a warm-up
 * never evicts anything; stopping it (shutdown) skips what has not started and waits only for the one
 * small call under way.
 *
 * Style transfer has no default style (a request names one), so it is not warmed.
 */
import sharp from "sharp";
import { OutputFormat } from "../gen/atelier/image/v1/image.js";
import { RemoveBackgroundRequest } from "../gen/atelier/background/v1/background_service.js";
import { GenerateRequest } from "../gen/atelier/generation/v1/generation_service.js";
import { UpscaleQuality, UpscaleRequest } from "../gen/atelier/upscale/v1/upscale_service.js";
import type { CatalogEntry } from "../models/catalog/catalog-types.js";
import { weightSize } from "../models/catalog/model-catalog.js";
import { chooseModel } from "../models/requests/background-model-choice.js";
import { removeBackground } from "./background/background-service.js";
import type { GenerationService } from "./generation/generation-service.js";
import { estimateSessionBytes } from "./onnx/session-cost.js";
import { tileWorkingBytes } from "./upscale/network-upscaler.js";
import { upscale } from "./upscale/upscale-service.js";
import { chooseByQuality } from "../models/requests/upscale-choice.js";
import type { WorkerContext } from "./worker-context.js";

const MiB = 1024 * 1024;

/** Side of the warm-up image: small, so a warm-up call is one short run (a fixed-size network runs at its own size all the same). */
const WARM_UP_SIDE = 64;

/**
 * Side of the background warm-up image: background removal's steps around the network (refining the
 * matte at the working size, composing) run at the image's size, so a tiny image would leave them
 * cold; the networks run at their fixed size whatever it is.
 */
const BACKGROUND_WARM_UP_SIDE = 512;

/** The upscale factors warmed: the two the API's clients use most, each its own graph. */
const WARMED_SCALES = [2, 4] as const;

export interface WarmUpStatus {
  /** `waiting` until started; `done` when every default was warmed or skipped; `stopped` by shutdown. */
  state: "waiting" | "running" | "done" | "stopped";
  /** Models warmed, as `operation: model id`. */
  warm: string[];
  /** Defaults left cold, and why. */
  skipped: { operation: string; reason: string }[];
}

interface WarmUpTask {
  operation: string;
  /** The default model and the activation memory a run of it takes, or a reason there is none (nothing installed). */
  model(): { entry: CatalogEntry; workingBytes: number } | { none: string };
  /** One small call of the operation. */
  call(signal: AbortSignal): Promise<unknown>;
}

export class WarmUp {
  private readonly controller = new AbortController();
  private readonly status: WarmUpStatus = { state: "waiting", warm: [], skipped: [] };
  private running: Promise<void> | undefined;

  constructor(
    private readonly context: WorkerContext,
    private readonly generation: GenerationService,
  ) {}

  report(): WarmUpStatus {
    return { state: this.status.state, warm: [...this.status.warm], skipped: this.status.skipped.map((skip) => ({ ...skip })) };
  }

  /** Starts warming in the background (once); never throws, failures are logged and reported as skipped. */
  start(): void {
    if (this.running || this.controller.signal.aborted) return;
    this.status.state = "running";
    this.running = this.warmAll().finally(() => {
      if (this.status.state === "running") this.status.state = "done";
    });
  }

  /** Skips what has not started and waits for the call under way (a small one). */
  async stop(): Promise<void> {
    this.controller.abort();
    if (this.status.state !== "done") this.status.state = "stopped";
    await this.running;
  }

  private async warmAll(): Promise<void> {
    const noise = (side: number) =>
      sharp({ create: { width: side, height: side, channels: 3, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 30 } } }).png().toBuffer();
    const signal = this.controller.signal;
    for (const task of this.tasks(await noise(WARM_UP_SIDE), await noise(BACKGROUND_WARM_UP_SIDE))) {
      if (signal.aborted) return;
      const label = task.operation;
      let chosen: ReturnType<WarmUpTask["model"]>;
      try {
        chosen = task.model();
      } catch (error) {
        chosen = { none: error instanceof Error ? error.message : String(error) };
      }
      if ("none" in chosen) {
        this.status.skipped.push({ operation: label, reason: chosen.none });
        continue;
      }
      const { entry } = chosen;
      const stats = this.context.runtime.stats();
      const loaded = stats.sessions.some((session) => session.key.startsWith(`${entry.id}/`) && session.loaded);
      const needed = loaded ? 0 : estimateSessionBytes(weightSize(entry), chosen.workingBytes);
      if (stats.chargedBytes + needed > stats.budgetBytes) {
        this.status.skipped.push({ operation: label, reason: `${entry.id} does not fit what the model memory budget has left` });
        continue;
      }
      const started = performance.now();
      try {
        await task.call(signal);
        this.status.warm.push(`${label}: ${entry.id}`);
        this.context.logger.info({ operation: label, model: entry.id, ms: Math.round(performance.now() - started) }, "model warmed");
      } catch (error) {
        if (signal.aborted) return;
        this.status.skipped.push({ operation: label, reason: error instanceof Error ? error.message : String(error) });
        this.context.logger.warn({ operation: label, model: entry.id, err: error }, "warming a model failed; its first call will load it");
      }
    }
  }

  private tasks(image: Buffer, backgroundImage: Buffer): WarmUpTask[] {
    const { context } = this;
    const picture = { data: image, mimeType: "image/png" };
    const size = { width: WARM_UP_SIDE, height: WARM_UP_SIDE };
    const removal: WarmUpTask = {
      operation: "background-remove",
      model: () => {
        const { entry, spec } = chooseModel("", context.models);
        return { entry, workingBytes: spec.workingMiB * MiB };
      },
      // Noise has no person in it: where the picture decides between a people model and a general one,
      // both run, so both are warm.
      call: (signal) =>
        removeBackground(RemoveBackgroundRequest.fromPartial({ image: { data: backgroundImage, mimeType: "image/png" }, outputFormat: OutputFormat.OUTPUT_FORMAT_PNG }), context, signal),
    };
    const upscales = WARMED_SCALES.map(
      (scale): WarmUpTask => ({
        operation: `upscale x${scale}`,
        model: () => {
          const { entry } = chooseByQuality("balanced", scale, size, "lossless", context.models, { timeBudgetMs: 0, workers: context.config.workers });
          return { entry, workingBytes: entry.graphs[`x${scale}`] ? tileWorkingBytes(entry, scale) : 0 };
        },
        call: (signal) => upscale(UpscaleRequest.fromPartial({ image: picture, scale, quality: UpscaleQuality.UPSCALE_QUALITY_UNSPECIFIED }), context, signal),
      }),
    );
    const generation: WarmUpTask = {
      operation: "generate",
      model: () => ({ entry: this.generation.chooseModel(""), workingBytes: 0 }),
      call: (signal) => {
        const { generation: limits } = this.generation.chooseModel("");
        const side = limits ? Math.ceil(limits.minSize / limits.sizeMultiple) * limits.sizeMultiple : 0;
        const steps = limits?.options.includes("steps") ? 1 : 0;
        // A thing the doodle model can draw; any prompt suits a diffusion model.
        return this.generation.generate(GenerateRequest.fromPartial({ prompt: "an apple", width: side, height: side, steps, seed: 1 }), signal);
      },
    };
    return [removal, ...upscales, generation];
  }
}
