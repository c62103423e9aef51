/**
 * A worker call's work priority (core/work-priority.ts) in its gRPC metadata, so a worker in another
 * process queues the router's background work behind calls as the worker in the router's process
 * does. Only the exact value `background` lowers a call; a missing header (any caller in another
 * language that knows nothing of it) or any other value is a normal call, so the header can lower
 * the caller's own call and never raise it.
 */
import type { Metadata } from "@grpc/grpc-js";
import type { WorkPriority } from "../core/work-priority.js";

export const WORK_PRIORITY_METADATA_KEY = "atelier-work-priority";

/** Puts `priority` on an outgoing call's metadata. */
export function setWorkPriority(metadata: Metadata, priority: WorkPriority): void {
  metadata.set(WORK_PRIORITY_METADATA_KEY, priority);
}

/** The priority an incoming call asked for: "background" only when it sent exactly that, once. */
export function workPriorityOf(metadata: Metadata): WorkPriority {
  const values = metadata.get(WORK_PRIORITY_METADATA_KEY);
  return values.length === 1 && values[0] === "background" ? "background" : "normal";
}
