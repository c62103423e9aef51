/**
 * Authentication tricks against a metered endpoint: every malformed, foreign, revoked or misplaced
 * credential is 401 (never 5xx, never the key echoed back); only a well-formed live key passes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/test-service.js";
import { rawRequest } from "./support/hostile-service.js";

let service: TestService;
let key: string;
let revoked: string;
beforeAll(async () => {
  service = await startTestService();
  key = await service.createKey("auth", 100_000);
  revoked = await service.createKey("revoked");
  const [record] = (await service.services.keys.list()).filter((entry) => entry.name === "revoked");
  await service.services.keys.revoke(record!.id);
});
afterAll(() => service?.close());

const improve = (headers: Record<string, string | string[]>, path = "/api/v1/prompt/improve") =>
  rawRequest(service.port, "POST", path, { "content-type": "application/json", ...headers }, JSON.stringify({ prompt: "a cat" }));

describe("authentication tricks", () => {
  it("accepts the key with the Bearer scheme in any case", async () => {
    for (const scheme of ["Bearer", "bearer", "BEARER"]) expect((await improve({ authorization: `${scheme} ${key}` })).status).toBe(200);
  });

  it("answers 401 to every trick, on REST and tRPC, without echoing the key", async () => {
    const [prefix] = key.split("_").length > 1 ? [key.slice(0, key.lastIndexOf("_") + 1)] : [key.slice(0, 8)];
    const tricks: Record<string, string | string[]>[] = [
      {},
      { authorization: "" },
      { authorization: "Bearer" },
      { authorization: "Bearer " },
      { authorization: `Basic ${Buffer.from(`${key}:`).toString("base64")}` },
      { authorization: key },
      { authorization: `Token ${key}` },
      { authorization: `Bearer ${key}x` },
      { authorization: `Bearer ${key.slice(0, -1)}` },
      { authorization: `Bearer ${key.slice(0, -1)}${key.at(-1) === "A" ? "B" : "A"}` },
      { authorization: `Bearer ${prefix}` },
      { authorization: `Bearer ${revoked}` },
      { authorization: `Bearer ${key} ${key}` },
      { authorization: `Bearer ${"k".repeat(6000)}` },
      { authorization: `Bearer ${key.toUpperCase()}` },
      { authorization: "Bearer ' OR 1=1 --" },
      { authorization: "Bearer ../../etc/passwd" },
      { authorization: "Bearer %00" },
      { "x-api-key": key },
      { cookie: `key=${key}` },
    ];
    for (const headers of tricks) {
      for (const path of ["/api/v1/prompt/improve", "/trpc/prompt.improve"]) {
        const answer = await improve(headers, path);
        expect({ headers: JSON.stringify(headers).slice(0, 80), path, status: answer.status }).toMatchObject({ path, status: 401 });
        expect(answer.body).not.toContain(key);
      }
    }
    const inQuery = await improve({}, `/api/v1/prompt/improve?api_key=${key}`);
    expect(inQuery.status).toBe(401);
  });
});
