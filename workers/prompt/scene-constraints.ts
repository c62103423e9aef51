/**
 * Scene constraints: facts a prompt can state only once. "A city at night" must not gain "golden
 * hour"; once an added term says "moonlight", no later term may say "sunrise". Each group (time of
 * day, season, weather) takes the values the user's words give it, else the first added term's.
 */
import { contentKeys } from "./term-keys.js";

type Groups = Record<string, Record<string, string[]>>;

const GROUPS: Groups = {
  time: {
    night: ["night", "nighttime", "midnight", "moonlight", "moonlit", "starlight", "starlit", "starry", "nocturnal", "night-time"],
    day: ["daylight", "daytime", "midday", "noon", "sunshine", "sunlit", "afternoon", "sunny"],
    dawn: ["dawn", "sunrise", "morning", "daybreak"],
    dusk: ["dusk", "sunset", "evening", "twilight", "sundown"],
  },
  season: {
    winter: ["winter", "snow", "snowy", "snowfall", "frost", "frosty", "wintry", "blizzard"],
    summer: ["summer", "summery"],
    autumn: ["autumn", "autumnal"],
    spring: ["springtime"],
  },
  weather: {
    wet: ["rain", "rainy", "raining", "storm", "stormy", "thunderstorm", "downpour", "drizzle", "rainfall"],
    clear: ["sunny", "cloudless", "sunshine"],
  },
};

/** Phrases that fix a value although their words alone do not. */
const PHRASES: [RegExp, string, string][] = [
  [/\bgolden hour\b/i, "time", "dusk"],
  [/\bblue hour\b/i, "time", "dusk"],
  [/\bclear sky\b/i, "weather", "clear"],
];

const VALUE_OF = new Map<string, [group: string, value: string][]>();
for (const [group, values] of Object.entries(GROUPS)) {
  for (const [value, keys] of Object.entries(values)) {
    for (const key of keys) VALUE_OF.set(key, [...(VALUE_OF.get(key) ?? []), [group, value]]);
  }
}

/** group → values a text states. */
export type Scene = Map<string, Set<string>>;

export function sceneOf(text: string): Scene {
  const scene: Scene = new Map();
  const add = (group: string, value: string) => {
    const values = scene.get(group) ?? new Set<string>();
    values.add(value);
    scene.set(group, values);
  };
  for (const key of contentKeys(text)) for (const [group, value] of VALUE_OF.get(key) ?? []) add(group, value);
  for (const [pattern, group, value] of PHRASES) if (pattern.test(text)) add(group, value);
  return scene;
}

/** True when `term` states nothing that contradicts `scene`. */
export function fitsScene(term: Scene, scene: Scene): boolean {
  for (const [group, values] of term) {
    const fixed = scene.get(group);
    if (fixed) for (const value of values) if (!fixed.has(value)) return false;
  }
  return true;
}

/** Adds what `term` states to `scene` (for groups not fixed yet). */
export function extendScene(scene: Scene, term: Scene): void {
  for (const [group, values] of term) if (!scene.has(group)) scene.set(group, new Set(values));
}
