/**
 * gRPC GenerationService: validates the request, picks the model (models/requests/generation-model-choice.ts), asks the
 * registry for its generator, runs it inside the worker's work queue and encodes the image.
 * GenerateStream runs the same work, writing one progress message per step and then the result;
 * cancelling either call aborts the signal the generator checks between steps.
 */
import type { ServerWritableStream } from "@grpc/grpc-js";
import { asAtelierError, AtelierError } from "../../core/errors.js";
import { toGrpcStatus } from "../../transport/grpc-errors.js";
import {
  GenerationServiceService,
  type GenerateRequest,
  type GenerateResponse,
  type GenerateStreamRequest,
  type GenerateStreamResponse,
} from "../../gen/atelier/generation/v1/generation_service.js";
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";
import { entriesForTask } from "../../models/catalog/model-catalog.js";
import { abortSignalFor, unaryHandler } from "../grpc-handler.js";
import { reportProgress } from "../work-progress.js";
import { encodeImage } from "../image/encode-image.js";
import { assertOutputSize } from "../../core/image-limits.js";
import { rawImagePipeline } from "../image/raw-image.js";
import type { WorkerContext } from "../worker-context.js";
import { assertValidRequest, GENERATION_SIZE_HINT, generationParams } from "../../models/requests/generation-request.js";
import { defaultGeneratorRegistry, type GeneratorRegistry } from "./generator-registry.js";
import type { ImageGenerator } from "./image-generator.js";
import { chooseGenerationModel, type ModelChoiceContext, type ModelChoiceOptions } from "../../models/requests/generation-model-choice.js";

/** The stage generation reports its steps under. */
const DENOISING = "denoising";

export interface GenerationServiceOptions {
  /** Model families this worker runs; default: every family of this version. */
  registry?: GeneratorRegistry;
  /** Generation models to choose from, in preference order; default: the catalog's. */
  entries?: () => readonly CatalogEntry[];
}

/** Progress callback: `step` of `totalSteps` finished. */
export type StepListener = (step: number, totalSteps: number) => void;

export interface GenerationService {
  generate(request: GenerateRequest, signal: AbortSignal, onStep?: StepListener): Promise<GenerateResponse>;
  /** The model a request with this `model` field would use (see models/requests/generation-model-choice.ts). */
  chooseModel(requested: string, options?: ModelChoiceOptions): CatalogEntry;
}

export function createGenerationService(context: WorkerContext, options: GenerationServiceOptions = {}): GenerationService {
  const registry = options.registry ?? defaultGeneratorRegistry();
  const entries = options.entries ?? (() => entriesForTask("generate"));
  const generators = new Map<string, ImageGenerator>();
  const choice = (): ModelChoiceContext => ({ entries: entries(), models: context.models, registry });

  const generatorFor = (entry: CatalogEntry): ImageGenerator => {
    let generator = generators.get(entry.id);
    if (!generator) {
      const registration = registry.registrationFor(entry);
      if (!registration) throw new AtelierError("INTERNAL", `No generator is registered for the model "${entry.id}".`);
      generator = registration.create(entry, context);
      generators.set(entry.id, generator);
    }
    return generator;
  };

  return {
    chooseModel: (requested, choiceOptions) => chooseGenerationModel(requested, choice(), choiceOptions),

    async generate(request, signal, onStep = () => undefined) {
      assertValidRequest(request);
      const entry = chooseGenerationModel(request.model, choice());
      const params = generationParams(request, entry, entries());
      assertOutputSize(params.width, params.height, context.limits, GENERATION_SIZE_HINT);
      const generator = generatorFor(entry);
      const result = await context.queue.run(() => generator.generate(params, onStep, signal), signal);
      const { image } = result;
      if (image.width !== params.width || image.height !== params.height) {
        throw new AtelierError(
          "INTERNAL",
          `The generator of "${entry.id}" drew ${image.width}x${image.height} instead of the requested ${params.width}x${params.height}.`,
        );
      }
      const encoded = await encodeImage(rawImagePipeline(image), request.outputFormat);
      return { image: encoded, model: entry.id, seed: params.seed, steps: result.steps, interpretation: result.interpretation ?? "" };
    },
  };
}

/** GenerateStream: progress per step, then one message with the result; failures end the stream with a status. */
function streamHandler(service: GenerationService, context: WorkerContext) {
  return (call: ServerWritableStream<GenerateStreamRequest, GenerateStreamResponse>): void => {
    const signal = abortSignalFor(call);
    const started = performance.now();
    const work = async () => {
      const request = call.request.request;
      if (!request) {
        throw new AtelierError("INVALID_INPUT", "The stream request carries no generation request.", {
          issues: [{ path: "request", message: "Required." }],
        });
      }
      return service.generate(request, signal, (step, totalSteps) => {
        if (!signal.aborted) call.write({ step, totalSteps, stage: DENOISING });
      });
    };
    work().then(
      (result) => {
        context.logger.debug({ method: "GenerateStream", ms: Math.round(performance.now() - started) }, "call done");
        call.write({ step: result.steps, totalSteps: result.steps, stage: "", result });
        call.end();
      },
      (error: unknown) => {
        const failure = asAtelierError(error);
        if (failure.code === "INTERNAL") context.logger.error({ method: "GenerateStream", err: error }, "call failed");
        else context.logger.info({ method: "GenerateStream", code: failure.code }, "call refused");
        call.emit("error", toGrpcStatus(failure));
      },
    );
  };
}

export function generationServiceImplementation(context: WorkerContext, options: GenerationServiceOptions = {}) {
  const service = createGenerationService(context, options);
  return {
    definition: GenerationServiceService,
    implementation: {
      // Steps are reported to a progress scope, for the router in this process (local-calls.ts); a no-op for RPCs.
      generate: unaryHandler<GenerateRequest, GenerateResponse>(context.logger, "Generate", (request, signal) =>
        service.generate(request, signal, (step, totalSteps) => reportProgress(step, totalSteps, DENOISING)),
      ),
      generateStream: streamHandler(service, context),
    },
  };
}
