/**
 * The builtin prompt engine: offline, deterministic for a seed, and honest about its sources.
 *
 * For one request it
 * 1. analyses the prompt (prompt-analysis.ts): subject, head noun and class, scene facts;
 * 2. understands style and mood (preset-matching.ts): a preset, or free text kept as written;
 * 3. asks the relevance index (relevance-index.ts) for the lighting, composition and quality lines
 *    that suit the subject, style and mood, and ranks the default mediums when no style is given;
 * 4. builds each variant by filling slots in order of importance (user's style/mood text, medium,
 *    first style term, mood atmosphere, subject feature, …) while the prompt stays within the CLIP
 *    token budget; a slot is skipped when it would repeat a word already in the prompt
 *    (dedupe-keys.ts), contradict the scene (scene-constraints.ts) or imply another medium
 *    (medium-families.ts). The seed picks among the top few candidates of each slot, and later
 *    variants avoid the picks of earlier ones, so variants differ;
 * 5. writes the prompt in reading order: medium lead + the user's prompt verbatim, style, subject
 *    features, mood, lighting, composition, quality; and a negative prompt for the same budget.
 *
 * The user's words are never changed or cut: when the prompt alone is over the budget it comes
 * back unchanged, with nothing added, and a note says so.
 *
 * Without the prompt-modifier lists the engine still answers, from its own tables (styles, moods,
 * per-class detail terms, negative terms); the notes and the status say that the flavour-list
 * details are missing.
 */
