/**
 * Adapts a unary worker function to a server-streaming progress RPC: the work runs inside a
 * progress scope (work-progress.ts) whose reports become `{step, totalSteps, stage}` messages,
 * then one message carries the result; failures end the stream with a status, as unary calls do.
 * The call's cancellation aborts the work's signal, which tiling checks before every tile.
 */
import type { ServerWritableStream } from "@grpc/grpc-js";
import { AtelierError, asAtelierError } from "../core/errors.js";
import { toGrpcStatus } from "../transport/grpc-errors.js";
import type { Logger } from "../core/logger.js";
import { abortSignalFor } from "./grpc-handler.js";
import { withProgress } from "./work-progress.js";

interface ProgressMessage<Res> {
  step: number;
  totalSteps: number;
  stage: string;
  result?: Res | undefined;
}

export function progressStreamHandler<Req, Res>(logger: Logger, method: string, work: (request: Req, signal: AbortSignal) => Promise<Res>) {
  return (call: ServerWritableStream<{ request?: Req | undefined }, ProgressMessage<Res>>): void => {
    const signal = abortSignalFor(call as unknown as Parameters<typeof abortSignalFor>[0]);
    const started = performance.now();
    let last = { step: 0, totalSteps: 0 };
    const run = async () => {
      const request = call.request.request;
      if (!request) throw new AtelierError("INVALID_INPUT", "The stream request carries no request.", { issues: [{ path: "request", message: "Required." }] });
      return withProgress(
        (step, totalSteps, stage) => {
          last = { step, totalSteps };
          if (!signal.aborted) call.write({ step, totalSteps, stage });
        },
        () => work(request, signal),
      );
    };
    run().then(
      (result) => {
        logger.debug({ method, ms: Math.round(performance.now() - started) }, "call done");
        call.write({ ...last, stage: "", result });
        call.end();
      },
      (error: unknown) => {
        const failure = asAtelierError(error);
        if (failure.code === "INTERNAL") logger.error({ method, err: error }, "call failed");
        else logger.info({ method, code: failure.code }, "call refused");
        call.emit("error", toGrpcStatus(failure));
      },
    );
  };
}
