/**
 * The LLM engine: an operator's language model (any OpenAI-compatible chat-completions server)
 * writes the prompt; the builtin engine still does everything else.
 *
 * Each request is first answered by the builtin engine (validation, seed, subject, negative prompt,
 * the style/mood/detail pieces). The model is then asked, once per variant, for one improved prompt
 * honouring the style and mood, with the preset's terms as hints. Its answer is cleaned
 * (llm-output-cleaner.ts) and checked: it must keep every noun of the user's idea and fit the CLIP
 * token budget (a longer answer is cut back at a comma, never inside the user's words). If any
 * variant fails (error, timeout, unusable text) the whole answer is the builtin one, and the
 * response's `model` says so: `prompt-llm:<model>` when the model wrote the prompts,
 * `prompt-builtin` when it did not. Mixing both under one label would misreport who answered.
 */
import type { Logger } from "../../core/logger.js";
import { BuiltinPromptEngine, type ImproveRequest, type ImproveResult, type ImprovedVariant } from "./builtin-engine.js";
import { ChatCompletionError, type ChatCompletionsClient, type ChatMessage } from "./chat-completions-client.js";
import { dedupeKeys } from "./dedupe-keys.js";
import { cleanLlmOutput } from "./llm-output-cleaner.js";
import { analysePrompt } from "./prompt-analysis.js";
import { matchMood, matchStyle } from "./preset-matching.js";

export const LLM_MODEL_PREFIX = "prompt-llm:";

export const SYSTEM_PROMPT = [
  "You improve prompts for text-to-image models such as Stable Diffusion.",
  "Rewrite the user's idea as one prompt that an image model renders well.",
  "Keep every word of the idea, in the same order; do not change the subject.",
  "Add concrete visual detail: medium, composition, lighting, colour, texture and quality terms.",
  "Honour the requested style and mood when given.",
  "Write comma-separated phrases, not sentences about the prompt.",
  "Reply with the prompt only: a single line, no introduction, no quotes, no markdown, no explanation, no negative prompt.",
].join(" ");

export interface LlmEngineOptions {
  /** Name reported after `prompt-llm:`; the client's model by default. */
  label?: string;
  logger?: Logger | undefined;
}

export class LlmPromptEngine {
  readonly model: string;

  constructor(
    private readonly client: ChatCompletionsClient,
    private readonly builtin: BuiltinPromptEngine,
    private readonly options: LlmEngineOptions = {},
  ) {
    this.model = `${LLM_MODEL_PREFIX}${options.label ?? client.options.model}`;
  }

  async improve(request: ImproveRequest, signal?: AbortSignal): Promise<ImproveResult> {
    const fallback = this.builtin.improve(request);
    if (fallback.overLimit) return fallback;
    const maxTokens = request.maxTokens === 0 ? undefined : request.maxTokens;
    const userNouns = nounKeys(request.prompt);
    const wanted = Math.max(1, request.variants === 0 ? 1 : request.variants);
    const abort = new AbortController();
    const combined = signal ? AbortSignal.any([signal, abort.signal]) : abort.signal;
    try {
      const answers = await Promise.all(
        Array.from({ length: wanted }, async (_, v) => {
          const raw = await this.client.complete(this.messages(request), { signal: combined, seed: (fallback.seed + v) >>> 0 });
          const line = this.usable(raw, request.prompt, userNouns, maxTokens);
          if (line === undefined) throw new ChatCompletionError("malformed", "The answer has no usable prompt line.");
          return line;
        }),
      );
      const variants: ImprovedVariant[] = [];
      const seen = new Set<string>();
      answers.forEach((prompt, v) => {
        if (seen.has(prompt.toLowerCase())) return;
        seen.add(prompt.toLowerCase());
        const pieces = fallback.variants[v] ?? fallback.variants[0]!;
        variants.push({ ...pieces, prompt, tokens: this.builtin.countTokens(prompt) });
      });
      return { ...fallback, model: this.model, variants };
    } catch (error) {
      abort.abort();
      if (signal?.aborted) throw signal.reason ?? error;
      const reason = error instanceof ChatCompletionError ? error.reason : "error";
      this.options.logger?.warn({ engine: this.model, reason, status: (error as ChatCompletionError).status, err: (error as Error).message }, "LLM prompt engine failed; the builtin engine answered");
      return { ...fallback, notes: [...fallback.notes, `The language model did not answer usably (${reason}); the builtin engine answered.`] };
    }
  }

  private messages(request: ImproveRequest): ChatMessage[] {
    const style = matchStyle(request.style);
    const mood = matchMood(request.mood);
    const lines = [`Idea: ${request.prompt.trim()}`];
    if (style.kind === "preset" || style.kind === "contains") {
      lines.push(`Style: ${style.kind === "contains" ? style.text : style.preset.name} (for example: ${style.preset.terms.slice(0, 3).join(", ")})`);
    } else if (style.kind === "free") lines.push(`Style: ${style.text}`);
    if (mood.kind === "preset" || mood.kind === "contains") {
      const preset = mood.preset;
      lines.push(`Mood: ${mood.kind === "contains" ? mood.text : preset.name} (for example: ${[preset.atmosphere[0], preset.lighting[0], preset.color[0]].join(", ")})`);
    } else if (mood.kind === "free") lines.push(`Mood: ${mood.text}`);
    const budget = (request.maxTokens || 77) - 2;
    lines.push(`Length: at most ${Math.max(10, Math.floor(budget * 0.7))} words.`);
    return [
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: lines.join("\n") },
    ];
  }

  /** The cleaned answer when it keeps the user's nouns and fits the budget (cut at a comma if needed). */
  private usable(raw: string, userPrompt: string, userNouns: string[], maxTokens: number | undefined): string | undefined {
    let line = cleanLlmOutput(raw, { userPrompt });
    if (line.length < 3) return undefined;
    const keeps = (text: string) => {
      const keys = new Set(dedupeKeys(text));
      return userNouns.every((key) => keys.has(key));
    };
    if (!keeps(line)) return undefined;
    while (!this.builtin.fits(line, maxTokens)) {
      const cut = line.lastIndexOf(",");
      if (cut <= 0) return undefined;
      line = line.slice(0, cut).trim();
      if (!keeps(line)) return undefined;
    }
    return line;
  }
}

/** Keys of the user's nouns: what an LLM rewrite must not lose. */
function nounKeys(prompt: string): string[] {
  const analysis = analysePrompt(prompt);
  const nouns = analysis.words.filter((word) => word.role === "noun").map((word) => word.text);
  return [...new Set(nouns.flatMap(dedupeKeys))];
}
