/**
 * Serves a `*Chunked` RPC (its image in and out in pieces, transport/image-chunks.ts) with the same work
 * function as its unary twin: the request's image is gathered from its chunks as they arrive, the
 * work runs inside a progress scope whose reports become progress messages, then the response goes
 * out with its image as chunks, each written when the stream has room. A stream that breaks the
 * chunking rules, and every failure of the work, ends the call with a status as unary calls do.
 */
import { AsyncResource } from "node:async_hooks";
import type { ServerDuplexStream } from "@grpc/grpc-js";
import { AtelierError } from "../core/errors.js";
import { toGrpcStatus } from "../transport/grpc-errors.js";
import { chunkedMessages, ImageAssembly, withGatheredImage, writeInTurn, type ChunkedRequest, type ChunkedResponse, type WithImage } from "../transport/image-chunks.js";
import type { Logger } from "../core/logger.js";
import { startCallRecord } from "./call-record.js";
import { abortSignalFor } from "./grpc-handler.js";
import { withProgress } from "./work-progress.js";

export function chunkedImageHandler<Req extends WithImage, Res extends WithImage>(
  logger: Logger,
  method: string,
  work: (request: Req, signal: AbortSignal) => Promise<Res>,
  maxImageBytes: number,
) {
  return (call: ServerDuplexStream<ChunkedRequest<Req>, ChunkedResponse<Res>>): void => {
    const signal = abortSignalFor(call as unknown as Parameters<typeof abortSignalFor>[0]);
    const record = startCallRecord(logger, method, call.metadata.get("traceparent")[0]?.toString());
    const assembly = new ImageAssembly(maxImageBytes);
    let head: Req | undefined;
    let over = false;

    const fail = (error: unknown) => {
      if (over) return;
      over = true;
      call.emit("error", toGrpcStatus(record.failed(error)));
    };

    call.on("data", (message: ChunkedRequest<Req>) => {
      if (over) return;
      try {
        if (head === undefined) {
          if (message.request === undefined) throw new AtelierError("INVALID_INPUT", "Invalid chunked stream: the first message must carry the request.");
          head = message.request;
        } else if (message.request !== undefined) throw new AtelierError("INVALID_INPUT", "Invalid chunked stream: the request came twice.");
        assembly.add(message.imageChunk);
      } catch (error) {
        fail(error);
      }
    });
    call.on("error", () => {}); // a client gone mid-stream: the signal has stopped the work
    // Bound to the handler's context, so the work runs in the caller's priority (call-priority.ts).
    call.on(
      "end",
      AsyncResource.bind(() => {
        if (over) return;
        const run = async () => {
          if (head === undefined) throw new AtelierError("INVALID_INPUT", "Invalid chunked stream: no request came.");
          const request = withGatheredImage(head, assembly.finish());
          let last = { step: 0, totalSteps: 0 };
          const result = await withProgress(
            (step, totalSteps, stage) => {
              last = { step, totalSteps };
              if (!signal.aborted) call.write({ step, totalSteps, stage });
            },
            () => work(request, signal),
          );
          const messages = chunkedMessages(result, (response, imageChunk): ChunkedResponse<Res> => ({ ...last, stage: "", response, imageChunk }));
          if (!(await writeInTurn(call, messages, signal))) throw new AtelierError("CANCELLED", "The call was cancelled while its answer was sent.");
          over = true;
          record.succeeded();
          call.end();
        };
        run().catch(fail);
      }),
    );
  };
}
