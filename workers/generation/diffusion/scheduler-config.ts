/**
 * The training noise schedule and sampling conventions of a model, read from the export's
 * `scheduler/scheduler_config.json` (diffusers' format). Only the fields the samplers here use are
 * read; the algorithm itself (Euler, DPM-Solver++, …) is chosen per request, as diffusers does when
 * a pipeline's scheduler is swapped with `from_config`.
 */

export type BetaSchedule = "linear" | "scaled_linear";
export type PredictionType = "epsilon" | "v_prediction" | "sample";
export type TimestepSpacing = "leading" | "trailing" | "linspace";

export interface ScheduleConfig {
  /** Training steps, default 1000. */
  numTrainTimesteps: number;
  /** First beta, default 0.00085 (every SD 1.x / 2.x model). */
  betaStart: number;
  /** Last beta, default 0.012. */
  betaEnd: number;
  /** default `scaled_linear`: betas evenly spaced in square root, then squared. */
  betaSchedule: BetaSchedule;
  /** What the UNet predicts: `epsilon` (SD 1.x, 2.x base, Turbo) or `v_prediction` (SD 2.x 768). */
  predictionType: PredictionType;
  /** How inference timesteps are picked; absent from the file: each sampler's diffusers default. */
  timestepSpacing?: TimestepSpacing;
  /** Added to `leading` timesteps; SD 1.x / 2.x configs say 1. Default 0. */
  stepsOffset: number;
  /** LCM: the distilled schedule's length (default 50). */
  originalInferenceSteps: number;
  /** LCM: multiplier of the timestep in the boundary conditions (default 10). */
  timestepScaling: number;
}

export const DEFAULT_SCHEDULE: ScheduleConfig = {
  numTrainTimesteps: 1000,
  betaStart: 0.00085,
  betaEnd: 0.012,
  betaSchedule: "scaled_linear",
  predictionType: "epsilon",
  stepsOffset: 0,
  originalInferenceSteps: 50,
  timestepScaling: 10,
};

function bad(field: string, expected: string, value: unknown): Error {
  return new Error(`scheduler_config.json: expected ${expected} for ${field} but received ${JSON.stringify(value)}`);
}

function numberField(config: Record<string, unknown>, field: string, fallback: number, check: (value: number) => boolean, expected: string): number {
  const value = config[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !check(value)) throw bad(field, expected, value);
  return value;
}

function choiceField<T extends string>(config: Record<string, unknown>, field: string, choices: readonly T[]): T | undefined {
  const value = config[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !(choices as readonly string[]).includes(value)) throw bad(field, `one of ${choices.join(", ")}`, value);
  return value as T;
}

/** Reads a parsed `scheduler_config.json`; missing fields take diffusers' defaults. Throws on values it cannot honour. */
export function parseScheduleConfig(json: unknown): ScheduleConfig {
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new Error("scheduler_config.json is not a JSON object");
  const config = json as Record<string, unknown>;
  const positive = (v: number) => v > 0 && Number.isFinite(v);
  const schedule: ScheduleConfig = {
    numTrainTimesteps: numberField(config, "num_train_timesteps", DEFAULT_SCHEDULE.numTrainTimesteps, (v) => Number.isInteger(v) && v >= 2, "an integer of at least 2"),
    betaStart: numberField(config, "beta_start", DEFAULT_SCHEDULE.betaStart, positive, "a positive number"),
    betaEnd: numberField(config, "beta_end", DEFAULT_SCHEDULE.betaEnd, (v) => positive(v) && v < 1, "a number between 0 and 1"),
    betaSchedule: choiceField(config, "beta_schedule", ["linear", "scaled_linear"] as const) ?? DEFAULT_SCHEDULE.betaSchedule,
    predictionType: choiceField(config, "prediction_type", ["epsilon", "v_prediction", "sample"] as const) ?? DEFAULT_SCHEDULE.predictionType,
    stepsOffset: numberField(config, "steps_offset", DEFAULT_SCHEDULE.stepsOffset, (v) => Number.isInteger(v) && v >= 0, "a non-negative integer"),
    originalInferenceSteps: numberField(config, "original_inference_steps", DEFAULT_SCHEDULE.originalInferenceSteps, (v) => Number.isInteger(v) && v >= 1, "a positive integer"),
    timestepScaling: numberField(config, "timestep_scaling", DEFAULT_SCHEDULE.timestepScaling, positive, "a positive number"),
  };
  const spacing = choiceField(config, "timestep_spacing", ["leading", "trailing", "linspace"] as const);
  if (spacing !== undefined) schedule.timestepSpacing = spacing;
  if (config.rescale_betas_zero_snr === true) throw bad("rescale_betas_zero_snr", "false (zero-SNR schedules are not supported)", true);
  return schedule;
}
