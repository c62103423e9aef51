/**
 * Has zod build each operation's request and answer parsers before a first call needs them: zod
 * writes and compiles an object schema's parser the first time it parses a value of that shape (each
 * object in the request and in the answer, nested ones included), work the first call of each
 * operation would otherwise pay on top of its own. Each operation's documented success example
 * (contract/operations.ts) goes through both of its schemas, the same synchronous parse the router's
 * procedures run; nothing is called, charged or counted. One operation per turn of the event loop, so
 * a request being served waits behind one at most; `signal` stops what has not started.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { OPERATIONS } from "../contract/operations.js";

export async function compileOperationSchemas(signal: AbortSignal): Promise<void> {
  for (const { input, output, examples } of OPERATIONS) {
    await nextTurn();
    if (signal.aborted) return;
    // A value the schema refuses still builds its parser; an example that fails is the contract test's to report.
    input.safeParse(examples.success.request);
    output.safeParse(examples.success.response);
  }
}
