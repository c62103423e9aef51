/**
 * How a request without `model` trades time for fidelity (the upscale request's `quality`): `fast`
 * runs the fast default network once, `balanced` (the default) takes a stronger way when its
 * predicted time fits the time budget, `max` the strongest way whatever the budget, within the
 * worker deadline (models/requests/upscale-choice.ts chooses). Here, not there, because the
 * router validates the field without loading worker code.
 */
export const UPSCALE_QUALITIES = ["fast", "balanced", "max"] as const;
export type UpscaleQuality = (typeof UPSCALE_QUALITIES)[number];
