/**
 * Understanding the user's prompt with the `compromise` NLP library: its words with their parts
 * of speech, the subject (the first noun phrase that is not a framing word like "portrait of" or
 * an instruction like "draw me"), the subject's head noun and class, and whether the prompt reads
 * as a noun phrase that a medium can lead ("a watercolor painting of" + "a fox in the snow").
 */
import nlp from "compromise";
import { familiesOf, type MediumFamily } from "./medium-families.js";
import { sceneOf, type Scene } from "./scene-constraints.js";
import { classOfNoun, type SubjectClass } from "./subject-classes.js";
import { STOPWORDS, termKey } from "./term-keys.js";

export type WordRole = "noun" | "verb" | "adjective" | "other";

export interface AnalysedWord {
  /** As written. */
  text: string;
  /** Term key (term-keys.ts). */
  key: string;
  role: WordRole;
  /** Lemma from the NLP library (singular noun, infinitive verb), lower case. */
  lemma: string;
}

export interface PromptAnalysis {
  /** The prompt as it will appear: whitespace collapsed, a trailing full stop or comma dropped. */
  text: string;
  /** Content words in order (stopwords left out). */
  words: AnalysedWord[];
  /** Keys of the content words, and of their lemmas. */
  keys: Set<string>;
  /** The subject noun phrase as written ("a fluffy ginger cat"); the whole prompt if none is found. */
  subject: string;
  /** Key of the subject's head noun ("cat"), "" when there is no noun. */
  head: string;
  subjectClass: SubjectClass;
  /** The prompt starts as a noun phrase, so "a photograph of" may lead it. */
  leadable: boolean;
  /** Medium families the user's own words imply ("a photo of …" → photo). */
  families: Set<MediumFamily>;
  /** Time of day, season, weather the user stated. */
  scene: Scene;
}

/** Nouns that frame a picture rather than name its subject: "portrait of", "a photo of". */
const FRAMING = new Set(
  (
    "portrait painting photo photograph picture image illustration drawing sketch render rendering closeup close-up shot " +
    "view scene still poster artwork art concept study silhouette vision depiction panorama landscape-of"
  ).split(" "),
);

/** Instructions in front of the idea: "draw me a dragon", "create an image of …". */
/** Prepositions the tagger sometimes labels otherwise ("sunset over the ocean"). */
const PREPOSITIONS = new Set(
  "of in on at by with from to for over above under below across near beside behind through into onto upon within beneath atop among amid along around inside outside against toward towards past beyond during via".split(" "),
);

/** Containers and quantities: in "a bowl of ramen" the phrase goes on to the contents, which are the head. */
const CONTAINERS = new Set(
  (
    "bowl cup mug glass plate pile heap group herd flock bunch basket jar bottle stack slice piece box pair couple crowd army " +
    "pack swarm bouquet field sea forest row handful cluster set collection school family " +
    // Parts and places of a thing: "the surface of a planet", "the ruins of a castle".
    "surface top edge middle center centre depths heart ruins remains shore bottom inside outskirts corner end interior streets"
  )
    .split(" ")
    .map(termKey),
);

const INSTRUCTION_VERBS = new Set("draw paint create make generate show render imagine design give depict illustrate sketch picture visualize visualise produce".split(" "));

interface Term {
  text: string;
  normal: string;
  tags: Set<string>;
  root: string;
  post: string;
}

export function analysePrompt(prompt: string): PromptAnalysis {
  const text = prompt.replace(/\s+/g, " ").trim().replace(/[.,;:]+$/, "").trim();
  const doc = nlp(text);
  doc.compute("root");
  const terms: Term[] = [];
  for (const sentence of doc.json() as { terms: { text: string; normal: string; tags: string[]; root?: string; post: string }[] }[]) {
    for (const term of sentence.terms) {
      terms.push({ text: term.text, normal: term.normal, tags: new Set(term.tags), root: term.root ?? term.normal, post: term.post });
    }
  }

  const analysed: AnalysedWord[] = [];
  for (const term of terms) {
    const key = termKey(term.text);
    if (key === "" || STOPWORDS.has(key)) continue;
    analysed.push({ text: term.text, key, role: roleOf(term), lemma: term.root.toLowerCase() });
  }
  const keys = new Set<string>();
  for (const word of analysed) {
    keys.add(word.key);
    const lemmaKey = termKey(word.lemma);
    if (lemmaKey !== "" && !STOPWORDS.has(lemmaKey)) keys.add(lemmaKey);
  }

  const { subject, head, start } = findSubject(terms);
  const subjectClass = classify(head, terms, analysed);
  const first = terms[0];
  const leadable =
    first !== undefined &&
    start === 0 &&
    !terms.slice(0, 3).some((term) => FRAMING.has(termKey(term.text))) &&
    !/[.!?]\s/.test(text) &&
    (first.tags.has("Determiner") || first.tags.has("Noun") || first.tags.has("Adjective") || first.tags.has("Value")) &&
    !first.tags.has("Pronoun") &&
    !first.tags.has("Preposition");

  return {
    text,
    words: analysed,
    keys,
    subject: subject || text,
    head,
    subjectClass,
    leadable,
    families: familiesOf(text),
    scene: sceneOf(text),
  };
}

