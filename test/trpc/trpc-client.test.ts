/** Internal TypeScript services: the typed tRPC client over HTTP at /trpc, same auth and quota. */
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRouter } from "../../server/router.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";

let service: TestService;
let key: string;

function clientWith(apiKey?: string, onHeaders?: (headers: Headers) => void) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${service.url}/trpc`,
        headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
        fetch: async (url, init) => {
          const response = await fetch(url, init as RequestInit);
          onHeaders?.(response.headers);
          return response;
        },
      }),
    ],
  });
}

async function failureOf(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCClientError);
    return error as TRPCClientError<AppRouter>;
  }
  throw new Error("expected the call to fail");
}

beforeAll(async () => {
  service = await startTestService({ ATELIER_RATE_LIMIT_PER_HOUR: "5" });
  key = await service.createKey("trpc");
});
afterAll(async () => {
  await service.close();
});

describe("tRPC over HTTP", () => {
  it("upscales with typed input and output, counting quota", async () => {
    let headers: Headers | undefined;
    const client = clientWith(key, (received) => (headers = received));
    const result = await client.tools.upscale.mutate({ imageUrl: dataUrl(await gradientPng(10, 10)), scale: 4 });
    expect(result.model).toBe("lanczos");
    expect(result.data[0]).toMatchObject({ width: 40, height: 40, mimeType: "image/png" });
    expect(headers?.get("x-ratelimit-remaining")).toBe("4");
    expect(headers?.get("x-request-id")).toBe(result.id);
  });

  it("takes upscale's quality, typed, and refuses an unknown one", async () => {
    const own = await service.createKey("trpc-quality");
    const result = await clientWith(own).tools.upscale.mutate({ imageUrl: dataUrl(await gradientPng(10, 10)), scale: 2, quality: "fast" });
    expect(result).toMatchObject({ model: "lanczos", steps: ["lanczos3 x2"] });
    // @ts-expect-error: the input type admits only fast, balanced and max.
    const invalid = await failureOf(clientWith(own).tools.upscale.mutate({ imageUrl: dataUrl(await gradientPng(10, 10)), quality: "best" }));
    expect(invalid.data).toMatchObject({ code: "INVALID_INPUT", httpStatus: 400 });
    expect(invalid.data?.issues?.[0]).toMatchObject({ path: "quality" });
  });

  it("lists models without a key", async () => {
    const models = await clientWith().models.list.query();
    expect(models.data.map((model) => model.id)).toContain("lanczos");
  });

  it("reports the service's error codes in error.data", async () => {
    const anonymous = await failureOf(clientWith().tools.upscale.mutate({ imageUrl: "x", scale: 2 }));
    expect(anonymous.data).toMatchObject({ code: "UNAUTHORIZED", httpStatus: 401 });

    const invalid = await failureOf(clientWith(key).tools.upscale.mutate({ imageUrl: "x", scale: 12 }));
    expect(invalid.data).toMatchObject({ code: "INVALID_INPUT", httpStatus: 400 });
    expect(invalid.data?.issues?.[0]).toMatchObject({ path: "scale" });
    expect(invalid.message).toMatch(/between 2 and 8/);

    const missing = await failureOf(clientWith(key).generate.mutate({ prompt: "a cat" }));
    expect(missing.data).toMatchObject({ code: "MODEL_NOT_INSTALLED", httpStatus: 503 });
    expect(JSON.stringify(missing.data)).not.toMatch(/stack|node_modules/);
  });

  it("answers 429 once the key's quota is spent", async () => {
    const limited = await service.createKey("trpc-limited", 1);
    const client = clientWith(limited);
    const image = dataUrl(await gradientPng(4, 4));
    await client.tools.upscale.mutate({ imageUrl: image });
    const refused = await failureOf(client.tools.upscale.mutate({ imageUrl: image }));
    expect(refused.data).toMatchObject({ code: "RATE_LIMITED", httpStatus: 429 });
  });
});
