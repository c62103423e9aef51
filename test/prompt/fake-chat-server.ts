/**
 * A loopback OpenAI chat-completions server (node:http on 127.0.0.1, port 0) for the LLM engine's
 * tests. It checks what a real server checks (POST, path, JSON body with model and messages, the
 * bearer key) and answers as each test tells it to: a proper completion, slowly, with an HTTP
 * error, with a body that is not JSON, with no choices.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ChatRequestRecord {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: { model?: string; messages?: { role: string; content: string }[]; seed?: number; temperature?: number; max_tokens?: number };
}

export type ChatBehaviour =
  | { kind: "answer"; content: string | ((request: ChatRequestRecord) => string) }
  | { kind: "slow"; delayMs: number; content: string }
  | { kind: "status"; status: number; body?: string }
  | { kind: "raw"; body: string; contentType?: string }
  | { kind: "json"; body: unknown };

export interface FakeChatServer {
  /** Base URL as clients take it: `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  requests: ChatRequestRecord[];
  behave(behaviour: ChatBehaviour): void;
  close(): Promise<void>;
}

export async function startFakeChatServer(options: { apiKey?: string; model?: string } = {}): Promise<FakeChatServer> {
  let behaviour: ChatBehaviour = { kind: "answer", content: "" };
  const requests: ChatRequestRecord[] = [];
  const pending = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const send = (status: number, body: string, type = "application/json") => {
        if (res.writableEnded || res.destroyed) return;
        res.writeHead(status, { "content-type": type });
        res.end(body);
      };
      const error = (status: number, message: string, type: string) => send(status, JSON.stringify({ error: { message, type } }));
      if (req.method !== "POST") return error(405, "Method not allowed", "invalid_request_error");
      if (req.url !== "/v1/chat/completions") return error(404, `Unknown path ${req.url}`, "invalid_request_error");
      if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        return error(401, "Incorrect API key provided.", "invalid_api_key");
      }
      let body: ChatRequestRecord["body"];
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequestRecord["body"];
      } catch {
        return error(400, "We could not parse the JSON body of your request.", "invalid_request_error");
      }
      if (typeof body.model !== "string" || !Array.isArray(body.messages) || body.messages.length === 0) {
        return error(400, "model and messages are required", "invalid_request_error");
      }
      if (options.model !== undefined && body.model !== options.model) return error(404, `The model '${body.model}' does not exist`, "model_not_found");
      const record: ChatRequestRecord = {
        method: req.method,
        path: req.url,
        authorization: req.headers.authorization,
        contentType: req.headers["content-type"],
        body,
      };
      requests.push(record);
      const completion = (content: string) =>
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        });
      switch (behaviour.kind) {
        case "answer":
          return send(200, completion(typeof behaviour.content === "function" ? behaviour.content(record) : behaviour.content));
        case "slow": {
          const content = behaviour.content;
          const timer = setTimeout(() => {
            pending.delete(timer);
            send(200, completion(content));
          }, behaviour.delayMs);
          pending.add(timer);
          return;
        }
        case "status":
          return send(behaviour.status, behaviour.body ?? JSON.stringify({ error: { message: "Internal server error", type: "server_error" } }));
        case "raw":
          return send(200, behaviour.body, behaviour.contentType ?? "text/plain");
        case "json":
          return send(200, JSON.stringify(behaviour.body));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    behave: (next) => {
      behaviour = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of pending) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
