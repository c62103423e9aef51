/** Stable Diffusion ONNX exports (SD 1.x / 2.x, Turbo, LCM) on the worker's model runtime. */
export { createDiffusionGenerator, type DiffusionGenerator } from "./diffusion-generator.js";
export { runDiffusion, checkRequest, LATENT_FACTOR, type DiffusionModel, type DiffusionRequest, type DiffusionResult } from "./diffusion-pipeline.js";
export { adaptPinnedModel, runtimeFeedTypes, runtimeGraph, toDeclaredType, type DiffusionGraph, type GraphHandle } from "./diffusion-graph.js";
export { diffusionSettings, FALLBACK_SETTINGS, MAX_GUIDANCE_SCALE, type DiffusionSettings } from "./diffusion-settings.js";
export { DEFAULT_VAE_SCALING_FACTOR, DIFFUSION_GRAPH_SOURCES, DIFFUSION_GRAPHS, EXPORT_FILES } from "./export-layout.js";
export { declaredValues, float32Facade, type DeclaredValue, type FacadeResult } from "./float32-facade.js";
export { classifierFreeGuidance, guidanceScaleEmbedding } from "./guidance.js";
export * from "./noise-schedule.js";
export { DEFAULT_SCHEDULE, parseScheduleConfig, type ScheduleConfig } from "./scheduler-config.js";
export { MAX_STEPS, SAMPLER_NAMES, SAMPLERS, samplerSpec, type SamplerSpec } from "./schedulers/sampler-registry.js";
export type { GaussianSource, Sampler } from "./schedulers/sampler.js";
export { UnetRunner, unetLayout, type UnetLayout } from "./unet.js";
