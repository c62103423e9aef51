/**
 * The generation service with fake model families: which model answers, size bounds from the model
 * record, seeds, validation, and the 503 that names what to install. No model weights needed.
 */
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { AtelierError } from "../../core/errors.js";
import { createLogger } from "../../core/logger.js";
import { GenerateRequest } from "../../gen/atelier/generation/v1/generation_service.js";
import { GENERATION_OPTIONS, type CatalogEntry } from "../../models/catalog/catalog-types.js";
import { catalogEntry, entriesForTask } from "../../models/catalog/model-catalog.js";
import { createGenerationService, type GenerationServiceOptions } from "../../workers/generation/generation-service.js";
import { DIFFUSION_GENERATOR, DOODLE_GENERATOR, GeneratorRegistry, defaultGeneratorRegistry, isStableDiffusion } from "../../workers/generation/generator-registry.js";
import { MAX_SEED } from "../../core/seeded-random.js";
import type { WorkerContext } from "../../workers/worker-context.js";
import { createWorkerContext } from "../../workers/worker-server.js";
import { fileTempDir } from "../support/temp-dir.js";
import { fakeDiffusionEntry, fakeFamily } from "./fake-generators.js";

// Workers keep nothing in their data folder, so every context here shares one.
const dataDir = fileTempDir("generation");
const contexts: WorkerContext[] = [];

function workerContext(env: Record<string, string> = {}): WorkerContext {
  const context = createWorkerContext(loadConfig({ ATELIER_DATA_DIR: dataDir, LOG_LEVEL: "silent", ...env }), createLogger("silent"));
  contexts.push(context);
  return context;
}

afterAll(async () => {
  await Promise.all(contexts.map((context) => context.runtime.dispose()));
});

/** A non-photographic fake (like the doodle model) that is always installed. */
function fakeDoodleEntry(): CatalogEntry {
  return {
    ...fakeDiffusionEntry("test-doodle"),
    photographic: false,
    details: { family: "test-doodle" },
    generation: { defaultWidth: 40, defaultHeight: 40, minSize: 28, maxWidth: 100, maxHeight: 100, sizeMultiple: 1, options: [] },
  };
}

function serviceWith(entries: CatalogEntry[], env: Record<string, string> = {}) {
  const diffusion = fakeFamily({ totalSteps: 3, stepMs: 1 });
  const doodle = fakeFamily({ totalSteps: 1, stepMs: 1, family: "fake-doodle" });
  const registry = new GeneratorRegistry()
    .register(diffusion.registration)
    .register({ ...doodle.registration, matches: (entry) => entry.id === "test-doodle" });
  const options: GenerationServiceOptions = { registry, entries: () => entries };
  return { service: createGenerationService(workerContext(env), options), diffusion, doodle };
}

const request = (fields: Partial<GenerateRequest>) => GenerateRequest.fromPartial({ prompt: "an owl", ...fields });
const signal = new AbortController().signal;

async function failure(promise: Promise<unknown>): Promise<AtelierError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AtelierError);
  return error as AtelierError;
}

describe("the generator registry", () => {
  it("sends cvae-quickdraw to the doodle generator and Stable Diffusion records to the diffusion family", () => {
    const cvae = catalogEntry("cvae-quickdraw")!;
    const diffusion = fakeDiffusionEntry();
    expect(isStableDiffusion(diffusion)).toBe(true);
    expect(isStableDiffusion(cvae)).toBe(false);
    const registry = defaultGeneratorRegistry();
    expect(registry.registrationFor(cvae)).toBe(DOODLE_GENERATOR);
    expect(registry.registrationFor(diffusion)).toBe(DIFFUSION_GENERATOR);
    expect(registry.supports({ ...diffusion, details: { family: "something-else" } })).toBe(false);
    // The first registration that matches wins, so a test family can stand in for a real one.
    const fake = fakeFamily();
    const faked = new GeneratorRegistry().register(fake.registration).register(DIFFUSION_GENERATOR);
    expect(faked.registrationFor(diffusion)).toBe(fake.registration);
  });

  it("is what the service uses: a request for a diffusion entry runs its registered generator", async () => {
    const { service, diffusion } = serviceWith([fakeDoodleEntry(), fakeDiffusionEntry()]);
    const response = await service.generate(request({ model: "test-diffusion" }), signal);
    expect(response).toMatchObject({ model: "test-diffusion", steps: 3, interpretation: "fake: an owl" });
    expect(diffusion.runs).toHaveLength(1);
  });
});

