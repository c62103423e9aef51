/**
 * Keys for the "say it once" rule: two terms repeat each other when they share a content word,
 * after folding word forms that say the same thing in a prompt ("lighting" and "light",
 * "detailed" and "details", "photograph" and "photo"). Stricter than equality on purpose: a prompt
 * with "soft light, dramatic lighting" or "highly detailed, intricate details" spends tokens
 * without telling the model anything new.
 */
import { contentKeys } from "./term-keys.js";

const SAME_IN_A_PROMPT: Readonly<Record<string, string>> = {
  lighting: "light",
  lit: "light",
  lightning: "lightning",
  glowing: "glow",
  detailed: "detail",
  colored: "color",
  colorful: "color",
  painted: "painting",
  paint: "painting",
  photograph: "photo",
  photographic: "photo",
  photography: "photo",
  photographer: "photo",
  rendered: "render",
  rendering: "render",
  illustrated: "illustration",
  drawn: "drawing",
  draw: "drawing",
  shadowy: "shadow",
  shaded: "shading",
  textured: "texture",
  composed: "composition",
  atmospheric: "atmosphere",
  cinematographic: "cinematic",
  cinema: "cinematic",
  hyperrealistic: "realistic",
  photorealistic: "realistic",
  ultrarealistic: "realistic",
  realism: "realistic",
  blurry: "blur",
  blurred: "blur",
  oversaturated: "saturation",
  saturated: "saturation",
  // Resolution claims: one is enough.
  "4k": "resolution",
  "8k": "resolution",
  "16k": "resolution",
  hd: "resolution",
  uhd: "resolution",
  hdr: "hdr",
  highres: "resolution",
};

export function dedupeKey(key: string): string {
  return SAME_IN_A_PROMPT[key] ?? key;
}

/** Folded content keys of a text ("close up", "close-up" and "closeup" are one key). */
export function dedupeKeys(text: string): string[] {
  return contentKeys(text.replace(/\bclose[\s-]?ups?\b/gi, "closeup")).map(dedupeKey);
}
