/**
 * The application router. Internal TypeScript services import `AppRouter` (types only) and call
 * it over HTTP at `/trpc`; the REST facade transcodes the same procedures into `/api/v1`.
 */
import { backgroundRemoveProcedure } from "./procedures/background-remove.js";
import { generateProcedure } from "./procedures/generate.js";
import { listModelsProcedure } from "./procedures/list-models.js";
import { promptImproveProcedure } from "./procedures/prompt-improve.js";
import { styleTransferProcedure } from "./procedures/style-transfer.js";
import { upscaleProcedure } from "./procedures/upscale.js";
import { router } from "./trpc.js";

export const appRouter = router({
  generate: generateProcedure,
  tools: router({
    upscale: upscaleProcedure,
    styleTransfer: styleTransferProcedure,
    backgroundRemove: backgroundRemoveProcedure,
  }),
  prompt: router({
    improve: promptImproveProcedure,
  }),
  models: router({
    list: listModelsProcedure,
  }),
});

export type AppRouter = typeof appRouter;
