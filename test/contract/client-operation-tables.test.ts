/**
 * Both clients keep a table of the operations they call (their method names are their own); the
 * synchronous operations in each must be exactly those of the server's list
 * (contract/operations.ts), same method and path, so an operation added to the list and not to a
 * client, or a path changed on one side only, fails here rather than in a user's hands.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../contract/operations.js";
import { OPERATIONS as TYPESCRIPT_OPERATIONS } from "../../clients/typescript/src/operations.js";

const ROOT = join(import.meta.dirname, "../..");

/** `METHOD /v1/...` as the list names it; the clients may give paths under `/api` or relative to it. */
const routeOf = (method: string, path: string) => `${method} ${path.replace(/^\/api(?=\/)/, "")}`;

/** The operations the list does not hold: the health probes at the root, and the jobs and webhook endpoints. */
const isListed = (route: string) => !/ \/(?:healthz|readyz)$| \/v1\/(?:jobs|webhooks)(?:\/|$)/.test(route);

/** The Python table's `("METHOD", "/path", "client.name")` rows. */
function pythonRoutes(): string[] {
  const source = readFileSync(join(ROOT, "clients/python/src/atelier/_operations.py"), "utf8");
  return [...source.matchAll(/\(\s*"(GET|POST|DELETE|PUT|PATCH)"\s*,\s*"([^"]+)"\s*,\s*"[^"]+"\s*\)/g)].map(([, method, path]) => routeOf(method!, path!));
}

const expected = OPERATIONS.map((operation) => routeOf(operation.method, operation.path)).sort();

describe("the clients' operation tables", () => {
  it("the TypeScript client calls exactly the listed operations", () => {
    const routes = TYPESCRIPT_OPERATIONS.map((operation) => routeOf(operation.method, operation.path));
    expect(routes.filter(isListed).sort()).toEqual(expected);
  });

  it("the Python client calls exactly the listed operations", () => {
    const routes = pythonRoutes();
    expect(routes.length).toBeGreaterThan(expected.length);
    expect(routes.filter(isListed).sort()).toEqual(expected);
  });
});
