import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import { OPERATIONS } from "../../contract/operations.js";
import { compileOperationSchemas } from "../../server/compile-operation-schemas.js";

describe("compiling the operations' parsers ahead of their first calls", () => {
  afterEach(() => vi.restoreAllMocks());

  it("parses each operation's documented success example, which its schemas accept, so every object in a request and an answer is reached", () => {
    for (const { id, input, output, examples } of OPERATIONS) {
      expect(input.safeParse(examples.success.request).success, `${id}: request example`).toBe(true);
      expect(output.safeParse(examples.success.response).success, `${id}: response example`).toBe(true);
    }
  });

  it("parses each schema once, one operation per turn of the event loop, and nothing once stopped", async () => {
    const parses = OPERATIONS.flatMap(({ input, output }) => [vi.spyOn(input, "safeParse"), vi.spyOn(output, "safeParse")]);
    const controller = new AbortController();
    const compiling = compileOperationSchemas(controller.signal);
    // Synchronously, nothing yet: the caller (the server, just listening) goes on at once.
    expect(parses.filter((parse) => parse.mock.calls.length > 0)).toHaveLength(0);
    await nextTurn();
    await nextTurn();
    const afterTwoTurns = parses.filter((parse) => parse.mock.calls.length > 0).length;
    expect(afterTwoTurns).toBeGreaterThan(0);
    expect(afterTwoTurns).toBeLessThan(parses.length);
    controller.abort();
    await compiling;
    expect(parses.filter((parse) => parse.mock.calls.length > 0)).toHaveLength(afterTwoTurns);

    vi.clearAllMocks();
    await compileOperationSchemas(new AbortController().signal);
    expect(parses.map((parse) => parse.mock.calls.length)).toEqual(parses.map(() => 1));
  });
});
