/**
 * The gRPC PromptService on a real loopback server: the generated client's view of a response,
 * the error statuses, and the LLM engine behind the same contract.
 */
import { credentials, Metadata, Server, ServerCredentials, status as GrpcStatus, type ServiceError, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODE_METADATA_KEY } from "../../transport/grpc-errors.js";
import { createLogger } from "../../core/logger.js";
import { ImprovePromptRequest, PromptServiceClient, type ImprovePromptResponse } from "../../gen/atelier/prompt/v1/prompt_service.js";
import { promptServiceImplementation, type PromptDependencies, type PromptServiceOptions } from "../../workers/prompt/prompt-service.js";
import { startFakeChatServer, type FakeChatServer } from "./fake-chat-server.js";
import { CLIP_MERGES_FILE, hasClipVocabulary, hasModifierLists, MODIFIERS_FOLDER } from "./prompt-fixtures.js";

const logger = createLogger("silent");
const servers: Server[] = [];
const clients: InstanceType<typeof PromptServiceClient>[] = [];
let chat: FakeChatServer;
let builtinClient: InstanceType<typeof PromptServiceClient>;

async function serve(options: PromptDependencies["options"]): Promise<InstanceType<typeof PromptServiceClient>> {
  const server = new Server();
  const { definition, implementation } = promptServiceImplementation({ logger, options });
  server.addService(definition, implementation as UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  servers.push(server);
  const client = new PromptServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
  clients.push(client);
  return client;
}

function call(client: InstanceType<typeof PromptServiceClient>, request: Partial<ImprovePromptRequest>) {
  return new Promise<{ error?: ServiceError; response?: ImprovePromptResponse }>((resolve) =>
    client.improvePrompt(ImprovePromptRequest.fromPartial(request), new Metadata(), { deadline: Date.now() + 20_000 }, (error, response) =>
      resolve(error ? { error } : { response }),
    ),
  );
}

const builtinOptions: PromptServiceOptions = {
  modifiersFolder: hasModifierLists ? MODIFIERS_FOLDER : undefined,
  clipMergesFile: hasClipVocabulary ? CLIP_MERGES_FILE : undefined,
  maxTokens: 77,
};

beforeAll(async () => {
  chat = await startFakeChatServer({ apiKey: "k" });
  builtinClient = await serve(builtinOptions);
});
afterAll(async () => {
  for (const client of clients) client.close();
  for (const server of servers) server.forceShutdown();
  await chat.close();
});

describe("PromptService over gRPC", () => {
  it("improves a prompt with the builtin engine", async () => {
    const client = builtinClient;
    const { response, error } = await call(client, { prompt: "a cat on a roof", style: "cinematic", mood: "calm", seed: 5, variants: 2 });
    expect(error).toBeUndefined();
    expect(response?.model).toBe("prompt-builtin");
    expect(response?.seed).toBe(5);
    expect(response?.variants).toHaveLength(2);
    const [first] = response!.variants;
    expect(first!.prompt).toMatch(/^a cinematic film still of a cat on a roof, /);
    expect(first!.negativePrompt).not.toBe("");
    expect(first!.subject).toBe("a cat");
    expect(first!.styleTerms[0]).toBe("cinematic film still");
    expect(first!.moodTerms.length).toBeGreaterThan(0);
    expect(Object.keys(first!).sort()).toEqual(["detailTerms", "moodTerms", "negativePrompt", "prompt", "styleTerms", "subject"]);
    // Unset seed: one is picked and reported; 0 variants means one.
    const unseeded = await call(client, { prompt: "a cat" });
    expect(unseeded.response?.variants).toHaveLength(1);
    expect(typeof unseeded.response?.seed).toBe("number");
  });

  it("uses term lists installed after it started, from the next call on (a fresh install fetches them after the worker starts)", async () => {
    let installed = false;
    const client = await serve(() => (installed ? builtinOptions : { maxTokens: 77 }));
    const request = { prompt: "a cat on a roof", style: "cinematic", seed: 5 };
    const withLists = (await call(builtinClient, request)).response!;
    const before = (await call(client, request)).response!;
    expect(before.variants[0]!.prompt).not.toBe(withLists.variants[0]!.prompt);
    installed = true;
    expect((await call(client, request)).response).toEqual(withLists);
  });

  it.each([
    [{ prompt: "" }, "prompt"],
    [{ prompt: "a cat", variants: 9 }, "variants"],
    [{ prompt: "a cat", maxTokens: 4 }, "maxTokens"],
  ])("answers INVALID_ARGUMENT for %j", async (request, field) => {
    const { error } = await call(builtinClient, request);
    expect(error?.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error?.metadata.get(ERROR_CODE_METADATA_KEY)[0]).toBe("INVALID_INPUT");
    expect(error?.details).toContain(field);
  });

  it("answers from the LLM engine when configured, and reports it", async () => {
    chat.behave({ kind: "answer", content: "Here is your prompt:\na cat on a roof, moonlit tiles, soft rim light" });
    const client = await serve({ ...builtinOptions, llm: { baseUrl: chat.baseUrl, model: "qwen2.5", apiKey: "k", timeoutMs: 2000 } });
    const { response } = await call(client, { prompt: "a cat on a roof", seed: 1 });
    expect(response?.model).toBe("prompt-llm:qwen2.5");
    expect(response?.variants[0]?.prompt).toBe("a cat on a roof, moonlit tiles, soft rim light");
    chat.behave({ kind: "status", status: 500 });
    const fallback = await call(client, { prompt: "a cat on a roof", seed: 1 });
    expect(fallback.response?.model).toBe("prompt-builtin");
  });
});
