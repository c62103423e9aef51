/**
 * `/readyz`'s `warm-up` entry: which default models are warm (loaded and run once), and which were
 * left cold and why. Never makes the process unready: a cold model is only a slower first call.
 */
import type { ReadinessCheck } from "./readiness.js";

/** What the worker's warm-up reports (workers/warm-up.ts); structural, so the router needs no worker code. */
export interface WarmUpReport {
  report(): { state: string; warm: string[]; skipped: { operation: string; reason: string }[] };
}

export function warmUpCheck(warmUp: WarmUpReport): ReadinessCheck {
  return {
    name: "warm-up",
    critical: false,
    run: async () => {
      const { state, warm, skipped } = warmUp.report();
      return { ok: true, detail: `${state}: ${warm.length} warm, ${skipped.length} left cold`, info: { state, warm, skipped } };
    },
  };
}
