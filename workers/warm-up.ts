/**
 * Warms the default model of each operation once the service serves: one small call of each (a few
 * of the operations that take milliseconds, whose code reaches full speed only then) through the
 * very work the worker serves (the image decoder and encoder, the model's session load and a
 * first run of it, and what the operation's service keeps between calls, such as the doodle model's
 * class list), so the first real call costs what a later one does. It runs in the background, one
 * operation at a time, through the worker's queue like any call but as background work
 * (core/work-priority.ts), so a real call never waits behind it; a model is warmed only while its
 * estimated cost fits what the memory budget has left, so a warm-up never evicts anything; stopping
 * it (shutdown) skips what has not started and waits only for the one small call under way.
 *
 * Style transfer has no default style (a request names one): the style the playground offers first
 * (the first usable one in catalog order) is warmed, on a picture of the largest tile a call paints
 * (the size its memory charge counts): the session's memory arena (and a memory pattern, where the
 * model's settings keep one) grows with the tile, so a small warm-up run would leave that work to
 * the first real call. Prompt improvement loads no model session: its builtin engine is warmed (its
 * term lists are read as the worker starts, its code paths run here); an LLM server configured in
 * front of it is never called.
 */
import sharp from "sharp";
import { inBackground } from "../core/work-priority.js";
import { OutputFormat } from "../gen/atelier/image/v1/image.js";
import { BackgroundServiceService, RemoveBackgroundRequest } from "../gen/atelier/background/v1/background_service.js";
import { GenerateRequest, GenerationServiceService } from "../gen/atelier/generation/v1/generation_service.js";
import { ImprovePromptRequest, PromptServiceService } from "../gen/atelier/prompt/v1/prompt_service.js";
import { StyleTransferRequest, StyleTransferServiceService } from "../gen/atelier/style/v1/style_transfer_service.js";
import { UpscaleQuality, UpscaleRequest, UpscaleServiceService } from "../gen/atelier/upscale/v1/upscale_service.js";
import type { CatalogEntry } from "../models/catalog/catalog-types.js";
import { catalogEntry, weightSize } from "../models/catalog/model-catalog.js";
import { chooseModel } from "../models/requests/background-model-choice.js";
import { STYLE_ENTRIES } from "../models/requests/style-request.js";
import type { GenerationService } from "./generation/generation-service.js";
import { worksByPath, type ServiceBinding, type Work } from "./grpc-handler.js";
import { estimateSessionBytes } from "./onnx/session-cost.js";
import { largestTileSide, styleWorkingBytes } from "./style/style-network.js";
import { tileWorkingBytes } from "./upscale/network-upscaler.js";
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

/** The prompts the prompt engine is warmed with: short ideas of different kinds, as people send them. */
const WARM_UP_PROMPTS = ["a lighthouse at dusk", "portrait of an old fisherman", "a red fox in the snow", "a castle on a hill at night"];

/** Times the prompt engine runs through WARM_UP_PROMPTS, each time with new seeds. */
const PROMPT_WARM_UP_ROUNDS = 10;

/** The doodle model's warm-up prompts: classes it draws, in phrases of different shapes. */
const DOODLE_WARM_UP_PROMPTS = ["an apple on a wooden table", "a wise old owl sitting on a branch at night", "two rusty keys"];

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
  /**
   * The default model and the activation memory a run of it takes (undefined where the operation runs
   * no inference session, so nothing is charged to the model budget), or a reason there is none.
   */
  model(): { entry: CatalogEntry; workingBytes: number | undefined } | { none: string };
  /** One small call of the operation. */
  call(signal: AbortSignal): Promise<unknown>;
}

export class WarmUp {
  private readonly controller = new AbortController();
  private readonly status: WarmUpStatus = { state: "waiting", warm: [], skipped: [] };
  private running: Promise<void> | undefined;
  /** The work of each RPC the worker serves, by its path. */
  private readonly works: Map<string, Work>;

  constructor(
    private readonly context: WorkerContext,
    private readonly generation: GenerationService,
    /** The services the worker serves, as it binds them (worker-server.ts): the warm-up calls their work. */
    served: readonly ServiceBinding[],
  ) {
    this.works = worksByPath(served);
  }

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

  /** Calls the worker's own work for the RPC at `path`, as the router would, but as background work. */
  private serve(path: string, request: object, signal: AbortSignal): Promise<unknown> {
    const work = this.works.get(path);
    if (!work) return Promise.reject(new Error(`This worker serves no ${path}.`));
    return inBackground(() => work(request as never, signal));
  }

