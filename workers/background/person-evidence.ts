/**
 * Whether a picture shows a person, read from the selfie model's own matte at its 256 x 256 input:
 * on a person it is decided almost everywhere (the body near 1, the rest near 0, a thin band between)
 * and has a person's outline, a head narrower than the shoulders below it; on a picture without one
 * it finds little, or a blob it is unsure of (a cat, a cup on a busy background), or, on a plain
 * background, an object it is sure of but whose top is as wide as the rest (a cup on its saucer).
 * The thresholds are the ones that separate the photographs and composites of
 * bench/background-choice.ts. Where the model is unsure of a person its matte is also the worse one
 * there, so the general model takes those too: a miss costs time, never quality.
 */
import type { FloatPlanes } from "./box-filter.js";

export interface PersonEvidence {
  /** Share of the picture the model calls foreground (above 0.5). */
  area: number;
  /** Mean probability over that foreground. */
  confidence: number;
  /** Mean of 4p(1 - p) over the picture: 0 where every pixel is decided, 1 where none is. */
  doubt: number;
  /** Width of the foreground a tenth of the way down from its top, against its widest row: a head is narrow. */
  headWidth: number;
}

/** A person fills at least this share of the picture before the people model is trusted with it. */
export const MIN_PERSON_AREA = 0.03;
/** The foreground is a person when the model is at least this sure of it on average... */
export const MIN_PERSON_CONFIDENCE = 0.95;
/** ...and this sure of the picture as a whole... */
export const MAX_PERSON_DOUBT = 0.07;
/** ...and its top is at most this wide against its widest row. */
export const MAX_HEAD_WIDTH = 0.46;

export function personEvidence(matte: FloatPlanes): PersonEvidence {
  const { width, height, data } = matte;
  let foreground = 0;
  let sum = 0;
  let doubt = 0;
  const rowWidths = new Array<number>(height).fill(0);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const value = data[y * width + x]!;
      if (value > 0.5) {
        foreground++;
        sum += value;
        rowWidths[y]!++;
      }
      doubt += 4 * value * (1 - value);
    }
  }
  const top = rowWidths.findIndex((count) => count > 0);
  let headWidth = 1;
  if (top >= 0) {
    let bottom = height - 1;
    while (rowWidths[bottom] === 0) bottom--;
    headWidth = rowWidths[top + Math.round(0.1 * (bottom - top))]! / Math.max(...rowWidths);
  }
  const pixels = width * height;
  return { area: foreground / pixels, confidence: foreground > 0 ? sum / foreground : 0, doubt: doubt / pixels, headWidth };
}

export function showsPerson(evidence: PersonEvidence): boolean {
  return (
    evidence.area >= MIN_PERSON_AREA &&
    evidence.confidence >= MIN_PERSON_CONFIDENCE &&
    evidence.doubt <= MAX_PERSON_DOUBT &&
    evidence.headWidth <= MAX_HEAD_WIDTH
  );
}