import path from "node:path";
import { AtelierError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { APPROXIMATE_MARGIN, CLIP_CONTEXT_LENGTH, CLIP_SPECIAL_TOKENS, loadTokenCounter, type TokenCounter } from "./clip-tokens.js";
import { dedupeKeys } from "./dedupe-keys.js";
import { DEFAULT_MEDIUMS } from "./default-mediums.js";
import { familiesOf, fitsFamilies, type MediumFamily } from "./medium-families.js";
import { readModifierLists, type ModifierLists } from "./modifier-lists.js";
import type { MoodPreset } from "../../models/catalog/prompt-presets/mood-presets.js";
import { BASE_NEGATIVE, MEDIUM_NEGATIVE_FAMILIES, NEGATIVE_FILE_GROUPS, NEGATIVE_GROUP_LIMITS, type NegativeGroup } from "./negative-prompt.js";
import { analysePrompt, type PromptAnalysis } from "./prompt-analysis.js";
import { matchMood, matchStyle, understoodAs, type PresetMatch } from "./preset-matching.js";
import { RelevanceIndex, type Associations, type DetailCandidate, type DetailKind, type IndexStats, type RelevanceQuery } from "./relevance-index.js";
import { extendScene, fitsScene, sceneOf, type Scene } from "./scene-constraints.js";
import { randomSeed, seededRandom } from "../../core/seeded-random.js";
import { pickRanked, shuffled, streamSeed } from "./random-choice.js";
import { STYLE_PRESETS, type StylePreset } from "../../models/catalog/prompt-presets/style-presets.js";
import { SUBJECT_CLASS_INFO, subjectFeatures } from "./subject-classes.js";
import { contentKeys } from "./term-keys.js";
import { LIMITS } from "../../core/limits.js";

/** Catalog id of this engine. */
export const BUILTIN_MODEL_ID = "prompt-builtin";

export const MAX_PROMPT_CHARACTERS = LIMITS.promptCharacters.max;
export const MAX_STYLE_CHARACTERS = LIMITS.presetCharacters.max;
export const MIN_MAX_TOKENS = LIMITS.promptTokens.min;
export const MAX_MAX_TOKENS = LIMITS.promptTokens.max;
export const MAX_VARIANTS = LIMITS.promptVariants.max;

export interface BuiltinEngineOptions {
  /**
   * Folder holding the prompt-modifier lists (`flavors.txt`, `mediums.txt`, `movements.txt`,
   * `artists.txt`, `negative.txt`): the installed `prompt-builtin` model folder. Absent or
   * incomplete: the engine runs on its own tables.
   */
  modifiersFolder?: string;
  /** CLIP's gzip merge list (`bpe_simple_vocab_16e6.txt.gz`) for exact token counts; absent: a conservative estimate. */
  clipMergesFile?: string;
  /** Budget in CLIP tokens (start and end markers included) when a request says 0. Default 77. */
  defaultMaxTokens?: number;
  /**
   * The lists and merges are missing but on their way (first-start provisioning is installing
   * prompt-builtin): the log says so in one line instead of warning with the install command.
   */
  listsArriving?: boolean;
  logger?: Logger;
}

export interface ImproveRequest {
  prompt: string;
  style: string;
  mood: string;
  /** Unset picks one at random (returned in the result). */
  seed?: number | undefined;
  /** 1 to 4; 0 means 1. */
  variants: number;
  /** 16 to 512 CLIP tokens; 0 takes the default. */
  maxTokens: number;
}

export interface ImprovedVariant {
  prompt: string;
  negativePrompt: string;
  subject: string;
  styleTerms: string[];
  moodTerms: string[];
  detailTerms: string[];
  /** CLIP tokens of `prompt`, start and end markers included. */
  tokens: number;
}

export interface ImproveResult {
  variants: ImprovedVariant[];
  model: string;
  seed: number;
  /** The style as understood: a preset id, the text as written, or "". */
  style: string;
  mood: string;
  /** The user's prompt alone was over the budget: returned unchanged, nothing added. */
  overLimit: boolean;
  /** Facts for the caller and the logs (over the limit, lists missing, fewer variants than asked). */
  notes: string[];
}

export interface BuiltinEngineStatus {
  /** Whether the prompt-modifier lists were found and indexed. */
  modifierLists: "indexed" | "missing";
  modifiersFolder: string | undefined;
  /** Built while the missing lists were on their way ({@link BuiltinEngineOptions.listsArriving}). */
  listsArriving: boolean;
  tokenCounter: "exact" | "approximate";
  index: IndexStats | undefined;
  /** Time to read the lists, build the index and load the token counter, in milliseconds. */
  loadMs: number;
}

export const LISTS_ARRIVING_NOTE =
  "The prompt-modifier lists and CLIP merges (prompt-builtin) are being installed by first-start provisioning: the prompt engine uses them from the first call after they arrive.";

export const MODIFIER_LISTS_MISSING_NOTE =
  "The prompt-modifier lists are not installed: detail terms come from the engine's own tables only (install them with `npm run models -- pull prompt-builtin`).";

/** One thing a variant may add, in priority order. */
interface Slot {
  section: Section;
  text: string;
  /** Which list the term came from, for the response's pieces. */
  piece: "style" | "mood" | "detail";
  /** Text placed before the user's prompt ("a photograph of"), not after it. */
  lead?: boolean;
  /** The user's own text (style or mood as written): not subject to the medium check. */
  user?: boolean;
}

type Section = "lead" | "userStyle" | "style" | "feature" | "userMood" | "mood" | "lighting" | "composition" | "quality" | "medium";
const SECTION_ORDER: Section[] = ["userStyle", "medium", "style", "feature", "userMood", "mood", "lighting", "composition", "quality"];

/** Candidate detail lines kept per kind before per-variant filtering. */
const CANDIDATES_PER_KIND = 40;
/** Top candidates the seed chooses among. */
const CHOICE_WIDTH = 5;
/** Association given to the subject's surface words ("fur", "scales") as features. */
const SEED_FEATURE_ASSOCIATION = 0.3;

interface RequestContext {
  analysis: PromptAnalysis;
  style: PresetMatch<StylePreset>;
  mood: PresetMatch<MoodPreset>;
  budget: number;
  userKeys: Set<string>;
  details: Record<DetailKind | "feature", string[]>;
  mediums: string[];
}

export class BuiltinPromptEngine {
  readonly status: BuiltinEngineStatus;
  private readonly index: RelevanceIndex | undefined;
  private readonly lists: ModifierLists | undefined;
  private readonly counter: TokenCounter;
  private readonly defaultMaxTokens: number;
  private readonly logger: Logger | undefined;
  private readonly negativeTerms: { term: string; group: NegativeGroup }[];
  private readonly mediumPriors = new Map<string, number>();

  constructor(options: BuiltinEngineOptions = {}) {
    const started = performance.now();
    this.logger = options.logger;
    this.defaultMaxTokens = options.defaultMaxTokens ?? CLIP_CONTEXT_LENGTH;
    this.lists = options.modifiersFolder ? readModifierLists(options.modifiersFolder) : undefined;
    this.index = this.lists ? new RelevanceIndex(this.lists.flavors, this.lists.artists, styleWordKeys(this.lists)) : undefined;
    this.counter = loadTokenCounter(options.clipMergesFile);
    this.negativeTerms = negativeVocabulary(this.lists);
    this.status = {
      modifierLists: this.index ? "indexed" : "missing",
      modifiersFolder: options.modifiersFolder && path.resolve(options.modifiersFolder),
      listsArriving: options.listsArriving === true && (!this.index || this.counter.kind === "approximate"),
      tokenCounter: this.counter.kind,
      index: this.index?.stats,
      loadMs: Math.round(performance.now() - started),
    };
    if (this.status.listsArriving) {
      this.logger?.info({ model: BUILTIN_MODEL_ID }, LISTS_ARRIVING_NOTE);
    } else {
      if (!this.index) this.logger?.warn({ folder: options.modifiersFolder }, MODIFIER_LISTS_MISSING_NOTE);
      if (this.counter.kind === "approximate") {
        this.logger?.warn({ file: options.clipMergesFile }, "CLIP merge list not found: prompt lengths are estimated conservatively.");
      }
    }
  }

  /** CLIP tokens of a text, start and end markers included. */
  countTokens(text: string): number {
    return this.counter.count(text) + CLIP_SPECIAL_TOKENS;
  }

  /** Whether a text fits `maxTokens` (default: the configured budget), as the engine counts. */
  fits(text: string, maxTokens: number = this.defaultMaxTokens): boolean {
    return this.counter.count(text) <= this.contentBudget(maxTokens);
  }

  improve(request: ImproveRequest): ImproveResult {
    const { prompt, variantCount, maxTokens } = validate(request, this.defaultMaxTokens);
    const seed = request.seed === undefined ? randomSeed() : request.seed >>> 0;
    const style = matchStyle(request.style);
    const mood = matchMood(request.mood);
    const notes: string[] = [];
    if (!this.index) notes.push(MODIFIER_LISTS_MISSING_NOTE);
    const base = { model: BUILTIN_MODEL_ID, seed, style: understoodAs(style), mood: understoodAs(mood) };

    // Content tokens allowed (markers excluded); an estimate keeps a margin.
    const budget = this.contentBudget(maxTokens);
    const analysis = analysePrompt(prompt);
    if (this.counter.count(prompt.trim()) > budget) {
      const note = `The prompt alone is ${this.countTokens(prompt.trim())} CLIP tokens, over the ${maxTokens}-token limit: it is returned unchanged and nothing was added.`;
      notes.push(note);
      this.logger?.info({ tokens: this.countTokens(prompt.trim()), maxTokens }, "prompt over the token limit, returned unchanged");
      const unchanged: ImprovedVariant = {
        prompt: prompt.trim(),
        negativePrompt: this.negativePrompt(analysis, style, mood, new Set(), maxTokens, prompt),
        subject: analysis.subject,
        styleTerms: [],
        moodTerms: [],
        detailTerms: [],
        tokens: this.countTokens(prompt.trim()),
      };
      return { ...base, variants: [unchanged], overLimit: true, notes };
    }

    const context = this.context(analysis, style, mood, budget);
    const used = new Map<string, Set<string>>();
    const variants: ImprovedVariant[] = [];
    const seen = new Set<string>();
    for (let v = 0; v < variantCount; v++) {
      const variant = this.variant(context, seededRandom(streamSeed(seed, v)).uniform, used, maxTokens);
      if (seen.has(variant.prompt)) continue;
      seen.add(variant.prompt);
      variants.push(variant);
    }
    if (variants.length < variantCount) notes.push(`Only ${variants.length} distinct variant(s) could be made for this prompt.`);
    return { ...base, variants, overLimit: false, notes };
  }

  /** What every variant of a request shares: the analysis and the ranked candidates. */
  private context(analysis: PromptAnalysis, style: PresetMatch<StylePreset>, mood: PresetMatch<MoodPreset>, budget: number): RequestContext {
    const userKeys = new Set([...analysis.words.map((word) => word.text), ...userText(style), ...userText(mood)].flatMap(dedupeKeys));
    for (const key of analysis.keys) userKeys.add(key);
    const details: RequestContext["details"] = { lighting: [], composition: [], quality: [], feature: [] };
    let mediums: string[] = [];
    const info = SUBJECT_CLASS_INFO[analysis.subjectClass];
    const index = this.index;
    if (index) {
      const topicQuery: RelevanceQuery = {
        terms: [...info.seeds, ...styleWords(style), ...moodWords(mood)].map((key) => ({ key, weight: 0.4 })),
      };
      const subjectQuery: RelevanceQuery = {
        terms: analysis.words.map((word) => ({ key: word.key, weight: word.key === analysis.head ? 1.5 : word.role === "noun" ? 1 : 0.6 })),
      };
      const topic = index.associations(topicQuery);
      const subject = index.associations(subjectQuery);
      // What the subject is made of or covered in is a feature in its own right ("fur" for a fox).
      for (const feature of subjectFeatures(analysis.head, analysis.subjectClass)) index.addAssociation(subject, feature, SEED_FEATURE_ASSOCIATION);
      const noRepeat = (candidate: DetailCandidate) => dedupeKeys(candidate.text).every((key) => !userKeys.has(key)) && fitsScene(sceneOf(candidate.text), analysis.scene);
      for (const kind of ["lighting", "composition"] as const) {
        details[kind] = index.rank(kind, topic, subject, CANDIDATES_PER_KIND, noRepeat).map((candidate) => candidate.text);
      }
      // Quality lines split in two: subject features ("detailed fur": a detail word and the feature)
      // and general quality terms. Many say "detailed" in some way and drop out once one is used:
      // keep plenty.
      const quality = index.rank("quality", topic, subject, CANDIDATES_PER_KIND * 4, noRepeat);
      details.feature = quality
        .filter((candidate) => candidate.feature !== undefined && /\b(?:detail|detailed|details|intricate)\b/i.test(candidate.text))
        .map((candidate) => candidate.text)
        .slice(0, CANDIDATES_PER_KIND);
      details.quality = quality.filter((candidate) => candidate.feature === undefined).map((candidate) => candidate.text);
      if (needsMedium(analysis, style)) mediums = this.rankMediums(topic, subject, userKeys);
    } else {
      details.lighting = info.fallback.lighting.filter((term) => dedupeKeys(term).every((key) => !userKeys.has(key)));
      details.composition = info.fallback.composition.filter((term) => dedupeKeys(term).every((key) => !userKeys.has(key)));
      details.quality = info.fallback.quality.filter((term) => dedupeKeys(term).every((key) => !userKeys.has(key)));
    }
    return { analysis, style, mood, budget, userKeys, details, mediums };
  }

  /** Default mediums by relevance: cosine with both associations plus the popularity prior. */
  private rankMediums(topic: Associations, subject: Associations, userKeys: Set<string>): string[] {
    const index = this.index!;
    const merged: Associations = new Map(topic);
    for (const [key, weight] of subject) merged.set(key, (merged.get(key) ?? 0) + weight);
    return DEFAULT_MEDIUMS.filter((medium) => dedupeKeys(medium).every((key) => !userKeys.has(key)))
      .map((medium) => ({ medium, score: index.cosine(merged, bareMedium(medium)) + this.mediumPrior(medium) }))
      .sort((a, b) => b.score - a.score)
      .map(({ medium }) => medium);
  }

  /** Popularity prior of a default medium: the position of its bare name in flavors.txt. */
  private mediumPrior(medium: string): number {
    let prior = this.mediumPriors.get(medium);
    if (prior === undefined) {
      const index = this.index!;
      prior = index.prior(index.rankOf(bareMedium(medium)) ?? index.stats.lines);
      this.mediumPriors.set(medium, prior);
    }
    return prior;
  }

  private variant(context: RequestContext, random: () => number, used: Map<string, Set<string>>, maxTokens: number): ImprovedVariant {
    const { analysis, style, mood } = context;
    const choose = (slot: string, candidates: readonly string[], accept: (text: string) => boolean): string | undefined => {
      const fitting = candidates.filter(accept).slice(0, CHOICE_WIDTH);
      if (fitting.length === 0) return undefined;
      const previous = used.get(slot) ?? new Set<string>();
      const fresh = fitting.filter((text) => !previous.has(text));
      const pool = fresh.length > 0 ? fresh : fitting;
      const picked = pool[pickRanked(pool.length, random)]!;
      previous.add(picked);
      used.set(slot, previous);
      return picked;
    };

    const accepted: Slot[] = [];
    const keys = new Set(context.userKeys);
    const scene: Scene = new Map([...analysis.scene].map(([group, values]) => [group, new Set(values)]));
    let families: Set<MediumFamily> | undefined = allowedFamilies(analysis, style);

    // Tries to add a slot: no repeated word, no contradiction, within the token budget.
    const tryAdd = (slot: Slot | undefined): boolean => {
      if (!slot) return false;
      const slotKeys = dedupeKeys(slot.text);
      if (!slot.user && slotKeys.some((key) => keys.has(key))) return false;
      const slotScene = sceneOf(slot.text);
      if (!slot.user && !fitsScene(slotScene, scene)) return false;
      if (!slot.user && slot.piece === "detail" && slot.section !== "medium" && !slot.lead && !fitsFamilies(slot.text, families)) return false;
      if (!slot.user && !fitsSubject(slotKeys, analysis)) return false;
      if (this.counter.count(assemble(analysis.text, [...accepted, slot])) > context.budget) return false;
      accepted.push(slot);
      for (const key of slotKeys) keys.add(key);
      extendScene(scene, slotScene);
      return true;
    };
    const fresh = (text: string) => dedupeKeys(text).every((key) => !keys.has(key)) && fitsScene(sceneOf(text), scene);
    const fitting = (text: string) => fresh(text) && fitsFamilies(text, families) && fitsSubject(dedupeKeys(text), analysis);

    // 1. The user's own style and mood text, as written.
    for (const text of userText(style)) tryAdd({ section: "userStyle", text, piece: "style", user: true });
    for (const text of userText(mood)) tryAdd({ section: "userMood", text, piece: "mood", user: true });

    // 2. The medium: the style's lead phrase, or a default medium chosen for the subject.
    const preset = style.kind === "preset" || style.kind === "contains" ? style.preset : undefined;
    const userFramedMedium = analysis.families.size > 0;
    if (preset && !userFramedMedium) {
      tryAdd(mediumSlot(preset.lead, analysis, "style"));
    } else if (!preset && context.mediums.length > 0) {
      const medium = choose("medium", context.mediums, fresh);
      if (medium && tryAdd(mediumSlot(`${medium} of`, analysis, "detail"))) families = withRealism(familiesOf(medium));
    }

    // 3. Style terms: the first is the preset's signature, the rest vary with the seed.
    const styleTerms = preset ? [preset.terms[0]!, ...shuffled(preset.terms.slice(1), random)] : [];
    const moodPreset = mood.kind === "preset" || mood.kind === "contains" ? mood.preset : undefined;
    const moodPick = (slot: string, terms: readonly string[] | undefined) => (terms ? choose(slot, terms, fresh) : undefined);
    const detail = (kind: DetailKind | "feature") => choose(kind, context.details[kind], fitting);

    // 4. The remaining slots, most important first.
    const order: (() => Slot | undefined)[] = [
      () => styleTerm(styleTerms[0]),
      () => detailSlot("feature", detail("feature")),
      () => moodSlot(moodPick("atmosphere", moodPreset?.atmosphere)),
      () => moodSlot(moodPick("mood-lighting", moodPreset?.lighting)),
      () => styleTerm(styleTerms[1]),
      () => detailSlot("lighting", detail("lighting")),
      () => moodSlot(moodPick("color", moodPreset?.color)),
      () => (userFramed(analysis) ? undefined : detailSlot("composition", detail("composition"))),
      () => detailSlot("quality", detail("quality")),
      () => styleTerm(styleTerms[2]),
      () => detailSlot("quality", detail("quality")),
      () => styleTerm(styleTerms[3]),
      () => moodSlot(moodPick("atmosphere-2", moodPreset?.atmosphere)),
    ];
    for (const next of order) tryAdd(next());

    const prompt = assemble(analysis.text, accepted);
    const negativePrompt = this.negativePrompt(analysis, style, mood, families, maxTokens, prompt);
    return {
      prompt,
      negativePrompt,
      subject: analysis.subject,
      styleTerms: accepted.filter((slot) => slot.piece === "style").map((slot) => termOf(slot)),
      moodTerms: accepted.filter((slot) => slot.piece === "mood").map((slot) => termOf(slot)),
      detailTerms: accepted.filter((slot) => slot.piece === "detail").map((slot) => termOf(slot)),
      tokens: this.countTokens(prompt),
    };
  }

  /**
   * The negative prompt: the style's and mood's own negatives, then general quality, artefact,
   * anatomy (for subjects with bodies) and medium terms, none contradicting the positive prompt.
   */
  private negativePrompt(
    analysis: PromptAnalysis,
    style: PresetMatch<StylePreset>,
    mood: PresetMatch<MoodPreset>,
    families: Set<MediumFamily> | undefined,
    maxTokens: number,
    positive: string,
  ): string {
    const positiveKeys = new Set(dedupeKeys(positive));
    const monochrome = /\b(?:black and white|monochrome|noir|grayscale|greyscale|b&w)\b/i.test(positive);
    const wantsText = /["“”]|\b(?:text|sign|letters?|words?|typography|logo|says|writing|caption|title|poster)\b/i.test(analysis.text);
    const anatomy = SUBJECT_CLASS_INFO[analysis.subjectClass].anatomy;
    const ownTerms: string[] = [];
    if (style.kind === "preset" || style.kind === "contains") ownTerms.push(...style.preset.negative);
    if (mood.kind === "preset" || mood.kind === "contains") ownTerms.push(...mood.preset.negative);
    const general: { term: string; group: NegativeGroup }[] = [];
    const groupOrder: NegativeGroup[] = ["quality", "artefact", "anatomy", "human", "medium"];
    for (const group of groupOrder) {
      if (group === "anatomy" && !anatomy) continue;
      if (group === "human" && analysis.subjectClass !== "person") continue;
      for (const { term, group: termGroup } of this.negativeTerms) {
        if (termGroup !== group) continue;
        if (term === "text" && wantsText) continue;
        if (group === "medium") {
          // Unknown medium: say nothing about media rather than forbid the one the user wants.
          if (!families || families.size === 0) continue;
          if ((MEDIUM_NEGATIVE_FAMILIES[term] ?? []).some((family) => families.has(family as MediumFamily))) continue;
          if (term === "b&w" && monochrome) continue;
        }
        general.push({ term, group });
      }
    }
    const chosen: string[] = [];
    const perGroup = new Map<NegativeGroup, number>();
    const keys = new Set<string>();
    const budget = this.contentBudget(maxTokens);
    const add = (term: string, group?: NegativeGroup) => {
      const termKeys = dedupeKeys(term);
      if (termKeys.some((key) => positiveKeys.has(key))) return;
      if (termKeys.length > 0 && termKeys.every((key) => keys.has(key))) return;
      if (chosen.includes(term)) return;
      if (group && (perGroup.get(group) ?? 0) >= NEGATIVE_GROUP_LIMITS[group]) return;
      if (this.counter.count([...chosen, term].join(", ")) > budget) return;
      chosen.push(term);
      if (group) perGroup.set(group, (perGroup.get(group) ?? 0) + 1);
      for (const key of termKeys) keys.add(key);
    };
    for (const term of ownTerms) add(term);
    for (const { term, group } of general) add(term, group);
    return chosen.join(", ");
  }

  /** Content tokens allowed for `maxTokens` (markers excluded; an estimate keeps a margin). */
  private contentBudget(maxTokens: number): number {
    return Math.floor((maxTokens - CLIP_SPECIAL_TOKENS) * (this.counter.kind === "exact" ? 1 : 1 - APPROXIMATE_MARGIN));
  }
}

function validate(request: ImproveRequest, defaultMaxTokens: number): { prompt: string; variantCount: number; maxTokens: number } {
  const prompt = request.prompt ?? "";
  if (prompt.trim().length === 0 || prompt.length > MAX_PROMPT_CHARACTERS) {
    throw new AtelierError("INVALID_INPUT", `Expected text of 1 to ${MAX_PROMPT_CHARACTERS} characters for prompt but received ${prompt.trim().length === 0 ? "empty text" : `${prompt.length} characters`}.`, {
      issues: [{ path: "prompt", message: `Expected 1 to ${MAX_PROMPT_CHARACTERS} characters.` }],
    });
  }
  for (const field of ["style", "mood"] as const) {
    if ((request[field] ?? "").length > MAX_STYLE_CHARACTERS) {
      throw new AtelierError("INVALID_INPUT", `Expected at most ${MAX_STYLE_CHARACTERS} characters for ${field} but received ${request[field].length}.`, {
        issues: [{ path: field, message: `Expected at most ${MAX_STYLE_CHARACTERS} characters.` }],
      });
    }
  }
  const variants = request.variants === 0 ? 1 : request.variants;
  if (!Number.isInteger(variants) || variants < 1 || variants > MAX_VARIANTS) {
    throw new AtelierError("INVALID_INPUT", `Expected integer between 1 and ${MAX_VARIANTS} for variants but received ${request.variants}.`, {
      issues: [{ path: "variants", message: `Expected integer between 1 and ${MAX_VARIANTS}.` }],
    });
  }
  const maxTokens = request.maxTokens === 0 ? defaultMaxTokens : request.maxTokens;
  if (!Number.isInteger(maxTokens) || maxTokens < MIN_MAX_TOKENS || maxTokens > MAX_MAX_TOKENS) {
    throw new AtelierError("INVALID_INPUT", `Expected integer between ${MIN_MAX_TOKENS} and ${MAX_MAX_TOKENS} for maxTokens but received ${request.maxTokens}.`, {
      issues: [{ path: "maxTokens", message: `Expected integer between ${MIN_MAX_TOKENS} and ${MAX_MAX_TOKENS}.` }],
    });
  }
  return { prompt, variantCount: variants, maxTokens };
}

/** The user's style or mood text to keep as written ("" when a preset name was all there was). */
function userText(match: PresetMatch<{ id: string }>): string[] {
  return match.kind === "free" || match.kind === "contains" ? [match.text] : [];
}

/** Words that describe the style for the relevance query. */
function styleWords(match: PresetMatch<StylePreset>): string[] {
  if (match.kind === "none") return [];
  if (match.kind === "free") return contentKeys(match.text);
  return [...new Set([...contentKeys(match.preset.name), ...(match.kind === "contains" ? contentKeys(match.text) : [])])];
}

function moodWords(match: PresetMatch<MoodPreset>): string[] {
  if (match.kind === "none") return [];
  if (match.kind === "free") return contentKeys(match.text);
  return [...new Set([...contentKeys(match.preset.name), ...match.preset.aliases.slice(0, 2).flatMap(contentKeys)])];
}

/** A medium is chosen only when neither the style nor the user's words settle it. */
function needsMedium(analysis: PromptAnalysis, style: PresetMatch<StylePreset>): boolean {
  return style.kind === "none" && analysis.families.size === 0;
}

/** Families detail terms may imply; an empty set allows only medium-neutral terms. */
function allowedFamilies(analysis: PromptAnalysis, style: PresetMatch<StylePreset>): Set<MediumFamily> {
  const allowed = new Set(analysis.families);
  if (style.kind === "preset" || style.kind === "contains") for (const family of style.preset.families) allowed.add(family);
  if (style.kind === "free" || style.kind === "contains") for (const family of familiesOf(style.text)) allowed.add(family);
  return withRealism(allowed);
}

/** "Realistic" suits photographs, renders and sculpture (and the styles that list it), not drawings or pixels. */
function withRealism(families: Set<MediumFamily>): Set<MediumFamily> {
  if (["photo", "render3d", "sculpture"].some((family) => families.has(family as MediumFamily))) families.add("realism");
  return families;
}

/** Framing words: a user who chose the framing ("portrait of", "aerial view") gets no other. */
const FRAMING_WORDS = new Set(["portrait", "closeup", "headshot", "shot", "view", "angle", "panorama", "panoramic", "macro", "aerial", "wide", "body", "perspective", "selfie"]);

function userFramed(analysis: PromptAnalysis): boolean {
  return dedupeKeys(analysis.text).some((key) => FRAMING_WORDS.has(key));
}

/** Words about bodies and faces: framing and details that only suit subjects with a body. */
const BODY_WORDS = new Set(["portrait", "body", "headshot", "bust", "face", "head", "profile", "shoulder", "torso", "selfie", "eye", "pose", "anatomy"]);

/** A term fits the subject unless it frames or details a body the subject does not have. */
function fitsSubject(keys: readonly string[], analysis: PromptAnalysis): boolean {
  return SUBJECT_CLASS_INFO[analysis.subjectClass].anatomy || !keys.some((key) => BODY_WORDS.has(key));
}

/** The medium phrase leads the prompt when it reads as a noun phrase, else becomes a term. */
function mediumSlot(lead: string, analysis: PromptAnalysis, piece: "style" | "detail"): Slot {
  if (analysis.leadable) return { section: "lead", text: lead, piece, lead: true };
  return { section: piece === "style" ? "style" : "medium", text: bareMedium(lead), piece };
}

/** "a watercolor painting of" → "watercolor painting". */
function bareMedium(lead: string): string {
  return lead.replace(/^(?:a|an)\s+/i, "").replace(/\s+of$/i, "");
}

function styleTerm(text: string | undefined): Slot | undefined {
  return text === undefined ? undefined : { section: "style", text, piece: "style" };
}

function moodSlot(text: string | undefined): Slot | undefined {
  return text === undefined ? undefined : { section: "mood", text, piece: "mood" };
}

function detailSlot(section: "feature" | "lighting" | "composition" | "quality", text: string | undefined): Slot | undefined {
  return text === undefined ? undefined : { section, text, piece: "detail" };
}

/** How a slot is reported among the pieces: a lead without its article and "of". */
function termOf(slot: Slot): string {
  return slot.lead ? bareMedium(slot.text) : slot.text;
}

/** The prompt in reading order: lead + the user's words, then the sections. */
function assemble(userPrompt: string, slots: readonly Slot[]): string {
  const lead = slots.find((slot) => slot.lead);
  const head = lead ? `${lead.text} ${userPrompt}` : userPrompt;
  const tail = SECTION_ORDER.flatMap((section) => slots.filter((slot) => !slot.lead && slot.section === section).map((slot) => slot.text));
  return [head, ...tail].join(", ");
}

/**
 * Words that name a style, movement or medium (presets, movements.txt, medium markers): a detail
 * built on one of them would change the style the user chose, not describe the subject.
 */
function styleWordKeys(lists: ModifierLists): Set<string> {
  const keys = new Set<string>();
  const names = [...STYLE_PRESETS.flatMap((preset) => [preset.id, preset.name, ...preset.aliases]), ...lists.movements, ...lists.mediums];
  for (const name of names) for (const key of contentKeys(name.replace(/-/g, " "))) keys.add(key);
  for (const key of ["cyberpunk", "steampunk", "dieselpunk", "solarpunk", "vaporwave", "synthwave", "fantasy", "scifi", "sci-fi", "anime", "manga", "cartoon", "gothic", "noir", "surreal", "surrealist", "psychedelic"]) keys.add(key);
  return keys;
}

/** General negative terms: the project's list merged with negative.txt's usable lines. */
function negativeVocabulary(lists: ModifierLists | undefined): { term: string; group: NegativeGroup }[] {
  const terms = [...BASE_NEGATIVE];
  for (const line of lists?.negative ?? []) {
    const group = NEGATIVE_FILE_GROUPS[line.toLowerCase()];
    if (group && !terms.some((known) => known.term === line.toLowerCase())) terms.push({ term: line.toLowerCase(), group });
  }
  return terms;
}
