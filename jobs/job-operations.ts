/**
 * The operations a job can run: every POST procedure of the router, found by its REST path. They
 * are read from the router itself, so a new POST operation can run as a job with no change here.
 */
import type { z } from "zod";
import type { OpenApiMeta } from "trpc-to-openapi";
import { PRECHECKS, type Precheck } from "../server/procedures/prechecks.js";
import { appRouter } from "../server/router.js";
import { rawImageHeaderNames } from "./raw-image.js";

export interface JobOperation {
  /** REST path without the `/api` prefix, e.g. `/v1/tools/upscale`. */
  restPath: string;
  /** Dotted router path, e.g. `tools.upscale`. */
  procedurePath: string;
  /** The procedure's own input schema: a job's body is validated exactly as the synchronous one. */
  input: z.ZodType;
  /** True when the result carries images (`data[].url`), so it has raw bytes to serve. */
  returnsImages: boolean;
  /** The `X-Atelier-*` headers of its raw image answer (`Accept: image/*`); none when it returns no images. */
  rawImageHeaders: readonly string[];
  /** The worker's checks made before the job is accepted, where the operation has any (server/procedures/prechecks.ts). */
  precheck?: Precheck;
}

interface ProcedureInternals {
  _def: { type: string; meta?: OpenApiMeta; inputs: z.ZodType[]; output?: z.ZodType };
}

function fieldsOf(output: z.ZodType | undefined): string[] | undefined {
  const shape = (output as unknown as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape && Object.keys(shape);
}

function collectOperations(): Map<string, JobOperation> {
  const operations = new Map<string, JobOperation>();
  const procedures = (appRouter as unknown as { _def: { procedures: Record<string, ProcedureInternals> } })._def.procedures;
  for (const [procedurePath, procedure] of Object.entries(procedures)) {
    const openapi = procedure._def.meta?.openapi;
    const input = procedure._def.inputs[0];
    if (procedure._def.type !== "mutation" || openapi?.method !== "POST" || !input) continue;
    const fields = fieldsOf(procedure._def.output);
    const returnsImages = fields?.includes("data") === true;
    const precheck = PRECHECKS[procedurePath];
    operations.set(openapi.path, {
      restPath: openapi.path,
      procedurePath,
      input,
      returnsImages,
      rawImageHeaders: returnsImages ? rawImageHeaderNames(fields!) : [],
      ...(precheck ? { precheck } : {}),
    });
  }
  return operations;
}

export const JOB_OPERATIONS: ReadonlyMap<string, JobOperation> = collectOperations();
