/**
 * The operations a job can run: every metered POST operation of the list (contract/operations.ts),
 * found by its REST path, so a new POST operation can run as a job with no change here.
 */
import type { z } from "zod";
import { METERED_OPERATIONS, type MeteredOperationId } from "../contract/operations.js";
import { PRECHECKS, type Precheck } from "../server/procedures/prechecks.js";
import { rawImageHeaderNames } from "./raw-image.js";

export interface JobOperation {
  /** The operation's id in the list, e.g. `tools.upscale`. */
  id: MeteredOperationId;
  /** REST path without the `/api` prefix, e.g. `/v1/tools/upscale`. */
  restPath: string;
  /** The operation's own input schema: a job's body is validated exactly as the synchronous one. */
  input: z.ZodType;
  /** True when the result carries images (`data[].url`), so it has raw bytes to serve. */
  returnsImages: boolean;
  /** The `X-Atelier-*` headers of its raw image answer (`Accept: image/*`); none when it returns no images. */
  rawImageHeaders: readonly string[];
  /** The worker's checks made before the job is accepted, where the operation has any (server/procedures/prechecks.ts). */
  precheck?: Precheck;
}

export const JOB_OPERATIONS: ReadonlyMap<string, JobOperation> = new Map(
  METERED_OPERATIONS.filter((operation) => operation.method === "POST").map((operation) => {
    const precheck = PRECHECKS[operation.id];
    const job: JobOperation = {
      id: operation.id,
      restPath: operation.path,
      input: operation.input,
      returnsImages: operation.returnsImages,
      rawImageHeaders: operation.returnsImages ? rawImageHeaderNames(Object.keys(operation.output.shape)) : [],
      ...(precheck ? { precheck } : {}),
    };
    return [operation.path, job];
  }),
);
