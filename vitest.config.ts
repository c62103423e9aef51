import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Services the tests spawn keep the fast default upscale models (see test/support/test-service.ts).
    env: { ATELIER_UPSCALE_TIME_BUDGET_MS: "0" },
  },
});
