/**
 * Term keys: the one normalisation used wherever two words must be recognised as "the same word"
 * (the relevance index, repetition checks, preset matching).
 *
 * A key is the lower-cased word with its possessive and plural folded away and British spellings
 * mapped to American ones ("Watercolours" → "watercolor", "wolves'" → "wolf"). It is deliberately a
 * fast rule set, not a lemmatiser: the same function runs over the 100k flavour lines at start-up
 * (where running the NLP library on every line would cost seconds) and over the user's words, so
 * what matters is that both sides fold alike. Keys are never shown to anyone.
 */

/** Function words and prompt glue: never content, never a reason to call two terms duplicates. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    "a an the and or but nor of in on at to for from by with without within into onto over under above below " +
    "between among through during before after behind beside besides near around across along against toward towards " +
    "up down out off about as is are was were be been being am it its it's this that these those there here " +
    "his her hers their theirs our ours your yours my mine me him them us we you he she they i " +
    "who whom whose which what where when why how very so too just also than then some any each every all both " +
    "no not only own same such can will would should could may might must do does did has have had " +
    "while if else one's"
  ).split(" "),
);

/** British (and other) spellings folded onto the spelling most image-caption data uses. */
const SPELLING_VARIANTS: Readonly<Record<string, string>> = {
  colour: "color",
  colours: "colors",
  coloured: "colored",
  colourful: "colorful",
  watercolour: "watercolor",
  watercolours: "watercolors",
  grey: "gray",
  greys: "grays",
  centre: "center",
  centred: "centered",
  theatre: "theater",
  armour: "armor",
  armoured: "armored",
  harbour: "harbor",
  neighbourhood: "neighborhood",
  favourite: "favorite",
  jewellery: "jewelry",
  aeroplane: "airplane",
  analogue: "analog",
  sombre: "somber",
  lustre: "luster",
  metre: "meter",
  cosy: "cozy",
  mould: "mold",
  moustache: "mustache",
  pyjamas: "pajamas",
  honour: "honor",
  glamour: "glamor",
  vapour: "vapor",
  rumour: "rumor",
  splendour: "splendor",
  saviour: "savior",
  labour: "labor",
  behaviour: "behavior",
  odour: "odor",
  fibre: "fiber",
  spectre: "specter",
  sceptre: "scepter",
  realise: "realize",
  stylised: "stylized",
  stylise: "stylize",
  "3-d": "3d",
  "8-bit": "8bit",
  "16-bit": "16bit",
  "close-up": "closeup",
  "lowpoly": "low-poly",
};

/** Plurals no suffix rule gets right. */
const IRREGULAR_PLURALS: Readonly<Record<string, string>> = {
  men: "man",
  women: "woman",
  children: "child",
  people: "person",
  mice: "mouse",
  geese: "goose",
  feet: "foot",
  teeth: "tooth",
  wolves: "wolf",
  leaves: "leaf",
  knives: "knife",
  lives: "life",
  wives: "wife",
  elves: "elf",
  dwarves: "dwarf",
  shelves: "shelf",
  thieves: "thief",
  halves: "half",
  calves: "calf",
  loaves: "loaf",
  scarves: "scarf",
  oxen: "ox",
  cacti: "cactus",
  fungi: "fungus",
  octopi: "octopus",
  dice: "die",
  fishes: "fish",
  heroes: "hero",
  tomatoes: "tomato",
  potatoes: "potato",
  volcanoes: "volcano",
  echoes: "echo",
};

/** Words ending in s that are not plurals (or whose singular would collide with another word). */
const NOT_PLURAL = new Set(
  (
    "always perhaps series species news physics mathematics chaos cosmos canvas atlas lens bokeh ethos pathos " +
    "its this thus was has yes his hers ours yours theirs paris texas mars venus tennis pegasus"
  ).split(" "),
);

