/**
 * Negative-prompt vocabulary: what to steer away from. The general terms come from
 * CLIP Interrogator's `negative.txt` when installed, else from the project's own list below; each
 * term is sorted into a group so that only sensible ones are used: anatomy terms only for subjects
 * with bodies (hands and faces only for people), a few terms per group, medium terms only when they do not name the chosen medium ("3d" never goes into the
 * negative prompt of a 3D render), and never a term that contradicts the positive prompt.
 */

export type NegativeGroup = "quality" | "artefact" | "anatomy" | "human" | "medium";

/** Most terms of each group a negative prompt takes (past a few, more of the same adds little). */
export const NEGATIVE_GROUP_LIMITS: Readonly<Record<NegativeGroup, number>> = { quality: 5, artefact: 4, anatomy: 4, human: 3, medium: 4 };

/** The project's own general negative terms (used with or without negative.txt). */
export const BASE_NEGATIVE: readonly { term: string; group: NegativeGroup }[] = [
  { term: "blurry", group: "quality" },
  { term: "low quality", group: "quality" },
  { term: "low-res", group: "quality" },
  { term: "jpeg artifacts", group: "artefact" },
  { term: "watermark", group: "artefact" },
  { term: "signature", group: "artefact" },
  { term: "text", group: "artefact" },
  { term: "out of focus", group: "quality" },
  { term: "oversaturated", group: "quality" },
  { term: "bad anatomy", group: "anatomy" },
  { term: "deformed", group: "anatomy" },
  { term: "extra limbs", group: "anatomy" },
  { term: "malformed hands", group: "human" },
  { term: "poorly drawn face", group: "human" },
];

/** How each line of negative.txt is used; lines not listed are left out (see the comments). */
export const NEGATIVE_FILE_GROUPS: Readonly<Record<string, NegativeGroup>> = {
  "bad art": "quality",
  blur: "quality",
  blurry: "quality",
  "low quality": "quality",
  "low-res": "quality",
  noisy: "quality",
  "out of focus": "quality",
  "over saturation": "quality",
  oversaturated: "quality",
  "poorly drawn": "quality",
  ugly: "quality",
  "weird colors": "quality",
  "bad anatomy": "anatomy",
  deformed: "anatomy",
  "disconnected limbs": "anatomy",
  disfigured: "anatomy",
  "extra limb": "anatomy",
  "extra limbs": "anatomy",
  "floating limbs": "anatomy",
  "long body": "anatomy",
  "long neck": "human",
  "malformed hands": "human",
  mangled: "anatomy",
  "missing limb": "anatomy",
  mutated: "anatomy",
  mutation: "anatomy",
  "poorly drawn face": "human",
  "poorly drawn hands": "human",
  "3d": "medium",
  render: "medium",
  cartoon: "medium",
  illustration: "medium",
  childish: "medium",
  "b&w": "medium",
  grain: "medium",
  // Left out: "old" (would push away old people and things the user asked for), "close up"
  // (a framing choice, not a defect), "surreal", "kitsch" and "disgusting" (taste, not defects),
  // "mutilated" (gore vocabulary).
};

/** Medium-group terms and the families they name: dropped when that family is in use. */
export const MEDIUM_NEGATIVE_FAMILIES: Readonly<Record<string, readonly string[]>> = {
  "3d": ["render3d"],
  render: ["render3d"],
  cartoon: ["drawing", "anime", "digital", "print", "pixel"],
  illustration: ["drawing", "anime", "digital", "print", "pixel", "painting"],
  childish: ["drawing", "anime", "pixel"],
  "b&w": ["drawing", "print"],
  grain: ["photo"],
};