describe("choosing the model", () => {
  it("prefers an installed photographic model over the doodle model", async () => {
    const { service, diffusion, doodle } = serviceWith([fakeDoodleEntry(), fakeDiffusionEntry()]);
    expect((await service.generate(request({}), signal)).model).toBe("test-diffusion");
    expect(diffusion.runs).toHaveLength(1);
    expect(doodle.runs).toHaveLength(0);
  });

  it("falls back to the doodle model when no photographic model is installed", async () => {
    const { service } = serviceWith([fakeDoodleEntry()]);
    expect((await service.generate(request({}), signal)).model).toBe("test-doodle");
  });

  it("never gives a caller that needs a photograph (background replacement) the doodle model", () => {
    const { service } = serviceWith([fakeDoodleEntry()]);
    expect(service.chooseModel("").id).toBe("test-doodle");
    const refused = (() => {
      try {
        service.chooseModel("", { photographicOnly: true });
      } catch (error) {
        return error as AtelierError;
      }
      throw new Error("expected a refusal");
    })();
    expect(refused.code).toBe("MODEL_NOT_INSTALLED");
    expect(refused.message).toMatch(/photographic/);
    expect(() => service.chooseModel("test-doodle", { photographicOnly: true })).toThrow(/Unknown generation model/);
    const both = serviceWith([fakeDoodleEntry(), fakeDiffusionEntry()]);
    expect(both.service.chooseModel("", { photographicOnly: true }).id).toBe("test-diffusion");
  });

  it("answers 400 listing the generation models for an unknown model", async () => {
    const { service } = serviceWith([fakeDoodleEntry(), fakeDiffusionEntry()]);
    const error = await failure(service.generate(request({ model: "upscale-lanczos" }), signal));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toMatch(/test-doodle, test-diffusion/);
    expect(error.issues?.[0]?.path).toBe("model");
  });
});

describe("with no generation model installed", () => {
  const context = () => ({ entries: () => entriesForTask("generate") });

  it("answers 503 naming the command that installs the doodle model", async () => {
    const service = createGenerationService(workerContext(), context());
    const error = await failure(service.generate(request({ prompt: "a cat" }), signal));
    expect(error.code).toBe("MODEL_NOT_INSTALLED");
    expect(error.httpStatus).toBe(503);
    expect(error.retryAfterSeconds).toBe(3600);
    expect(error.message).toMatch(/text-to-image/);
    expect(error.message).toContain("`npm run models -- pull cvae-quickdraw`");
    expect(error.message).toMatch(/Stable Diffusion/);
  });

  it("answers 503 naming the command for a model asked for by id", async () => {
    const service = createGenerationService(workerContext(), context());
    const error = await failure(service.generate(request({ model: "cvae-quickdraw" }), signal));
    expect(error.code).toBe("MODEL_NOT_INSTALLED");
    expect(error.message).toContain("npm run models -- pull cvae-quickdraw");
  });
});

