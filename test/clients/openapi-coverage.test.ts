/**
 * The TypeScript client cannot fall behind the served OpenAPI document: its generated types must be
 * what openapi-typescript makes of the document today, every served operation must have a method,
 * and the browser entry point must not import Node.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Atelier, OPERATIONS } from "../../clients/typescript/src/index.js";
import { renderTypes } from "../../clients/typescript/scripts/openapi-types.js";
import { startTestService, type TestService } from "../support/test-service.js";

const clientDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "clients", "typescript");
const HTTP_METHODS = ["get", "post", "put", "patch", "delete"];

let service: TestService;
let document: { paths: Record<string, Record<string, unknown>> };

beforeAll(async () => {
  service = await startTestService();
  document = (await (await fetch(`${service.url}/api/v1/openapi.json`)).json()) as typeof document;
});
afterAll(async () => {
  await service.close();
});

const normalise = (template: string) => template.replace(/\{[^}]+\}/g, "{}");

function served(): Array<{ method: string; path: string }> {
  return Object.entries(document.paths).flatMap(([apiPath, item]) =>
    Object.keys(item)
      .filter((method) => HTTP_METHODS.includes(method))
      .map((method) => ({ method: method.toUpperCase(), path: apiPath })),
  );
}

describe("the TypeScript client and the served OpenAPI document", () => {
  it("has generated types identical to what openapi-typescript makes of the served document", async () => {
    const committed = fs.readFileSync(path.join(clientDir, "src", "generated", "openapi.ts"), "utf8");
    expect(committed === (await renderTypes(document)), "clients/typescript/src/generated/openapi.ts is stale: run `npm run generate:client-types`").toBe(true);
  });

  it("has a method for every operation the server serves", () => {
    const operations = served();
    expect(operations.length).toBeGreaterThanOrEqual(6);
    const client = new Atelier({ baseURL: service.url });
    for (const { method, path: apiPath } of operations) {
      const entry = OPERATIONS.find((operation) => operation.method === method && normalise(operation.path) === normalise(apiPath));
      expect(entry, `${method} ${apiPath} is served but has no client method in clients/typescript/src/operations.ts`).toBeDefined();
      const [resource, name] = entry!.client.split(".") as [keyof Atelier, string];
      expect(typeof (client[resource] as unknown as Record<string, unknown>)[name], `Atelier.${entry!.client}`).toBe("function");
    }
  });

  it("keeps the browser entry point free of Node imports and globals (files come through node.ts)", () => {
    const nodeOnly = new Set(["node.ts", path.join("cli", "main.ts"), path.join("cli", "progress.ts")]);
    const sources = fs.readdirSync(path.join(clientDir, "src"), { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts") && !nodeOnly.has(file));
    expect(sources.length).toBeGreaterThan(10);
    for (const file of sources) {
      const text = fs.readFileSync(path.join(clientDir, "src", file), "utf8");
      expect(text, file).not.toMatch(/from "node:|require\(|\bBuffer\.|import\("node:/);
    }
  });
});
