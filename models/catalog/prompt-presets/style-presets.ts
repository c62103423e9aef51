/**
 * The style presets: the project's own curated table (not taken from any model or list). Each
 * preset has the medium phrase that leads the prompt ("a watercolor painting of …"), positive terms
 * in order of importance, negative terms, and the medium families its details may come from.
 *
 * Terms use the spellings image-caption data uses most (American: "watercolor", "color"); the
 * matcher accepts either spelling from users. Clients see this table in the engine's `/models`
 * record (`STYLE_PRESETS` → the catalog entry's `details.styles`).
 */
import type { MediumFamily } from "./medium-family-names.js";

export interface StylePreset {
  /** Stable id clients may send as `style`. */
  id: string;
  name: string;
  /** Other names and spellings recognised (case, spaces, hyphens and British spellings do not matter). */
  aliases: string[];
  /** Medium phrase put before the user's prompt when it reads as a noun phrase ("a photograph of"). */
  lead: string;
  /** Positive terms, most important first. */
  terms: string[];
  /** Negative-prompt terms: what this style must not look like. */
  negative: string[];
  /** Medium families detail terms may imply (see medium-families.ts). */
  families: MediumFamily[];
}

export const STYLE_PRESETS: readonly StylePreset[] = [
  {
    id: "photographic",
    name: "Photographic",
    aliases: ["photo", "photograph", "photography", "photorealistic", "photoreal", "realistic", "realism", "dslr", "real", "hyperrealistic", "hyper realistic"],
    lead: "a photograph of",
    terms: ["professional photography", "natural lighting", "sharp focus", "high dynamic range", "fine detail"],
    negative: ["painting", "drawing", "illustration", "cartoon", "anime", "cgi", "3d render", "sketch"],
    families: ["photo", "realism"],
  },
  {
    id: "cinematic",
    name: "Cinematic",
    aliases: ["cinema", "film", "movie", "movie still", "film still", "cinematographic", "filmic", "hollywood", "blockbuster"],
    lead: "a cinematic film still of",
    terms: ["shallow depth of field", "anamorphic lens", "color graded", "dramatic composition", "widescreen", "subtle film grain"],
    negative: ["cartoon", "anime", "illustration", "painting", "drawing", "flat lighting", "amateur"],
    families: ["photo", "realism"],
  },
  {
    id: "anime",
    name: "Anime",
    aliases: ["manga", "anime style", "japanese animation", "cel shaded", "cel-shaded", "cel shading", "animation", "animated"],
    lead: "an anime illustration of",
    terms: ["cel shading", "clean line art", "vibrant colors", "anime key visual", "studio anime style"],
    negative: ["photorealistic", "photo", "3d render", "realistic", "western cartoon", "muddy colors"],
    families: ["anime", "drawing", "digital"],
  },
  {
    id: "digital-art",
    name: "Digital art",
    aliases: ["digital", "digital painting", "digital illustration", "illustration", "artstation", "cg art"],
    lead: "a digital painting of",
    terms: ["digital illustration", "trending on artstation", "smooth shading", "crisp details", "rich colors"],
    negative: ["photo", "photograph", "blurry", "low resolution", "amateur"],
    families: ["digital", "painting"],
  },
  {
    id: "oil-painting",
    name: "Oil painting",
    aliases: ["oil", "oils", "oil on canvas", "classical painting", "painting", "old masters", "old master"],
    lead: "an oil painting of",
    terms: ["visible brush strokes", "rich impasto texture", "canvas texture", "chiaroscuro", "classical composition"],
    negative: ["photo", "3d render", "digital art", "anime", "flat colors", "smooth plastic look"],
    families: ["painting", "realism"],
  },
  {
    id: "watercolour",
    name: "Watercolour",
    aliases: ["watercolor", "water colour", "water color", "aquarelle", "watercolours", "watercolors", "wash painting"],
    lead: "a watercolor painting of",
    terms: ["soft color washes", "wet-on-wet blooms", "textured paper", "delicate bleeding edges", "loose brushwork"],
    negative: ["photo", "3d render", "harsh outlines", "digital art", "oversaturated"],
    families: ["painting"],
  },
  {
    id: "pixel-art",
    name: "Pixel art",
    aliases: ["pixel", "pixels", "8-bit", "8bit", "16-bit", "16bit", "sprite", "sprite art", "retro game", "pixelated"],
    lead: "pixel art of",
    terms: ["16-bit", "limited palette", "crisp pixels", "retro video game", "dithering"],
    negative: ["blurry", "anti-aliasing", "photo", "3d render", "smooth gradients"],
    families: ["pixel"],
  },
  {
    id: "3d-render",
    name: "3D render",
    aliases: ["3d", "3-d", "3d model", "three dimensional", "three-dimensional", "cgi", "render", "blender", "octane", "unreal engine", "c4d"],
    lead: "a 3d render of",
    terms: ["octane render", "physically based materials", "subsurface scattering", "ray tracing", "studio quality"],
    negative: ["photo", "painting", "sketch", "flat", "2d", "low poly"],
    families: ["render3d", "digital", "realism"],
  },
  {
    id: "line-art",
    name: "Line art",
    aliases: ["line drawing", "lineart", "ink drawing", "outline", "contour drawing", "ink", "pen and ink", "line work", "linework"],
    lead: "a line art drawing of",
    terms: ["clean ink lines", "monochrome", "white background", "minimalist", "precise contours"],
    negative: ["color", "shading", "photo", "3d render", "gradient", "blurry"],
    families: ["drawing"],
  },
  {
    id: "comic",
    name: "Comic",
    aliases: ["comic book", "comics", "graphic novel", "comic art", "western comic", "superhero comic", "cartoon"],
    lead: "a comic book panel of",
    terms: ["bold ink outlines", "halftone shading", "flat vibrant colors", "dynamic composition", "graphic novel style"],
    negative: ["photo", "3d render", "realistic", "blurry", "muted colors"],
    families: ["drawing", "print", "digital"],
  },
  {
    id: "fantasy-art",
    name: "Fantasy art",
    aliases: ["fantasy", "high fantasy", "epic fantasy", "dnd", "d&d", "dungeons and dragons", "fantasy illustration", "magic"],
    lead: "a fantasy illustration of",
    terms: ["matte painting", "ornate", "enchanted", "concept art", "sweeping vista"],
    negative: ["photo", "modern", "mundane", "low detail"],
    families: ["digital", "painting"],
  },
  {
    id: "isometric",
    name: "Isometric",
    aliases: ["isometric view", "isometric art", "iso", "isometric illustration", "diorama"],
    lead: "an isometric illustration of",
    terms: ["isometric perspective", "miniature diorama", "clean geometry", "orthographic view", "tilt-shift"],
    negative: ["perspective distortion", "photo", "blurry", "close-up", "cropped"],
    families: ["digital", "render3d"],
  },
  {
    id: "low-poly",
    name: "Low poly",
    aliases: ["lowpoly", "low polygon", "polygonal", "low-poly art", "faceted"],
    lead: "a low poly render of",
    terms: ["faceted geometry", "flat shading", "minimal polygons", "pastel palette", "clean 3d"],
    negative: ["high detail textures", "photo", "realistic", "noisy"],
    families: ["render3d", "digital"],
  },
  {
    id: "neon-punk",
    name: "Neon punk",
    aliases: ["neonpunk", "cyberpunk", "cyber punk", "neon", "neon noir", "cyber"],
    lead: "a neon punk illustration of",
    terms: ["glowing neon lights", "cyberpunk", "magenta and cyan", "high contrast", "futuristic"],
    negative: ["muted colors", "daylight", "washed out", "sepia"],
    families: ["digital", "anime", "render3d"],
  },
  {
    id: "analog-film",
    name: "Analog film",
    aliases: ["analog", "analogue", "film photo", "film photography", "35mm", "35mm film", "kodak", "portra", "vintage photo", "analog photo", "analogue film"],
    lead: "an analog film photograph of",
    terms: ["35mm film", "natural film grain", "kodak portra 400", "faded colors", "light leaks"],
    negative: ["digital", "oversharpened", "cgi", "painting", "illustration"],
    families: ["photo", "realism"],
  },
  {
    id: "film-noir",
    name: "Film noir",
    aliases: ["noir", "neo-noir", "neo noir", "black and white film", "1940s film", "detective film"],
    lead: "a film noir still of",
    terms: ["black and white", "high contrast", "hard shadows", "venetian blind shadows", "1940s"],
    negative: ["color", "colorful", "bright", "cartoon"],
    families: ["photo"],
  },
  {
    id: "concept-art",
    name: "Concept art",
    aliases: ["concept", "concept design", "environment design", "matte painting", "keyframe"],
    lead: "concept art of",
    terms: ["matte painting", "environment design", "painterly", "trending on artstation", "cinematic scale"],
    negative: ["photo", "amateur", "flat", "low detail"],
    families: ["digital", "painting"],
  },
  {
    id: "pencil-sketch",
    name: "Pencil sketch",
    aliases: ["sketch", "pencil", "pencil drawing", "graphite", "charcoal", "charcoal drawing", "drawing", "sketchbook"],
    lead: "a pencil sketch of",
    terms: ["graphite shading", "cross-hatching", "paper texture", "loose sketchy lines", "monochrome"],
    negative: ["color", "photo", "3d render", "digital art"],
    families: ["drawing"],
  },
  {
    id: "pop-art",
    name: "Pop art",
    aliases: ["pop", "popart", "pop-art"],
    lead: "a pop art print of",
    terms: ["bold primary colors", "ben-day dots", "thick outlines", "screen print", "graphic"],
    negative: ["photo", "muted colors", "3d render", "realistic"],
    families: ["print", "drawing", "painting"],
  },
  {
    id: "impressionism",
    name: "Impressionism",
    aliases: ["impressionist", "impressionistic", "impressionist painting", "plein air"],
    lead: "an impressionist painting of",
    terms: ["visible brushstrokes", "dappled light", "plein air", "soft edges", "vibrant broken color"],
    negative: ["photo", "3d render", "sharp lines", "digital art"],
    families: ["painting"],
  },
  {
    id: "art-nouveau",
    name: "Art nouveau",
    aliases: ["nouveau", "jugendstil", "art-nouveau"],
    lead: "an art nouveau illustration of",
    terms: ["ornamental borders", "flowing organic lines", "decorative patterns", "muted gold accents", "elegant curves"],
    negative: ["photo", "3d render", "minimalist", "modern"],
    families: ["drawing", "print", "painting"],
  },
  {
    id: "ukiyo-e",
    name: "Ukiyo-e",
    aliases: ["ukiyoe", "ukiyo e", "japanese woodblock", "woodblock", "woodblock print", "japanese print"],
    lead: "an ukiyo-e woodblock print of",
    terms: ["flat colors", "bold outlines", "washi paper texture", "edo period", "traditional japanese"],
    negative: ["photo", "3d render", "gradient shading", "modern"],
    families: ["print", "drawing"],
  },
  {
    id: "claymation",
    name: "Claymation",
    aliases: ["clay", "stop motion", "stop-motion", "plasticine", "clay animation"],
    lead: "a claymation scene of",
    terms: ["plasticine texture", "stop-motion", "handmade", "fingerprint details", "miniature set"],
    negative: ["photo", "2d", "drawing", "cgi sheen"],
    families: ["sculpture", "photo"],
  },
  {
    id: "synthwave",
    name: "Synthwave",
    aliases: ["retrowave", "outrun", "vaporwave", "80s retro", "1980s retro", "retro futurism"],
    lead: "a synthwave illustration of",
    terms: ["retro 1980s aesthetic", "neon grid", "pink and purple gradient", "chrome", "glowing horizon"],
    negative: ["muted colors", "daylight", "photo", "realistic"],
    families: ["digital", "render3d"],
  },
  {
    id: "steampunk",
    name: "Steampunk",
    aliases: ["steam punk", "clockpunk", "victorian sci-fi"],
    lead: "a steampunk illustration of",
    terms: ["brass and copper", "clockwork gears", "victorian", "steam", "ornate machinery"],
    negative: ["modern", "plastic", "minimalist", "photo"],
    families: ["digital", "painting", "drawing"],
  },
  {
    id: "flat-vector",
    name: "Flat vector",
    aliases: ["flat", "vector", "vector art", "flat design", "flat illustration", "minimal vector", "infographic"],
    lead: "a flat vector illustration of",
    terms: ["clean shapes", "flat colors", "simple geometric forms", "limited palette", "crisp edges"],
    negative: ["photo", "3d render", "texture", "gradient", "noise"],
    families: ["digital"],
  },
  {
    id: "papercraft",
    name: "Papercraft",
    aliases: ["paper craft", "paper art", "paper cut", "papercut", "origami", "kirigami", "paper"],
    lead: "a papercraft scene of",
    terms: ["layered paper cutouts", "paper texture", "soft drop shadows", "handmade", "pastel colors"],
    negative: ["photo", "3d render", "painting", "glossy"],
    families: ["sculpture"],
  },
];
