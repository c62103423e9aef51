/**
 * gRPC PromptService: the builtin engine, or the LLM engine in front of it when an operator
 * configured a chat-completions server.
 *
 * The builtin engine reads and indexes the prompt-modifier lists once, when the service is created
 * (about half a second, after the current tick so the server starts listening first); calls that
 * arrive earlier wait for it. Its work per call is a few milliseconds of CPU, done on the event
 * loop rather than in the inference queue. Lists installed later (a fresh install's first-start
 * provisioning fetches them after the worker starts) are picked up by the next call. While they are
 * on their way the log says so once; should they never come (provisioning failed), the next call
 * builds the engine again, which then warns with the install command.
 */
import { PromptServiceService, type ImprovePromptRequest, type ImprovePromptResponse } from "../../gen/atelier/prompt/v1/prompt_service.js";
import type { Logger } from "../../core/logger.js";
import { unaryHandler } from "../grpc-handler.js";
import { BuiltinPromptEngine, type ImproveResult } from "./builtin-engine.js";
import { ChatCompletionsClient } from "./chat-completions-client.js";
import { LlmPromptEngine } from "./llm-engine.js";

export interface PromptLlmOptions {
  /** OpenAI-compatible base URL (`http://127.0.0.1:11434/v1`). */
  baseUrl: string;
  /** Model name on that server. */
  model: string;
  /** Bearer key, when the server wants one. */
  apiKey?: string | undefined;
  /** Whole-request limit in milliseconds; on expiry the builtin engine answers. Default 15000. */
  timeoutMs?: number | undefined;
  /** Sampling temperature. Default 0.7. */
  temperature?: number | undefined;
}

export interface PromptServiceOptions {
  /**
   * Folder of the installed prompt-builtin model (`<modelsDir>/prompt-builtin`, i.e.
   * `ModelStore.modelFolder("prompt-builtin")`) holding the prompt-modifier lists. When missing,
   * the builtin engine answers from its own tables and logs that the lists are not installed.
   */
  modifiersFolder?: string | undefined;
  /** CLIP merge list (`bpe_simple_vocab_16e6.txt.gz`) for exact token counts; else an estimate. */
  clipMergesFile?: string | undefined;
  /** Default prompt budget in CLIP tokens, markers included (16 to 512). Default 77. */
  maxTokens?: number | undefined;
  /** The lists are missing but first-start provisioning is installing them, or is about to. */
  listsArriving?: boolean | undefined;
  /** The LLM engine; undefined: builtin only. */
  llm?: PromptLlmOptions | undefined;
}

export interface PromptDependencies {
  logger: Logger;
  /**
   * A function is read again on each call while no lists were found, so lists installed later are
   * used without a restart; `starting` is true for the first read, as the worker starts.
   */
  options: PromptServiceOptions | ((starting: boolean) => PromptServiceOptions);
}

/** The engine behind the service, built once. */
export interface PromptEngines {
  builtin: BuiltinPromptEngine;
  llm: LlmPromptEngine | undefined;
}

function optionsOf(deps: PromptDependencies, starting: boolean): PromptServiceOptions {
  return typeof deps.options === "function" ? deps.options(starting) : deps.options;
}

export function createPromptEngines(deps: PromptDependencies, starting = true): PromptEngines {
  const { logger } = deps;
  const options = optionsOf(deps, starting);
  const builtin = new BuiltinPromptEngine({
    modifiersFolder: options.modifiersFolder,
    clipMergesFile: options.clipMergesFile,
    defaultMaxTokens: options.maxTokens,
    listsArriving: options.listsArriving,
    logger,
  });
  logger.info({ engine: "prompt-builtin", ...builtin.status }, "prompt engine ready");
  const llm = options.llm
    ? new LlmPromptEngine(
        new ChatCompletionsClient({
          baseUrl: options.llm.baseUrl,
          model: options.llm.model,
          apiKey: options.llm.apiKey,
          timeoutMs: options.llm.timeoutMs,
          temperature: options.llm.temperature,
        }),
        builtin,
        { logger },
      )
    : undefined;
  if (llm) logger.info({ engine: llm.model, url: options.llm?.baseUrl }, "LLM prompt engine configured");
  return { builtin, llm };
}

export async function improvePrompt(request: ImprovePromptRequest, engines: PromptEngines, signal: AbortSignal): Promise<ImprovePromptResponse> {
  const improveRequest = {
    prompt: request.prompt,
    style: request.style,
    mood: request.mood,
    seed: request.seed,
    variants: request.variants,
    maxTokens: request.maxTokens,
  };
  const result: ImproveResult = engines.llm ? await engines.llm.improve(improveRequest, signal) : engines.builtin.improve(improveRequest);
  return {
    model: result.model,
    seed: result.seed,
    variants: result.variants.map(({ prompt, negativePrompt, subject, styleTerms, moodTerms, detailTerms }) => ({
      prompt,
      negativePrompt,
      subject,
      styleTerms,
      moodTerms,
      detailTerms,
    })),
  };
}

export function promptServiceImplementation(deps: PromptDependencies) {
  let current: PromptEngines | undefined;
  // Built after the current tick, so binding the server is not held up by indexing.
  const first = new Promise<void>((resolve, reject) =>
    setImmediate(() => {
      try {
        current = createPromptEngines(deps);
        resolve();
      } catch (error) {
        reject(error);
      }
    }),
  );
  first.catch((error: unknown) => deps.logger.error({ err: error }, "prompt engine failed to start"));
  /**
   * The engines, built again once the lists that were not installed are, or once they stop being on
   * their way without arriving (checked and rebuilt in one step, so once).
   */
  const engines = async (): Promise<PromptEngines> => {
    await first;
    const { status } = current!.builtin;
    if (status.modifiersFolder === undefined && typeof deps.options === "function") {
      const options = deps.options(false);
      if (options.modifiersFolder !== undefined || (status.listsArriving && !options.listsArriving)) current = createPromptEngines(deps, false);
    }
    return current!;
  };
  return {
    definition: PromptServiceService,
    implementation: {
      improvePrompt: unaryHandler<ImprovePromptRequest, ImprovePromptResponse>(deps.logger, "ImprovePrompt", async (request, signal) =>
        improvePrompt(request, await engines(), signal),
      ),
    },
  };
}