function roleOf(term: Term): WordRole {
  if (term.tags.has("Noun") && !term.tags.has("Gerund")) return "noun";
  if (term.tags.has("Verb")) return "verb";
  if (term.tags.has("Adjective")) return "adjective";
  return "other";
}

/**
 * The first noun phrase after any instruction ("draw me") or framing ("portrait of"): its words
 * from the first determiner, number, adjective or noun up to a preposition, verb, conjunction or
 * comma; its head is the last noun. Compromise tags a gerund after a noun ("men playing chess")
 * as a noun, so an -ing word ends the phrase once it has a noun.
 */
function findSubject(terms: Term[]): { subject: string; head: string; start: number } {
  let i = 0;
  // Instructions: a leading imperative verb and the pronouns and "an image of" that follow it.
  if (terms[0] && INSTRUCTION_VERBS.has(terms[0].normal) && !terms[0].tags.has("Determiner")) {
    i = 1;
    while (i < terms.length && (terms[i]!.tags.has("Pronoun") || terms[i]!.normal === "for")) i++;
  }
  // Framing: "[a] [detailed] portrait of", "a photo of".
  for (let j = i; j < Math.min(terms.length, i + 4); j++) {
    const term = terms[j]!;
    if (FRAMING.has(termKey(term.text)) && terms[j + 1]?.normal === "of") {
      i = j + 2;
      break;
    }
    if (!term.tags.has("Determiner") && !term.tags.has("Adjective")) break;
  }
  const start = i;
  while (i < terms.length && !isPhraseWord(terms[i]!)) i++;
  const phrase: Term[] = [];
  let head = "";
  for (; i < terms.length; i++) {
    const term = terms[i]!;
    if (term.normal === "of" && CONTAINERS.has(head) && i + 1 < terms.length && !/[,;:.!?]/.test(phrase[phrase.length - 1]?.post ?? "")) {
      phrase.push(term);
      continue;
    }
    if (!isPhraseWord(term)) break;
    if (head !== "" && /ing$/i.test(term.normal) && !classOfNoun(termKey(term.text))) break;
    phrase.push(term);
    if (term.tags.has("Noun") && !term.tags.has("Pronoun")) head = termKey(term.text);
    if (/[,;:.!?]/.test(term.post)) break;
  }
  if (head === "") {
    const noun = terms.find((term) => term.tags.has("Noun") && !term.tags.has("Pronoun"));
    return { subject: "", head: noun ? termKey(noun.text) : "", start };
  }
  // Trim trailing adjectives and determiners: the phrase ends at its head noun.
  while (phrase.length > 0 && !(phrase[phrase.length - 1]!.tags.has("Noun"))) phrase.pop();
  return { subject: phrase.map((term, index) => term.text + (index < phrase.length - 1 ? " " : "")).join(""), head, start };
}

function isPhraseWord(term: Term): boolean {
  if (term.tags.has("Pronoun") || term.tags.has("Preposition") || term.tags.has("Conjunction") || PREPOSITIONS.has(term.normal)) return false;
  if (term.tags.has("Verb") && !term.tags.has("Noun") && !term.tags.has("Adjective")) return false;
  return term.tags.has("Determiner") || term.tags.has("Adjective") || term.tags.has("Noun") || term.tags.has("Value") || term.tags.has("Possessive");
}

/** The head's class; else the first classified noun; a noun the library knows as a person makes a person. */
function classify(head: string, terms: Term[], words: AnalysedWord[]): SubjectClass {
  const direct = classOfNoun(head);
  if (direct) return direct;
  const headTerm = terms.find((term) => termKey(term.text) === head);
  if (headTerm && (headTerm.tags.has("Person") || headTerm.tags.has("Actor") || headTerm.tags.has("FirstName"))) return "person";
  for (const word of words) {
    const found = word.role === "noun" ? (classOfNoun(word.key) ?? classOfNoun(termKey(word.lemma))) : undefined;
    if (found) return found;
  }
  return "object";
}
