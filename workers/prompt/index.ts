/** The prompt-improvement worker: what the rest of Atelier may use. */
export { promptServiceImplementation, createPromptEngines, improvePrompt } from "./prompt-service.js";
export type { PromptServiceOptions, PromptLlmOptions, PromptDependencies, PromptEngines } from "./prompt-service.js";
export { BuiltinPromptEngine, BUILTIN_MODEL_ID, MODIFIER_LISTS_MISSING_NOTE } from "./builtin-engine.js";
export type { ImproveRequest, ImproveResult, ImprovedVariant, BuiltinEngineStatus } from "./builtin-engine.js";
export { LlmPromptEngine, LLM_MODEL_PREFIX } from "./llm-engine.js";
export { STYLE_PRESETS } from "./style-presets.js";
export type { StylePreset } from "./style-presets.js";
export { MOOD_PRESETS } from "./mood-presets.js";
export type { MoodPreset } from "./mood-presets.js";
export { PROMPT_BUILTIN_DETAILS } from "./catalog-details.js";
