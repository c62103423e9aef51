/**
 * A real gRPC GenerationService over a tiny Stable Diffusion export (random weights, real ONNX
 * graphs, real sampler) on a loopback port, for jobs tests that need steps: progress, SSE, cancel.
 * Point a test service at it with `ATELIER_GENERATION_WORKER`.
 */
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { generationServiceImplementation } from "../../workers/generation/generation-service.js";
import { tinyWorld, type TinyWorld } from "../generation/diffusion/tiny-export.js";

export const TINY_MODEL = "tiny-sd-jobs";

export interface TinyGenerationWorker {
  address: string;
  close(): Promise<void>;
}

export async function startTinyGenerationWorker(options: { depth?: number; channels?: number } = {}): Promise<TinyGenerationWorker> {
  const world: TinyWorld = tinyWorld();
  const entry = world.install(TINY_MODEL, { variant: "sd15", ...options });
  const binding = generationServiceImplementation(world.context, { entries: () => [entry] });
  const server = new Server();
  server.addService(binding.definition, binding.implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    address: `127.0.0.1:${port}`,
    close: async () => {
      server.forceShutdown();
      await world.dispose();
    },
  };
}
