/**
 * Mediums the engine may choose when the user gave no style and named no medium. They are lines
 * of `mediums.txt` (CLIP Interrogator), restricted by the project to plain, general-purpose
 * mediums: the list also holds novelties ("a jigsaw puzzle", "a cave painting", "a diagram") and
 * whole styles ("a cubist painting") that would change what the user asked for rather than render
 * it well. Which of these suits the subject is decided by the relevance index.
 */
export const DEFAULT_MEDIUMS: readonly string[] = [
  "a photo",
  "a digital painting",
  "a matte painting",
  "a detailed matte painting",
  "an oil painting",
  "a watercolor painting",
  "a 3D render",
  "digital art",
  "concept art",
  "a detailed painting",
  "a fine art painting",
  "a detailed drawing",
  "a pencil sketch",
  "a charcoal drawing",
  "an ink drawing",
  "an acrylic painting",
  "a storybook illustration",
  "an anime drawing",
  "a macro photograph",
  "a polaroid photo",
  "a digital rendering",
  "a color pencil sketch",
  "vector art",
];
