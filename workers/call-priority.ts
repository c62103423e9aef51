/**
 * Every RPC a worker serves runs inside the work priority its caller sent
 * (transport/work-priority-metadata.ts), so what it queues waits in the queue as it would had the
 * router called the worker in its own process (work-queue.ts). The priority reaches work the handler
 * starts at once or after an await; work it starts later from a stream's event runs in the context
 * of whatever emitted that event, so a handler that does so binds its listener (chunked-image-handler.ts).
 */
import type { Metadata, UntypedHandleCall, UntypedServiceImplementation } from "@grpc/grpc-js";
import { inWorkPriority } from "../core/work-priority.js";
import { workPriorityOf } from "../transport/work-priority-metadata.js";

/** Any grpc-js handler: unary and client-streaming ones take a callback after the call. */
type Handler = (call: { metadata: Metadata }, ...rest: unknown[]) => void;

/** `implementation` with each handler run inside its caller's priority. */
export function inCallersPriority(implementation: UntypedServiceImplementation): UntypedServiceImplementation {
  return Object.fromEntries(
    Object.entries(implementation).map(([name, handler]) => {
      const handle = handler as unknown as Handler;
      const prioritized: Handler = (call, ...rest) => inWorkPriority(workPriorityOf(call.metadata), () => handle(call, ...rest));
      return [name, prioritized as unknown as UntypedHandleCall];
    }),
  );
}
