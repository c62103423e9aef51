/** The two kinds of procedure: open (the model list) and metered (authenticated, counted). */
import { authenticate } from "../middleware/authenticate.js";
import { meterQuota } from "../middleware/meter-quota.js";
import { publicProcedure } from "../trpc.js";

export { publicProcedure };
export const meteredProcedure = publicProcedure.use(authenticate).use(meterQuota);
