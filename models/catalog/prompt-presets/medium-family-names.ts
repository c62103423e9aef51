/**
 * The kinds of picture a term may imply (photo, painting, ...): the style presets name the ones their
 * details may come from, and the prompt engine tags its terms with them (workers/prompt/medium-families.ts).
 */
export const MEDIUM_FAMILIES = ["photo", "render3d", "painting", "drawing", "anime", "pixel", "digital", "sculpture", "print", "realism"] as const;
export type MediumFamily = (typeof MEDIUM_FAMILIES)[number];
