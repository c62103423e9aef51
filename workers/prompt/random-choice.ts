/**
 * Reproducible choices over core/seeded-random: the same seed gives the same picks on every machine
 * and Node version.
 */

/** Mixes a seed with a stream number (the variant index) so each variant has its own sequence. */
export function streamSeed(seed: number, stream: number): number {
  let h = (seed ^ Math.imul(stream + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Picks an index among candidates ordered best first, with probability decreasing geometrically
 * (each next candidate half as likely as the one before): variation stays among the top few.
 */
export function pickRanked(count: number, random: () => number, decay = 0.5): number {
  if (count <= 1) return 0;
  let total = 0;
  for (let i = 0; i < count; i++) total += decay ** i;
  let r = random() * total;
  for (let i = 0; i < count; i++) {
    r -= decay ** i;
    if (r < 0) return i;
  }
  return count - 1;
}

/** Fisher–Yates shuffle of a copy. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
