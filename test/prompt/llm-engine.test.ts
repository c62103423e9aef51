/**
 * The LLM engine against a loopback chat-completions server: a good answer is used (and reported as
 * `prompt-llm:<model>`), chatter is cleaned to one line, and every failure — slow, 500, 401,
 * not JSON, no choices, an answer that loses the subject — falls back to the builtin engine.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BuiltinPromptEngine } from "../../workers/prompt/builtin-engine.js";
import { ChatCompletionError, ChatCompletionsClient } from "../../workers/prompt/chat-completions-client.js";
import { LlmPromptEngine, SYSTEM_PROMPT } from "../../workers/prompt/llm-engine.js";
import { startFakeChatServer, type FakeChatServer } from "./fake-chat-server.js";
import { CLIP_MERGES_FILE, hasClipVocabulary, hasModifierLists, MODIFIERS_FOLDER } from "./prompt-fixtures.js";

const KEY = "sk-test-0123456789";
const MODEL = "tiny-llama";
let server: FakeChatServer;
let builtin: BuiltinPromptEngine;
const warnings: { reason?: string }[] = [];
const logger = { warn: (fields: { reason?: string }) => warnings.push(fields), info: () => {}, error: () => {}, debug: () => {} };

beforeAll(async () => {
  server = await startFakeChatServer({ apiKey: KEY, model: MODEL });
  builtin = new BuiltinPromptEngine({
    modifiersFolder: hasModifierLists ? MODIFIERS_FOLDER : undefined,
    clipMergesFile: hasClipVocabulary ? CLIP_MERGES_FILE : undefined,
  });
});
afterAll(() => server.close());

function engine(options: { apiKey?: string; timeoutMs?: number; model?: string } = {}): LlmPromptEngine {
  const client = new ChatCompletionsClient({ baseUrl: server.baseUrl, model: options.model ?? MODEL, apiKey: options.apiKey ?? KEY, timeoutMs: options.timeoutMs ?? 2000 });
  return new LlmPromptEngine(client, builtin, { logger: logger as never });
}

const request = { prompt: "a cat on a roof", style: "watercolour", mood: "calm", seed: 11, variants: 1, maxTokens: 0 };

describe("LLM prompt engine", () => {
  it("uses the model's prompt, with the builtin engine's negative prompt and pieces", async () => {
    server.behave({ kind: "answer", content: "a cat on a roof at dusk, soft watercolor washes, pastel sky, gentle light" });
    const result = await engine().improve(request);
    const reference = builtin.improve(request);
    expect(result.model).toBe(`prompt-llm:${MODEL}`);
    expect(result.seed).toBe(11);
    expect(result.variants).toHaveLength(1);
    const variant = result.variants[0]!;
    expect(variant.prompt).toBe("a cat on a roof at dusk, soft watercolor washes, pastel sky, gentle light");
    expect(variant.negativePrompt).toBe(reference.variants[0]!.negativePrompt);
    expect(variant.subject).toBe("a cat");
    expect(variant.styleTerms).toEqual(reference.variants[0]!.styleTerms);
    expect(variant.moodTerms).toEqual(reference.variants[0]!.moodTerms);
    expect(variant.detailTerms).toEqual(reference.variants[0]!.detailTerms);
  });

  it("speaks the protocol: POST /v1/chat/completions, JSON with model and messages, bearer key, seed", async () => {
    server.behave({ kind: "answer", content: "a cat on a roof, moonlight" });
    const before = server.requests.length;
    await engine().improve({ ...request, seed: 99 });
    const sent = server.requests[before]!;
    expect(sent.method).toBe("POST");
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.contentType).toBe("application/json");
    expect(sent.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.body.model).toBe(MODEL);
    expect(sent.body.seed).toBe(99);
    expect(sent.body.messages?.[0]).toEqual({ role: "system", content: SYSTEM_PROMPT });
    const user = sent.body.messages?.[1];
    expect(user?.role).toBe("user");
    expect(user?.content).toContain("Idea: a cat on a roof");
    expect(user?.content).toMatch(/Style: Watercolour \(for example: soft color washes/);
    expect(user?.content).toMatch(/Mood: Calm \(for example: serene atmosphere/);
  });

  it("asks once per variant and returns distinct variants", async () => {
    let count = 0;
    server.behave({ kind: "answer", content: () => `a cat on a roof, variant ${++count} lighting` });
    const result = await engine().improve({ ...request, variants: 3 });
    expect(result.model).toBe(`prompt-llm:${MODEL}`);
    expect(new Set(result.variants.map((variant) => variant.prompt)).size).toBe(3);
    expect(new Set(server.requests.slice(-3).map((sent) => sent.body.seed))).toEqual(new Set([11, 12, 13]));
  });

  it("cleans multi-paragraph chatter with a preamble down to one usable line", async () => {
    server.behave({
      kind: "answer",
      content:
        "Sure! Here is an improved prompt for your image:\n\n" +
        '**Prompt:** "A cat on a roof under a calm evening sky, loose watercolor washes, soft pastel palette, delicate paper texture."\n\n' +
        "**Negative prompt:** blurry, photo\n\n" +
        "I kept your subject and added watercolor-specific texture. Let me know if you'd like changes!",
    });
    const result = await engine().improve(request);
    expect(result.model).toBe(`prompt-llm:${MODEL}`);
    expect(result.variants[0]!.prompt).toBe("A cat on a roof under a calm evening sky, loose watercolor washes, soft pastel palette, delicate paper texture");
  });

  it("cuts an over-long answer back at a comma to fit the budget", async () => {
    const long = `a cat on a roof, ${Array.from({ length: 40 }, (_, i) => `detail number ${i}`).join(", ")}`;
    server.behave({ kind: "answer", content: long });
    const result = await engine().improve({ ...request, maxTokens: 32 });
    expect(result.model).toBe(`prompt-llm:${MODEL}`);
    const prompt = result.variants[0]!.prompt;
    expect(long.startsWith(prompt)).toBe(true);
    expect(builtin.fits(prompt, 32)).toBe(true);
    expect(prompt.length).toBeGreaterThan("a cat on a roof".length);
  });

  const fallbacks: [string, () => void, string, { timeoutMs?: number; apiKey?: string }?][] = [
    ["a slow server (timeout)", () => server.behave({ kind: "slow", delayMs: 1500, content: "a cat on a roof, late" }), "timeout", { timeoutMs: 200 }],
    ["HTTP 500", () => server.behave({ kind: "status", status: 500 }), "http"],
    ["a wrong key (HTTP 401)", () => server.behave({ kind: "answer", content: "a cat on a roof, fine" }), "http", { apiKey: "sk-wrong" }],
    ["a body that is not JSON", () => server.behave({ kind: "raw", body: "<html>Bad gateway</html>" }), "malformed"],
    ["empty choices", () => server.behave({ kind: "json", body: { id: "x", object: "chat.completion", choices: [] } }), "malformed"],
    ["an empty answer", () => server.behave({ kind: "answer", content: "   " }), "empty"],
    ["only chatter", () => server.behave({ kind: "answer", content: "Sure! Let me know if you need anything else." }), "malformed"],
    ["an answer that loses the subject", () => server.behave({ kind: "answer", content: "a dog in a park, golden hour, 35mm" }), "malformed"],
  ];

  it.each(fallbacks)("falls back to the builtin engine on %s", async (_, setUp, reason, options) => {
    setUp();
    warnings.length = 0;
    const started = performance.now();
    const result = await engine(options).improve(request);
    expect(result.model).toBe("prompt-builtin");
    expect(result).toMatchObject({ seed: 11, style: "watercolour", mood: "calm" });
    expect(result.variants[0]!.prompt).toBe(builtin.improve(request).variants[0]!.prompt);
    expect(result.notes.join(" ")).toMatch(new RegExp(`did not answer usably \\(${reason}\\)`));
    expect(warnings.map((warning) => warning.reason)).toContain(reason);
    if (options?.timeoutMs) expect(performance.now() - started).toBeLessThan(1450);
  });

  it("falls back when the server cannot be reached at all", async () => {
    const client = new ChatCompletionsClient({ baseUrl: "http://127.0.0.1:9/v1", model: MODEL, timeoutMs: 2000 });
    const result = await new LlmPromptEngine(client, builtin).improve(request);
    expect(result.model).toBe("prompt-builtin");
    expect(result.notes.join(" ")).toMatch(/\(network\)/);
  });

  it("does not call the model when the user's prompt alone is over the budget", async () => {
    const before = server.requests.length;
    const long = "a cat on a roof with " + "many glowing paper lanterns and ".repeat(8) + "stars";
    const result = await engine().improve({ ...request, prompt: long, maxTokens: 20 });
    expect(result.overLimit).toBe(true);
    expect(result.variants[0]!.prompt).toBe(long);
    expect(server.requests.length).toBe(before);
  });

  it("passes the caller's cancellation through", async () => {
    server.behave({ kind: "slow", delayMs: 1500, content: "a cat on a roof, late" });
    const controller = new AbortController();
    const pending = engine({ timeoutMs: 5000 }).improve(request, controller.signal);
    setTimeout(() => controller.abort(new Error("caller went away")), 50);
    await expect(pending).rejects.toThrow("caller went away");
  });
});

describe("chat-completions client", () => {
  it("reports why a completion failed", async () => {
    server.behave({ kind: "status", status: 503, body: "overloaded" });
    const client = new ChatCompletionsClient({ baseUrl: `${server.baseUrl}/`, model: MODEL, apiKey: KEY });
    expect(client.url).toBe(`${server.baseUrl}/chat/completions`);
    const failure = await client.complete([{ role: "user", content: "hi" }]).catch((error: unknown) => error as ChatCompletionError);
    expect(failure).toBeInstanceOf(ChatCompletionError);
    expect((failure as ChatCompletionError).reason).toBe("http");
    expect((failure as ChatCompletionError).status).toBe(503);
  });

  it("accepts a full chat/completions URL as it is", () => {
    expect(new ChatCompletionsClient({ baseUrl: "http://host:8080/v1/chat/completions", model: "m" }).url).toBe("http://host:8080/v1/chat/completions");
  });
});
