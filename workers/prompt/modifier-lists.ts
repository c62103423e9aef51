/**
 * The prompt-modifier lists (CLIP Interrogator's term lists, MIT): reading them once and deciding
 * which lines the engine may ever add.
 *
 * Never added, whatever their relevance:
 * - People's names. `artists.txt` is 5,265 real artists, many alive, and `flavors.txt` holds
 *   artists and celebrities too ("by …", bare names). Imitating a living artist's style without
 *   their consent is contested, and the lists cannot tell the living from the dead offline, so
 *   the engine adds no name at all; a user who asks for an artist writes the name, and it is kept
 *   as written. Names are recognised from artists.txt (full names) and from the NLP library's
 *   lexicon (first names, surnames, people, places, organisations).
 * - Sexual, gory or hateful terms (a short blocklist): a prompt improver must not add them.
 * - CLIP Interrogator's tokenisation artefacts ("8 k", "3 d", "cinestill 8 0 0 t").
 */
import fs from "node:fs";
import path from "node:path";
import nlp from "compromise";
import { termKey, words } from "./term-keys.js";

export const MODIFIER_FILES = ["flavors.txt", "mediums.txt", "movements.txt", "artists.txt", "negative.txt"] as const;

export interface ModifierLists {
  /** Folder read from. */
  folder: string;
  /** flavors.txt, in file order (most frequent in real prompts first). */
  flavors: string[];
  mediums: string[];
  movements: string[];
  artists: string[];
  negative: string[];
}

/** Reads the five lists; undefined when any is missing (the engine then runs on its own tables). */
export function readModifierLists(folder: string): ModifierLists | undefined {
  const read = (name: string) =>
    fs
      .readFileSync(path.join(folder, name), "utf8")
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line.length > 0);
  if (!MODIFIER_FILES.every((name) => fs.existsSync(path.join(folder, name)))) return undefined;
  return {
    folder,
    flavors: read("flavors.txt"),
    mediums: read("mediums.txt"),
    movements: read("movements.txt"),
    artists: read("artists.txt"),
    negative: read("negative.txt"),
  };
}

/** Terms never added (keys). */
const BLOCKED_KEYS = new Set(
  (
    "nude naked nudity nsfw nipple nipples breast breasts boob boobs busty cleavage topless bottomless lingerie bra panties " +
    "underwear thong bikini sexy sexual sex erotic erotica seductive sensual porn pornographic hentai ecchi fetish bdsm " +
    "stripper playboy onlyfans gore gory bloody blood corpse corpses decapitated dismembered mutilated disembowelled guts " +
    "suicide torture nazi swastika hitler kkk racist slur drug drugs cocaine heroin meth weed marijuana gun guns rifle " +
    "pistol killing murder kill dead death skull skulls"
  ).split(" "),
);

/** Studios, brands and franchises: names too, of companies and their characters. */
const BRAND_KEYS = new Set(
  (
    "pixar disney dreamworks ghibli marvel dc nintendo sega pokemon lego barbie gta fortnite minecraft zelda warhammer blizzard " +
    "valve playstation xbox netflix hbo starwars star-wars batman superman spiderman ironman gundam evangelion sailor " +
    "simpsons shrek mickey hello-kitty coca-cola mcdonalds nike adidas gucci prada tesla ferrari porsche lamborghini bmw"
  ).split(" "),
);

/** Lexicon tags that mark proper names. */
const NAME_TAGS = new Set(["FirstName", "MaleName", "FemaleName", "LastName", "Person", "Honorific", "Place", "City", "Country", "Region", "Organization", "Company", "SportsTeam", "School"]);

/** Common words the lexicon also lists as names, kept usable. */
const NOT_NAMES = new Set(
  (
    "amber ruby jade rose hazel violet olive ginger pearl crystal iris summer autumn dawn sky river storm hope grace joy " +
    "faith bliss june may april august star sunny rain forest ocean lily daisy holly ivy jasmine heather coral sage " +
    "china turkey jordan chad georgia victoria florence sydney paris-green angel cherry honey brook dusk dale cliff glen " +
    "mercury venus mars saturn jupiter neptune pluto earth moon sun nova aurora luna sol art deco gothic baroque victorian " +
    "marvel apple amazon shell target gap north south east west central"
  ).split(" "),
);

export interface LineFilter {
  /** Why a line is never added, or undefined when it may be. */
  rejection(line: string): string | undefined;
}

/** Builds the filter from artists.txt and the NLP lexicon. */
export function lineFilter(artists: readonly string[]): LineFilter {
  const lexicon = (nlp as unknown as { world(): { model: { one: { lexicon: Record<string, string> } } } }).world().model.one.lexicon;
  const artistNames = new Set<string>();
  for (const artist of artists) {
    const name = words(artist.toLowerCase()).join(" ");
    if (name.includes(" ")) artistNames.add(name);
  }
  const isNameTag = (word: string) => {
    const tag = lexicon[word];
    return tag !== undefined && NAME_TAGS.has(tag) && !NOT_NAMES.has(word);
  };
  return {
    rejection(line: string): string | undefined {
      const lower = line.toLowerCase();
      if (/\b\d (?:\d|k|d|s)\b|\b\d \d\b/.test(lower)) return "tokenisation artefact";
      if (/^(?:by|in the style of|style of|inspired by|art by|painted by|drawn by)\b|\b(?:by|inspired by)\s+\p{L}+\s+\p{L}+/u.test(lower)) return "credits a person";
      const tokens = words(lower);
      for (const token of tokens) {
        if (BLOCKED_KEYS.has(termKey(token))) return "blocked term";
        if (BRAND_KEYS.has(token)) return "brand";
        if (isNameTag(token)) return "name";
      }
      for (let i = 0; i + 1 < tokens.length; i++) {
        const two = `${tokens[i]} ${tokens[i + 1]}`;
        if (artistNames.has(two) || (i + 2 < tokens.length && artistNames.has(`${two} ${tokens[i + 2]}`))) return "artist name";
        if (isNameTag(two)) return "name";
      }
      return undefined;
    },
  };
}

/** Keys a prompt improver must never add, for other modules (curated tables are checked in tests). */
export function isBlockedKey(key: string): boolean {
  return BLOCKED_KEYS.has(key);
}
