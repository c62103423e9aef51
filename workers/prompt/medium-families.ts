/**
 * Medium families: which kind of picture a term implies. A watercolour prompt must not gain
 * "octane render" or "85mm lens", and a photograph must not gain "visible brush strokes", so every
 * candidate term is tagged with the families its words imply and kept only when they are all
 * allowed by the chosen style or medium. Terms that imply no medium ("sharp focus", "golden hour")
 * suit every style.
 */
import { MEDIUM_FAMILIES, type MediumFamily } from "../../models/catalog/prompt-presets/medium-family-names.js";
import { normalizePhrase } from "./term-keys.js";

export { MEDIUM_FAMILIES, type MediumFamily };

/** Words (or two-word phrases) that imply a family. Matched on normalised phrases, whole words. */
const FAMILY_MARKERS: Record<MediumFamily, string[]> = {
  photo: [
    "photo", "photos", "photograph", "photographs", "photography", "photographic", "photographer", "photorealistic",
    "photorealism", "photoreal", "camera", "dslr", "lens", "bokeh", "polaroid", "kodak", "portra", "ektachrome", "fujifilm",
    "canon", "nikon", "leica", "hasselblad", "cinestill", "35mm", "50mm", "85mm", "24mm", "telephoto", "shutter", "exposure",
    "aperture", "f1", "f2", "f1.8", "film grain", "film still", "movie still", "cinematography", "depth of field", "headshot", "selfie",
  ],
  render3d: [
    "render", "renders", "rendering", "rendered", "octane", "unreal", "blender", "cgi", "3d", "c4d", "cinema4d", "vray",
    "redshift", "raytracing", "ray tracing", "raytraced", "zbrush", "houdini", "keyshot", "substance", "maya", "polygon", "polygons",
    "subsurface scattering", "ambient occlusion", "physically based", "pbr", "voxel", "low poly", "low-poly",
  ],
  painting: [
    "painting", "paintings", "painted", "painterly", "oil", "oils", "acrylic", "gouache", "canvas", "brushstroke", "brushstrokes",
    "brush stroke", "brush strokes", "brushwork", "impasto", "watercolor", "watercolors", "fresco", "tempera", "palette knife", "plein air",
  ],
  drawing: [
    "drawing", "drawings", "drawn", "sketch", "sketches", "sketchy", "pencil", "charcoal", "ink", "inked", "lineart", "line art",
    "graphite", "crosshatching", "cross-hatching", "hatching", "pen", "etching", "engraving", "linework", "doodle", "crayon", "pastel",
  ],
  anime: ["anime", "manga", "cel shaded", "cel shading", "cel-shaded", "chibi", "waifu", "shoujo", "shonen", "pixiv", "visual novel"],
  pixel: ["pixel", "pixels", "pixelated", "pixel art", "8bit", "16bit", "sprite", "dithering"],
  digital: ["digital", "artstation", "cgsociety", "deviantart", "concept art", "matte painting", "digital art", "vector"],
  sculpture: ["sculpture", "sculpted", "statue", "marble", "bronze statue", "clay", "plasticine", "claymation", "figurine"],
  print: ["woodblock", "woodcut", "linocut", "screenprint", "screen print", "silkscreen", "lithograph", "risograph", "halftone", "ukiyo-e", "print"],
  /** Not a medium: realism, which drawings, anime and pixel art do not want. */
  realism: ["realistic", "realism", "hyperrealistic", "hyperrealism", "hyper realistic", "ultra realistic", "ultrarealistic", "lifelike", "true to life"],
};

const MARKERS: Map<string, MediumFamily> = new Map();
for (const family of MEDIUM_FAMILIES) for (const marker of FAMILY_MARKERS[family]) MARKERS.set(marker, family);

/** Families implied by a phrase (empty for a neutral phrase). */
export function familiesOf(phrase: string): Set<MediumFamily> {
  const tokens = normalizePhrase(phrase).split(" ");
  const found = new Set<MediumFamily>();
  for (let i = 0; i < tokens.length; i++) {
    const one = MARKERS.get(tokens[i]!);
    if (one) found.add(one);
    if (i + 1 < tokens.length) {
      const two = MARKERS.get(`${tokens[i]} ${tokens[i + 1]}`);
      if (two) found.add(two);
    }
  }
  return found;
}

/** True when every family the phrase implies is allowed (`undefined` allows everything). */
export function fitsFamilies(phrase: string, allowed: ReadonlySet<MediumFamily> | undefined): boolean {
  if (!allowed) return true;
  for (const family of familiesOf(phrase)) if (!allowed.has(family)) return false;
  return true;
}
