/**
 * Checks of an operation's request cheap enough to make before it is accepted as a job, by tRPC
 * path: each calls the checks the worker makes before any work, so a job that cannot succeed is
 * refused (facade/jobs-routes.ts) with the synchronous call's status and body rather than accepted
 * and failed a moment later. Each takes the input as the procedure's schema parsed it.
 */
import type { RequestContext } from "../context.js";
import { precheckBackgroundRemove, type BackgroundRemoveInput } from "./background-remove.js";
import { precheckGenerate, type GenerateInput } from "./generate.js";
import { precheckStyleTransfer, type StyleTransferInput } from "./style-transfer.js";
import { precheckUpscale, type UpscaleInput } from "./upscale.js";

export type Precheck = (input: unknown, ctx: RequestContext) => Promise<void>;

export const PRECHECKS: Readonly<Record<string, Precheck>> = {
  "tools.upscale": (input, ctx) => precheckUpscale(input as UpscaleInput, ctx),
  "tools.styleTransfer": (input, ctx) => precheckStyleTransfer(input as StyleTransferInput, ctx),
  "tools.backgroundRemove": (input, ctx) => precheckBackgroundRemove(input as BackgroundRemoveInput, ctx),
  generate: (input, ctx) => precheckGenerate(input as GenerateInput, ctx),
};
