import { configDefaults, defineConfig } from "vitest/config";
import { SkippedTestsFailCi } from "./test/support/skipped-tests-fail-ci.js";

/**
 * The unit lane (`npm run test:unit`): pure logic, no server, connection, child process, browser or
 * database server (test/support/unit-lane-guard.ts refuses them). A file joins it by being listed here;
 * a new test file lands in the service lane until it is listed.
 */
const unitTests = [
  "test/background/idle-memory.test.ts",
  "test/background/replacement-parsing.test.ts",
  "test/clients/cli-progress.test.ts",
  "test/console/schema-form.test.ts",
  "test/contract/catalog-docs.test.ts",
  "test/contract/client-operation-tables.test.ts",
  "test/contract/limits.test.ts",
  "test/contract/no-trpc-internals.test.ts",
  "test/core/config.test.ts",
  "test/docs/generated-docs.test.ts",
  "test/facade/uploaded-image.test.ts",
  "test/generation/diffusion/clip-tokenizer.test.ts",
  "test/generation/diffusion/diffusion-catalog.test.ts",
  "test/generation/diffusion/noise-schedule.test.ts",
  "test/generation/diffusion/samplers.test.ts",
  "test/generation/render-doodle.test.ts",
  "test/grpc/image-message-codec.test.ts",
  "test/image-source/address-policy.test.ts",
  "test/image/png-encoder.test.ts",
  "test/jobs/idempotency-fingerprint.test.ts",
  "test/keys/api-key-scopes.test.ts",
  "test/onnx/allocator-settings.test.ts",
  "test/onnx/image-tensor.test.ts",
  "test/prompt/builtin-engine.test.ts",
  "test/prompt/builtin-without-lists.test.ts",
  "test/prompt/clip-tokens.test.ts",
  "test/prompt/llm-output-cleaner.test.ts",
  "test/prompt/preset-tables.test.ts",
  "test/prompt/relevance-index.test.ts",
  "test/quota/store-config.test.ts",
  "test/style/style-steps.test.ts",
  "test/upscale/resample.test.ts",
  "test/upscale/self-ensemble.test.ts",
  "test/upscale/upscale-choice.test.ts",
];

/**
 * The e2e lane (`npm run test:e2e`): whole programs driven from outside, as a user would: Chromium
 * on the console, the published clients and CLIs, Python, the README's curl lines, the training
 * scripts, the scale-out topology. Everything else is the service lane (`npm run test:service`):
 * the service's parts on loopback ports, with the SQLite, PostgreSQL and Redis the tests start.
 */
const endToEndTests = [
  "test/**/*.browser.test.ts",
  "test/clients/**/*.test.ts",
  "test/readme/**/*.test.ts",
  "test/training/**/*.test.ts",
  "test/grpc/python-client.test.ts",
  "test/ops/scale-out.test.ts",
  "test/contract/prism-conformance.test.ts",
];

/**
 * Service-lane files that read what the whole process holds: prom-client's default registry (the
 * metrics), the process's resident memory, or the model loads and evictions that follow from it (the
 * runtime's memory budget counts the process's resident memory). Each runs in a process of its own;
 * the rest of the lane shares a module cache per worker, since a file there leaves nothing behind
 * that the next reads, and importing the service anew for every file was a sixth of the suite's time.
 */
const processWideTests = [
  "test/hostile/body-fuzz.test.ts",
  "test/hostile/console-jobs-fuzz.test.ts",
  "test/hostile/image-bombs.test.ts",
  "test/hostile/regression/finding-14-refund-cap.test.ts",
  "test/hostile/regression/security-04-06-trpc-batches.test.ts",
  "test/hostile/regression/security-13-metrics-listener.test.ts",
  "test/onnx/measured-budget.test.ts",
  "test/onnx/onnx-runtime.test.ts",
  "test/onnx/resident-memory.test.ts",
  "test/ops/metrics-tracing.test.ts",
  "test/ops/warm-up.test.ts",
  "test/rest/local-worker-calls.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most files spend their time waiting on what they start (a service, Chromium, Python, a
    // database server), so three files at a time keep two cores busy where one file at a time
    // (vitest's default here: one fewer than the cores) leaves them mostly idle.
    maxWorkers: 3,
    // Services the tests spawn keep the fast default upscale models (see test/support/test-service.ts).
    // and no warm-up: tests count loads and memory themselves (test/facade/warm-up.test.ts turns it on).
    env: { ATELIER_UPSCALE_TIME_BUDGET_MS: "0", ATELIER_WARM_UP: "false" },
    // In CI every model, photograph and program the tests need is installed, so a skip there is a failure.
    reporters: process.env.CI ? ["default", new SkippedTestsFailCi()] : ["default"],
    // `npm test` runs all three lanes in one run; `--project` picks one (the service lane is two projects).
    projects: [
      {
        extends: true,
        // Pure logic leaves no state behind, so one module cache per worker: far less importing.
        test: { name: "unit", include: unitTests, setupFiles: ["test/support/unit-lane-guard.ts"], isolate: false },
      },
      {
        extends: true,
        test: {
          name: "service",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...unitTests, ...endToEndTests, ...processWideTests],
          isolate: false,
        },
      },
      { extends: true, test: { name: "service-own-process", include: processWideTests } },
      { extends: true, test: { name: "e2e", include: endToEndTests, exclude: [...configDefaults.exclude, ...unitTests] } },
    ],
  },
});