describe("sizes", () => {
  it("defaults width and height from the model record", async () => {
    const { service } = serviceWith([fakeDiffusionEntry()]);
    const response = await service.generate(request({}), signal);
    expect(response.image).toMatchObject({ width: 64, height: 48, mimeType: "image/png" });
  });

  it.each([
    [{ width: 100 }, "width", "Expected a multiple of 8 between 32 and 256 for width but received 100"],
    [{ width: 24 }, "width", "Expected a multiple of 8 between 32 and 256 for width but received 24"],
    [{ height: 264 }, "height", "Expected a multiple of 8 between 32 and 256 for height but received 264"],
  ])("refuses %j on a diffusion model with the allowed range", async (size, field, message) => {
    const { service } = serviceWith([fakeDiffusionEntry()]);
    const error = await failure(service.generate(request(size), signal));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain(message);
    expect(error.message).toContain('model "test-diffusion"');
    expect(error.issues).toEqual([{ path: field, message: expect.stringContaining(message) }]);
  });

  it("reports both sizes at once and accepts any integer within a doodle model's range", async () => {
    const { service } = serviceWith([fakeDoodleEntry()]);
    const error = await failure(service.generate(request({ width: 27, height: 101 }), signal));
    expect(error.issues?.map((issue) => issue.path)).toEqual(["width", "height"]);
    expect(error.message).toContain("Expected integer between 28 and 100 for width but received 27");
    const response = await service.generate(request({ width: 99, height: 28 }), signal);
    expect(response.image).toMatchObject({ width: 99, height: 28 });
  });

  it("answers OUTPUT_TOO_LARGE over the server's pixel limit", async () => {
    const { service } = serviceWith([fakeDiffusionEntry()], { ATELIER_MAX_OUTPUT_PIXELS: "4096" });
    const error = await failure(service.generate(request({ width: 128, height: 128 }), signal));
    expect(error.code).toBe("OUTPUT_TOO_LARGE");
  });
});

describe("seeds and parameters", () => {
  it("echoes the seed given, and reports the one drawn when none is", async () => {
    const { service, diffusion } = serviceWith([fakeDiffusionEntry()]);
    expect((await service.generate(request({ seed: 0 }), signal)).seed).toBe(0);
    expect((await service.generate(request({ seed: MAX_SEED }), signal)).seed).toBe(MAX_SEED);
    const drawn = await service.generate(request({}), signal);
    expect(Number.isInteger(drawn.seed) && drawn.seed >= 0 && drawn.seed <= MAX_SEED).toBe(true);
    expect(diffusion.runs[2]?.params.seed).toBe(drawn.seed);
  });

  it("passes tuning fields through, leaving unset ones to the model", async () => {
    const { service, diffusion } = serviceWith([fakeDiffusionEntry()]);
    await service.generate(request({ negativePrompt: "blurry", steps: 2, guidanceScale: 7.5, scheduler: "euler", seed: 5 }), signal);
    await service.generate(request({ seed: 5 }), signal);
    expect(diffusion.runs[0]?.params).toEqual({
      prompt: "an owl",
      negativePrompt: "blurry",
      width: 64,
      height: 48,
      steps: 2,
      guidanceScale: 7.5,
      scheduler: "euler",
      seed: 5,
    });
    expect(diffusion.runs[1]?.params).toEqual({ prompt: "an owl", negativePrompt: "", width: 64, height: 48, seed: 5 });
  });

  it("refuses tuning fields a model does not take, naming the models that take each, rather than ignoring them", async () => {
    const { service, doodle } = serviceWith([fakeDiffusionEntry(), fakeDoodleEntry()]);
    const error = await failure(service.generate(request({ model: "test-doodle", steps: 30, guidanceScale: 2, seed: 5 }), signal));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.issues).toEqual([
      { path: "steps", message: 'The model "test-doodle" does not take steps. Leave it out, or choose a model that takes it: test-diffusion.' },
      { path: "guidanceScale", message: 'The model "test-doodle" does not take guidanceScale. Leave it out, or choose a model that takes it: test-diffusion.' },
    ]);
    expect(doodle.runs).toHaveLength(0);
    await service.generate(request({ model: "test-doodle", seed: 5 }), signal);
    expect(doodle.runs).toHaveLength(1);
  });

  it.each([
    [{ prompt: "" }, "prompt"],
    [{ prompt: "   " }, "prompt"],
    [{ prompt: "x".repeat(2001) }, "prompt"],
    [{ negativePrompt: "x".repeat(2001) }, "negativePrompt"],
    [{ steps: 101 }, "steps"],
    [{ guidanceScale: 31 }, "guidanceScale"],
    [{ scheduler: "s".repeat(41) }, "scheduler"],
  ])("refuses %j before choosing a model", async (fields, field) => {
    const service = createGenerationService(workerContext(), { entries: () => entriesForTask("generate") });
    const error = await failure(service.generate(request(fields), signal));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.issues?.[0]?.path).toBe(field);
  });
});