  private async warmAll(): Promise<void> {
    const noise = (side: number) =>
      sharp({ create: { width: side, height: side, channels: 3, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 30 } } }).png().toBuffer();
    const signal = this.controller.signal;
    const images = { small: await noise(WARM_UP_SIDE), background: await noise(BACKGROUND_WARM_UP_SIDE), styleTile: () => noise(largestTileSide(this.context.config.style)) };
    for (const task of this.tasks(images)) {
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
      const { entry, workingBytes } = chosen;
      if (workingBytes !== undefined) {
        const stats = this.context.runtime.stats();
        const loaded = stats.sessions.some((session) => session.key.startsWith(`${entry.id}/`) && session.loaded);
        const needed = loaded ? 0 : estimateSessionBytes(weightSize(entry), workingBytes);
        if (stats.chargedBytes + needed > stats.budgetBytes) {
          this.status.skipped.push({ operation: label, reason: `${entry.id} does not fit what the model memory budget has left` });
          continue;
        }
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

  private tasks(images: { small: Buffer; background: Buffer; styleTile: () => Promise<Buffer> }): WarmUpTask[] {
    const { context } = this;
    const picture = { data: images.small, mimeType: "image/png" };
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
        this.serve(
          BackgroundServiceService.removeBackground.path,
          RemoveBackgroundRequest.fromPartial({ image: { data: images.background, mimeType: "image/png" }, outputFormat: OutputFormat.OUTPUT_FORMAT_PNG }),
          signal,
        ),
    };
    const upscales = WARMED_SCALES.map(
      (scale): WarmUpTask => ({
        operation: `upscale x${scale}`,
        model: () => {
          const { entry } = chooseByQuality("balanced", scale, size, "lossless", context.models, { timeBudgetMs: 0, workers: context.config.workers });
          return { entry, workingBytes: entry.graphs[`x${scale}`] ? tileWorkingBytes(entry, scale) : 0 };
        },
        call: (signal) =>
          this.serve(UpscaleServiceService.upscale.path, UpscaleRequest.fromPartial({ image: picture, scale, quality: UpscaleQuality.UPSCALE_QUALITY_UNSPECIFIED }), signal),
      }),
    );
    // The style the playground offers first: the first one this server can run, in catalog order.
    const firstStyle = () => STYLE_ENTRIES.find((entry) => context.models.isUsable(entry));
    const style: WarmUpTask = {
      operation: "style-transfer",
      model: () => {
        const entry = firstStyle();
        return entry ? { entry, workingBytes: styleWorkingBytes(entry, context.config.style) } : { none: "no style is installed" };
      },
      // Made only once the budget has room for the style: a 1024 px picture is a few MB of PNG.
      call: async (signal) => {
        const tile = { data: await images.styleTile(), mimeType: "image/png" };
        return this.serve(StyleTransferServiceService.styleTransfer.path, StyleTransferRequest.fromPartial({ image: tile, style: firstStyle()?.id ?? "" }), signal);
      },
    };
    const prompt: WarmUpTask = {
      operation: "prompt-improve",
      model: () => {
        if (context.config.prompt.llm) return { none: "prompts go to the configured LLM server, which the warm-up does not call" };
        const entry = catalogEntry("prompt-builtin");
        return entry && context.models.isUsable(entry) ? { entry, workingBytes: undefined } : { none: "prompt-builtin (the term lists) is not installed" };
      },
      // The engine's first call fills its caches, but its code reaches full speed only after some tens
      // of calls (the JIT): a few short prompts of different kinds, each run with new seeds, a few
      // milliseconds a call.
      call: async (signal) => {
        for (let round = 0; round < PROMPT_WARM_UP_ROUNDS; round++) {
          for (const [index, idea] of WARM_UP_PROMPTS.entries()) {
            signal.throwIfAborted();
            const seed = round * WARM_UP_PROMPTS.length + index + 1;
            await this.serve(PromptServiceService.improvePrompt.path, ImprovePromptRequest.fromPartial({ prompt: idea, seed }), signal);
          }
        }
      },
    };
    const generation: WarmUpTask = {
      operation: "generate",
      model: () => ({ entry: this.generation.chooseModel(""), workingBytes: 0 }),
      call: async (signal) => {
        const limits = this.generation.chooseModel("").generation;
        // A model that denoises in steps runs one step at its smallest size (a call at its default size
        // takes seconds). One that draws in a single run (the doodle model) draws at the size a call
        // gets by default (0: the model's default), a few times, as its drawing code reaches full
        // speed only then (the JIT).
        const diffusion = limits?.options.includes("steps") === true;
        const side = limits && diffusion ? Math.ceil(limits.minSize / limits.sizeMultiple) * limits.sizeMultiple : 0;
        // Things the doodle model can draw, said as people say them: reading a phrase runs more of the
        // prompt reader's tagging than a bare noun does. Any prompt suits a diffusion model.
        for (const [seed, prompt] of (diffusion ? ["an apple"] : DOODLE_WARM_UP_PROMPTS).entries()) {
          signal.throwIfAborted();
          await this.serve(GenerationServiceService.generate.path, GenerateRequest.fromPartial({ prompt, width: side, height: side, steps: diffusion ? 1 : 0, seed: seed + 1 }), signal);
        }
      },
    };
    return [removal, ...upscales, style, prompt, generation];
  }
}
