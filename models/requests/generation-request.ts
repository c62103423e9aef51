/**
 * A GenerateRequest checked and completed for one model: the prompt and tuning fields within their
 * documented bounds, width and height defaulted and bounded by the model record, and the seed
 * fixed (drawn at random when the caller gave none, so the response can always report it). Every
 * problem is reported at once, each as an issue on its field, in sharp's sentence shape.
 */
import { AtelierError, type FieldIssue } from "../../core/errors.js";
import type { GenerateRequest } from "../../gen/atelier/generation/v1/generation_service.js";
import { GENERATION_OPTIONS, type CatalogEntry, type GenerationOption } from "../catalog/catalog-types.js";
import { MAX_SEED, randomSeed } from "../../core/seeded-random.js";
import { LIMITS } from "../../core/limits.js";

const MAX_PROMPT_CHARACTERS = LIMITS.promptCharacters.max;
const MAX_STEPS = LIMITS.steps.max;
const MAX_GUIDANCE_SCALE = LIMITS.guidanceScale.max;
const MAX_SCHEDULER_CHARACTERS = LIMITS.schedulerCharacters.max;

function sizeIssue(field: "width" | "height", value: number, min: number, max: number, multiple: number): FieldIssue | undefined {
  if (Number.isInteger(value) && value >= min && value <= max && value % multiple === 0) return undefined;
  const kind = multiple > 1 ? `a multiple of ${multiple}` : "integer";
  return { path: field, message: `Expected ${kind} between ${min} and ${max} for ${field} but received ${value}.` };
}

/**
 * What to draw, already validated by the service. `width` and `height` are within the model's
 * bounds (`entry.generation`), `seed` is 0..2^32-1; optional fields are undefined when the caller
 * left them to the model's default.
 */
export interface GenerationParams { prompt: string; negativePrompt: string; width: number; height: number; steps?: number; guidanceScale?: number; seed: number; scheduler?: string; }

/** What to do about a result over the output limit. */
export const GENERATION_SIZE_HINT = "Ask for a smaller width and height.";

/** Fields that do not depend on the model: prompt, negative prompt, steps, guidance, scheduler. */
export function requestIssues(request: GenerateRequest): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const prompt = request.prompt.trim();
  if (prompt.length === 0 || request.prompt.length > MAX_PROMPT_CHARACTERS) {
    issues.push({ path: "prompt", message: `Expected 1 to ${MAX_PROMPT_CHARACTERS} characters for prompt but received ${request.prompt.length}.` });
  }
  if (request.negativePrompt.length > LIMITS.negativePromptCharacters.max) {
    issues.push({
      path: "negativePrompt",
      message: `Expected at most ${LIMITS.negativePromptCharacters.max} characters for negativePrompt but received ${request.negativePrompt.length}.`,
    });
  }
  if (!Number.isInteger(request.steps) || request.steps < 0 || request.steps > MAX_STEPS) {
    issues.push({ path: "steps", message: `Expected integer between 1 and ${MAX_STEPS} for steps but received ${request.steps}.` });
  }
  const guidance = request.guidanceScale;
  if (guidance !== undefined && !(guidance >= 0 && guidance <= MAX_GUIDANCE_SCALE)) {
    issues.push({ path: "guidanceScale", message: `Expected number between 0 and ${MAX_GUIDANCE_SCALE} for guidanceScale but received ${guidance}.` });
  }
  if (request.scheduler.length > MAX_SCHEDULER_CHARACTERS) {
    issues.push({ path: "scheduler", message: `Expected at most ${MAX_SCHEDULER_CHARACTERS} characters for scheduler.` });
  }
  const seed = request.seed;
  if (seed !== undefined && !(Number.isInteger(seed) && seed >= 0 && seed <= MAX_SEED)) {
    issues.push({ path: "seed", message: `Expected integer between 0 and ${MAX_SEED} for seed but received ${seed}.` });
  }
  return issues;
}

/** One INVALID_INPUT for all issues; its message leads with the first and counts the rest. */
export function invalidRequest(issues: FieldIssue[]): AtelierError {
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? "s" : ""}, listed in issues)` : "";
  return new AtelierError("INVALID_INPUT", `${issues[0]!.message}${more}`, { issues });
}

/** Throws INVALID_INPUT unless the model-independent fields are within bounds. */
export function assertValidRequest(request: GenerateRequest): void {
  const issues = requestIssues(request);
  if (issues.length > 0) throw invalidRequest(issues);
}

/** Whether the request gives this tuning field (the wire's zero values mean "not given"). */
function gives(request: GenerateRequest, option: GenerationOption): boolean {
  switch (option) {
    case "negativePrompt":
      return request.negativePrompt !== "";
    case "steps":
      return request.steps > 0;
    case "guidanceScale":
      return request.guidanceScale !== undefined;
    case "scheduler":
      return request.scheduler !== "";
  }
}

/**
 * The tuning fields the request gives that `entry` does not take, each an issue naming the models
 * that do: a field the model would silently ignore is refused instead.
 */
function unsupportedOptionIssues(request: GenerateRequest, entry: CatalogEntry, entries: readonly CatalogEntry[]): FieldIssue[] {
  const taken = entry.generation?.options ?? [];
  return GENERATION_OPTIONS.filter((option) => gives(request, option) && !taken.includes(option)).map((option) => {
    const takers = entries.filter((other) => other.generation?.options.includes(option)).map((other) => other.id);
    const alternative = takers.length > 0 ? ` Leave it out, or choose a model that takes it: ${takers.join(", ")}.` : " Leave it out.";
    return { path: option, message: `The model "${entry.id}" does not take ${option}.${alternative}` };
  });
}

/**
 * The parameters a generator receives for `entry`: 0 for width or height takes the model's default;
 * sizes outside the model's bounds, and tuning fields the model does not take, throw INVALID_INPUT
 * naming the allowed range, or the models (of `entries`) that take the field.
 */
export function generationParams(request: GenerateRequest, entry: CatalogEntry, entries: readonly CatalogEntry[]): GenerationParams {
  const bounds = entry.generation;
  if (!bounds) throw new AtelierError("INTERNAL", `The generation model "${entry.id}" has no size bounds in its catalog record.`);
  const unsupported = unsupportedOptionIssues(request, entry, entries);
  if (unsupported.length > 0) throw invalidRequest(unsupported);
  const width = request.width === 0 ? bounds.defaultWidth : request.width;
  const height = request.height === 0 ? bounds.defaultHeight : request.height;
  const issues = [
    sizeIssue("width", width, bounds.minSize, bounds.maxWidth, bounds.sizeMultiple),
    sizeIssue("height", height, bounds.minSize, bounds.maxHeight, bounds.sizeMultiple),
  ].filter((issue): issue is FieldIssue => issue !== undefined);
  if (issues.length > 0) {
    const withModel = issues.map((issue) => ({ ...issue, message: `${issue.message.slice(0, -1)} (limits of the model "${entry.id}").` }));
    throw invalidRequest(withModel);
  }
  return {
    prompt: request.prompt,
    negativePrompt: request.negativePrompt,
    width,
    height,
    ...(request.steps > 0 ? { steps: request.steps } : {}),
    ...(request.guidanceScale !== undefined ? { guidanceScale: request.guidanceScale } : {}),
    seed: request.seed ?? randomSeed(),
    ...(request.scheduler !== "" ? { scheduler: request.scheduler } : {}),
  };
}
