/**
 * Turning a chat model's answer into one usable prompt line. Models wrap the answer in chatter
 * ("Sure! Here is an improved prompt:"), reasoning (`<think>…</think>`), markdown (bold labels,
 * bullets, code fences), quotes, alternatives and explanations. The cleaner removes all of that
 * and keeps the one line that is the prompt: the line (after labels and markup are stripped) that
 * shares the most words with the user's idea, the longer one on a tie.
 */
import { dedupeKeys } from "./dedupe-keys.js";

/** Lines that are talk about the prompt, not the prompt. */
const CHATTER = [
  /^(?:sure|certainly|of course|okay|ok|absolutely|great|alright|here(?:'s| is| are)|below is|i(?:'ve| have)|i hope|i can|let me|feel free|note\b|this (?:prompt|version|improved)|the (?:prompt|improved prompt) (?:above|below|emphasi[sz]es|adds|keeps|uses)|explanation|why this works|changes|tips?\b|hope this|enjoy|happy (?:creating|generating))/i,
  /^(?:negative prompt|negative)\s*[:：-]/i,
  /^(?:\*\*)?(?:style|mood|settings?|parameters?|steps|cfg|sampler|seed|size|aspect ratio)(?:\*\*)?\s*[:：]/i,
];

/** A label in front of the prompt on the same line: "Prompt:", "**Improved prompt:**", "Final:". */
const LABEL = /^(?:\*\*|__)?(?:final |improved |enhanced |refined |positive |new |rewritten |image |your )?(?:prompt|version|result|answer|output)(?: \d+)?(?:\*\*|__)?\s*[:：-]\s*(?:\*\*|__)?\s*/i;

export interface CleanOptions {
  /** The user's prompt: the line sharing most of its words wins. */
  userPrompt: string;
}

/** The cleaned single line, or "" when nothing usable is left. */
export function cleanLlmOutput(raw: string, options: CleanOptions): string {
  let text = raw.replace(/\r\n?/g, "\n");
  text = text.replace(/<think>[\s\S]*?<\/think>/gi, "").replace(/^[\s\S]*<\/think>/i, "");
  text = text.replace(/```[a-z]*\n?/gi, "\n");
  const userKeys = new Set(dedupeKeys(options.userPrompt));
  const candidates: { line: string; shared: number }[] = [];
  for (const rawLine of text.split("\n")) {
    let line = stripMarkup(rawLine);
    const labelled = LABEL.test(line);
    line = stripMarkup(line.replace(LABEL, ""));
    if (line === "") continue;
    if (!labelled && CHATTER.some((pattern) => pattern.test(line))) {
      // "Here is the prompt: a cat …" carries the prompt after its colon.
      const afterColon = /[:：]\s*(.+)$/.exec(line)?.[1];
      if (!afterColon || CHATTER.some((pattern) => pattern.test(afterColon))) continue;
      line = stripMarkup(afterColon);
      if (line === "") continue;
    }
    const keys = new Set(dedupeKeys(line));
    let shared = 0;
    for (const key of userKeys) if (keys.has(key)) shared++;
    candidates.push({ line, shared });
  }
  candidates.sort((a, b) => b.shared - a.shared || b.line.length - a.line.length);
  return candidates[0]?.line ?? "";
}

/** Markdown, list markers, surrounding quotes, stray whitespace and the final full stop. */
function stripMarkup(line: string): string {
  let out = line
    .replace(/^\s*(?:>+|#+|[-*+•]|\d+[.)])\s+/, "")
    .replace(/(\*\*|__)(.*?)\1/g, "$2")
    .replace(/(?<![\w*])\*(?!\s)([^*]+?)\*(?![\w*])/g, "$1")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
  // Surrounding quotes, possibly more than one pair, possibly unbalanced at one end.
  for (let i = 0; i < 3; i++) {
    const unquoted = out.replace(/^["'“”‘’«»`]+|["'“”‘’«»`]+$/g, "").trim();
    if (unquoted === out) break;
    out = unquoted;
  }
  return out.replace(/[.。]+$/, "").trim();
}