/** -ies plurals whose singular is -ie, not -y. */
const IE_PLURALS = new Set(["movies", "cookies", "pies", "ties", "lies", "zombies", "hippies", "brownies", "selfies", "pixies", "goalies", "rookies", "genies", "aussies", "calories", "boogies"]);
/** -es plurals that only drop the s (their singular ends in e). */
const E_PLURALS_AFTER_SIBILANT = new Set(["horses", "houses", "roses", "noses", "vases", "bases", "phases", "cases", "faces", "places", "spaces", "races", "pieces", "prices", "voices", "sauces", "palaces", "necklaces", "fences", "dances", "lenses", "spouses", "blouses", "mazes", "prizes", "sizes", "breezes", "gazes", "glazes", "bronzes", "corpses", "eclipses", "ellipses", "purses", "nurses", "verses", "curses", "universes", "horseshoes", "landscapes", "cityscapes", "seascapes", "edges", "bridges", "ridges", "cages", "pages", "images", "villages", "cottages", "badges", "lodges", "hedges", "judges", "ages", "stages", "messages", "garages", "wedges", "textures", "statues", "caves", "clothes", "creatures", "figures", "structures", "treasures", "nurses"]);

const KEY_CACHE = new Map<string, string>();
const KEY_CACHE_LIMIT = 200_000;

/**
 * The key of one word: lower-case, apostrophes and surrounding punctuation removed, possessive and
 * plural folded, spelling variants mapped. Returns "" for a word with no letters or digits.
 */
export function termKey(word: string): string {
  const cached = KEY_CACHE.get(word);
  if (cached !== undefined) return cached;
  const key = computeKey(word);
  if (KEY_CACHE.size < KEY_CACHE_LIMIT) KEY_CACHE.set(word, key);
  return key;
}

function computeKey(word: string): string {
  let w = word.toLowerCase().normalize("NFC").replace(/[\u2019\u2018`]/g, "'");
  w = w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
  if (w === "") return "";
  if (w.endsWith("'s")) w = w.slice(0, -2);
  else if (w.endsWith("s'")) w = w.slice(0, -1);
  w = SPELLING_VARIANTS[w] ?? w;
  w = singular(w);
  return SPELLING_VARIANTS[w] ?? w;
}

function singular(w: string): string {
  const irregular = IRREGULAR_PLURALS[w];
  if (irregular) return irregular;
  if (w.length <= 3 || !w.endsWith("s") || NOT_PLURAL.has(w) || /[^a-z]/.test(w)) return w;
  if (w.endsWith("ss") || w.endsWith("us") || w.endsWith("is") || w.endsWith("ous")) return w;
  if (w.endsWith("ies")) return IE_PLURALS.has(w) ? w.slice(0, -1) : `${w.slice(0, -3)}y`;
  if (E_PLURALS_AFTER_SIBILANT.has(w)) return w.slice(0, -1);
  if (/(?:ch|sh|x|ss|zz)es$/.test(w)) return w.slice(0, -2);
  return w.slice(0, -1);
}

/** Splits text into words: runs of letters, digits, inner apostrophes, hyphens and ampersands. */
export function words(text: string): string[] {
  return text.match(/[\p{L}\p{N}]+(?:['’&-][\p{L}\p{N}]+)*/gu) ?? [];
}

/** Keys of the content words of a text, in order (stopwords and empty keys dropped). */
export function contentKeys(text: string): string[] {
  const keys: string[] = [];
  for (const word of words(text)) {
    const key = termKey(word);
    if (key !== "" && !STOPWORDS.has(key)) keys.push(key);
  }
  return keys;
}

/** Lower-case, collapsed whitespace, punctuation other than inner hyphens dropped: for table look-ups. */
export function normalizePhrase(text: string): string {
  return words(text.replace(/[_/]+/g, " "))
    .map((word) => SPELLING_VARIANTS[word.toLowerCase()] ?? word.toLowerCase())
    .join(" ");
}
