/**
 * A minimal client for the OpenAI chat-completions protocol, which Ollama, llama.cpp's server,
 * vLLM, LM Studio and OpenAI itself all speak: POST `{baseUrl}/chat/completions` with a JSON body
 * `{model, messages, …}`, answer in `choices[0].message.content`. No SDK: one request, a timeout,
 * and failures reported with a reason the engine can log.
 */

export interface ChatCompletionsOptions {
  /**
   * Base URL of the API, as OpenAI SDKs take it: `http://127.0.0.1:11434/v1` (Ollama),
   * `http://127.0.0.1:8080/v1` (llama.cpp), `https://api.openai.com/v1`. A URL already ending in
   * `/chat/completions` is used as it is.
   */
  baseUrl: string;
  /** Model name as the server knows it (`llama3.2`, `gpt-4o-mini`). */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string | undefined;
  /** Whole-request time limit in milliseconds. Default 15000. */
  timeoutMs?: number | undefined;
  /** Sampling temperature. Default 0.7. */
  temperature?: number | undefined;
  /** Longest answer in model tokens (`max_tokens`). Default 300. */
  maxAnswerTokens?: number | undefined;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** Why a completion failed: for logs and tests, never shown to clients. */
export class ChatCompletionError extends Error {
  constructor(
    readonly reason: "timeout" | "cancelled" | "network" | "http" | "malformed" | "empty",
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "ChatCompletionError";
  }
}

export const DEFAULT_LLM_TIMEOUT_MS = 15_000;

export class ChatCompletionsClient {
  readonly url: string;

  constructor(readonly options: ChatCompletionsOptions) {
    const base = options.baseUrl.replace(/\/+$/, "");
    this.url = /\/chat\/completions$/.test(base) ? base : `${base}/chat/completions`;
  }

  /** The answer's text; throws {@link ChatCompletionError}. */
  async complete(messages: ChatMessage[], options: { signal?: AbortSignal | undefined; seed?: number | undefined } = {}): Promise<string> {
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const body = {
      model: this.options.model,
      messages,
      temperature: this.options.temperature ?? 0.7,
      max_tokens: this.options.maxAnswerTokens ?? 300,
      n: 1,
      stream: false,
      ...(options.seed === undefined ? {} : { seed: options.seed }),
    };
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.url, { method: "POST", headers, body: JSON.stringify(body), signal });
      text = await response.text();
    } catch (error) {
      if (timeout.aborted) throw new ChatCompletionError("timeout", `No answer within ${timeoutMs} ms.`);
      if (options.signal?.aborted) throw new ChatCompletionError("cancelled", "The request was cancelled.");
      throw new ChatCompletionError("network", `Could not reach ${this.url}: ${(error as Error).message}`);
    }
    if (!response.ok) {
      throw new ChatCompletionError("http", `The server answered HTTP ${response.status}: ${text.slice(0, 200)}`, response.status);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ChatCompletionError("malformed", `The answer is not JSON: ${text.slice(0, 100)}`);
    }
    const content = (parsed as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
    if (typeof content !== "string") throw new ChatCompletionError("malformed", "The answer has no choices[0].message.content string.");
    if (content.trim() === "") throw new ChatCompletionError("empty", "The answer is empty.");
    return content;
  }
}
