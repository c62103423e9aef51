/**
 * The mood presets: the project's own curated table of lighting, colour and atmosphere terms per
 * mood, first terms most characteristic. Terms that fix a time of day or weather ("moonlight",
 * "rain") are dropped by the engine when the user's prompt says otherwise (see scene-constraints.ts).
 * Clients see this table in the engine's `/models` record (`MOOD_PRESETS` → `details.moods`).
 */

export interface MoodPreset {
  /** Stable id clients may send as `mood`. */
  id: string;
  name: string;
  /** Other names and spellings recognised (case and British spellings do not matter). */
  aliases: string[];
  lighting: string[];
  color: string[];
  atmosphere: string[];
  /** Negative-prompt terms that would break the mood. */
  negative: string[];
}

export const MOOD_PRESETS: readonly MoodPreset[] = [
  {
    id: "calm",
    name: "Calm",
    aliases: ["peaceful", "serene", "tranquil", "relaxing", "relaxed", "quiet", "still", "gentle", "soothing", "zen"],
    lighting: ["soft diffused light", "gentle even lighting"],
    color: ["muted pastel tones", "soft harmonious palette"],
    atmosphere: ["serene atmosphere", "tranquil stillness"],
    negative: ["chaotic", "harsh contrast"],
  },
  {
    id: "dramatic",
    name: "Dramatic",
    aliases: ["intense", "powerful", "bold", "striking", "theatrical"],
    lighting: ["dramatic chiaroscuro lighting", "strong rim light"],
    color: ["deep contrasting colors", "rich shadows"],
    atmosphere: ["tense dramatic atmosphere", "dynamic tension"],
    negative: ["flat lighting", "dull"],
  },
  {
    id: "joyful",
    name: "Joyful",
    aliases: ["happy", "cheerful", "joyous", "uplifting", "fun", "bright", "delightful", "festive", "sunny mood"],
    lighting: ["bright cheerful light", "warm sunlight"],
    color: ["vibrant saturated colors", "sunny yellows"],
    atmosphere: ["lively cheerful atmosphere", "sense of joy"],
    negative: ["gloomy", "dark", "desaturated"],
  },
  {
    id: "mysterious",
    name: "Mysterious",
    aliases: ["mystery", "enigmatic", "mystical", "secretive", "arcane", "cryptic"],
    lighting: ["dim low-key lighting", "light shafts through haze"],
    color: ["deep blues and teals", "shadowy palette"],
    atmosphere: ["mysterious atmosphere", "drifting mist"],
    negative: ["bright flat lighting", "cheerful"],
  },
  {
    id: "melancholic",
    name: "Melancholic",
    aliases: ["melancholy", "sad", "sorrowful", "somber", "sombre", "wistful sadness", "bittersweet", "sadness", "blue"],
    lighting: ["overcast diffuse light", "fading light"],
    color: ["desaturated cool tones", "muted grays"],
    atmosphere: ["melancholic mood", "quiet loneliness"],
    negative: ["vibrant", "cheerful", "saturated colors"],
  },
  {
    id: "eerie",
    name: "Eerie",
    aliases: ["creepy", "spooky", "unsettling", "horror", "scary", "sinister", "haunting", "haunted", "uncanny", "ominous"],
    lighting: ["cold moonlight", "harsh underlighting"],
    color: ["sickly green tint", "cold desaturated palette"],
    atmosphere: ["eerie atmosphere", "thick fog", "unsettling silence"],
    negative: ["cheerful", "bright colors", "cute"],
  },
  {
    id: "romantic",
    name: "Romantic",
    aliases: ["love", "loving", "tender", "intimate", "passionate", "amorous"],
    lighting: ["warm candlelight glow", "soft backlight"],
    color: ["rose and gold tones", "blush pink hues"],
    atmosphere: ["romantic intimate atmosphere", "tender mood"],
    negative: ["harsh lighting", "cold colors"],
  },
  {
    id: "epic",
    name: "Epic",
    aliases: ["grand", "majestic", "heroic", "monumental", "awe-inspiring", "awe", "legendary", "grandiose"],
    lighting: ["god rays", "volumetric lighting"],
    color: ["rich golden tones", "sweeping sky colors"],
    atmosphere: ["epic sense of scale", "majestic atmosphere"],
    negative: ["small scale", "mundane", "cramped"],
  },
  {
    id: "cozy",
    name: "Cozy",
    aliases: ["cosy", "snug", "homely", "hygge", "comfy", "comfortable", "warm", "inviting", "homey"],
    lighting: ["warm lamplight", "soft glowing light"],
    color: ["warm amber tones", "earthy palette"],
    atmosphere: ["cozy inviting atmosphere", "soft textures"],
    negative: ["cold", "sterile", "harsh lighting"],
  },
  {
    id: "dreamy",
    name: "Dreamy",
    aliases: ["ethereal", "dreamlike", "dream", "surreal", "otherworldly", "hazy", "soft"],
    lighting: ["soft glowing haze", "luminous backlight"],
    color: ["pastel hues", "iridescent highlights"],
    atmosphere: ["dreamlike ethereal atmosphere", "floating particles"],
    negative: ["harsh", "gritty", "sharp contrast"],
  },
  {
    id: "dark",
    name: "Dark",
    aliases: ["grim", "bleak", "brooding", "moody", "gloomy", "dark fantasy", "gothic", "dystopian"],
    lighting: ["low-key lighting", "deep shadows"],
    color: ["dark muted palette", "crushed blacks"],
    atmosphere: ["ominous brooding atmosphere", "heavy gloom"],
    negative: ["bright", "cheerful", "pastel"],
  },
  {
    id: "whimsical",
    name: "Whimsical",
    aliases: ["magical", "fairytale", "fairy tale", "quirky", "storybook", "enchanting", "playful", "cute"],
    lighting: ["sparkling magical light", "soft glow"],
    color: ["candy-colored palette", "playful bright colors"],
    atmosphere: ["whimsical storybook charm", "fairytale atmosphere"],
    negative: ["grim", "gritty", "dull colors"],
  },
  {
    id: "nostalgic",
    name: "Nostalgic",
    aliases: ["vintage", "retro", "wistful", "memories", "old-fashioned", "old fashioned", "reminiscent"],
    lighting: ["warm faded light", "hazy afternoon glow"],
    color: ["faded sepia tones", "warm film colors"],
    atmosphere: ["nostalgic atmosphere", "wistful memories"],
    negative: ["modern", "sterile", "oversaturated"],
  },
  {
    id: "energetic",
    name: "Energetic",
    aliases: ["dynamic", "action", "exciting", "vibrant", "lively", "frantic", "fast", "explosive"],
    lighting: ["high-contrast lighting", "streaking highlights"],
    color: ["bold saturated colors", "electric accents"],
    atmosphere: ["dynamic motion", "energetic action", "motion blur"],
    negative: ["static", "dull", "lifeless"],
  },
  {
    id: "lonely",
    name: "Lonely",
    aliases: ["solitary", "isolated", "isolation", "alone", "solitude", "desolate", "empty"],
    lighting: ["single distant light", "pale cold light"],
    color: ["cold muted blues", "sparse palette"],
    atmosphere: ["vast empty space", "solitary mood"],
    negative: ["crowded", "busy", "cluttered"],
  },
  {
    id: "hopeful",
    name: "Hopeful",
    aliases: ["optimistic", "inspiring", "inspirational", "hope", "bright future", "uplifted"],
    lighting: ["warm light breaking through clouds", "radiant glow"],
    color: ["soft golden tones", "clear sky blues"],
    atmosphere: ["hopeful uplifting atmosphere", "sense of renewal"],
    negative: ["gloomy", "bleak", "dark"],
  },
  {
    id: "tense",
    name: "Tense",
    aliases: ["suspense", "suspenseful", "thriller", "anxious", "nervous", "claustrophobic", "menacing"],
    lighting: ["harsh side lighting", "flickering light"],
    color: ["cold steel tones", "sickly fluorescent hues"],
    atmosphere: ["suspenseful atmosphere", "claustrophobic tension"],
    negative: ["relaxed", "cheerful", "soft"],
  },
  {
    id: "idyllic",
    name: "Idyllic",
    aliases: ["natural", "pastoral", "bucolic", "fresh", "earthy"],
    lighting: ["soft natural daylight", "dappled sunlight"],
    color: ["lush greens", "fresh natural colors"],
    atmosphere: ["idyllic pastoral atmosphere", "gentle breeze"],
    negative: ["urban", "polluted", "artificial"],
  },
];
