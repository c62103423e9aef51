/** The two kinds of procedure: open (the model list) and metered (authenticated, counted for usage, charged to the quota). */
import { authenticate } from "../middleware/authenticate.js";
import { meterQuota } from "../middleware/meter-quota.js";
import { recordUsage } from "../middleware/record-usage.js";
import { publicProcedure } from "../trpc.js";

export { publicProcedure };
export const meteredProcedure = publicProcedure.use(authenticate).use(recordUsage).use(meterQuota);
