/**
 * Start-up time and memory of the builtin prompt engine: reading the prompt-modifier lists,
 * building the relevance index, loading the CLIP merge list, and the retained heap afterwards.
 *
 *   node --expose-gc --import tsx scripts/prompt-engine-stats.ts [runs]
 *
 * Each run is a fresh child process (a warm process would hide module loading and JIT warm-up);
 * prints one JSON line per run and the medians. Reads from the model mirror (ATELIER_MODEL_MIRROR).
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { modelMirror } from "../test/support/test-assets.js";

interface RunStats {
  importMs: number;
  listsMs: number;
  indexMs: number;
  tokenizerMs: number;
  engineMs: number;
  heapMiB: number;
  rssMiB: number;
  firstRequestMs: number;
  requestMs: number;
}

async function measure(): Promise<RunStats> {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  const mirror = modelMirror;
  const folder = path.join(mirror, "prompt-modifiers");
  const merges = path.join(mirror, "clip-bpe-vocab", "bpe_simple_vocab_16e6.txt.gz");
  let t = performance.now();
  const { BuiltinPromptEngine } = await import("../workers/prompt/builtin-engine.js");
  const { readModifierLists } = await import("../workers/prompt/modifier-lists.js");
  const { RelevanceIndex } = await import("../workers/prompt/relevance-index.js");
  const { ExactClipCounter } = await import("../workers/prompt/clip-tokens.js");
  const importMs = performance.now() - t;
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const rss0 = process.memoryUsage().rss;
  // The engine as the service builds it: lists, index, token counter, in one go.
  t = performance.now();
  const engine = new BuiltinPromptEngine({ modifiersFolder: folder, clipMergesFile: merges });
  const engineMs = performance.now() - t;
  gc();
  const heapMiB = (process.memoryUsage().heapUsed - heap0) / 2 ** 20;
  const rssMiB = (process.memoryUsage().rss - rss0) / 2 ** 20;
  t = performance.now();
  engine.improve({ prompt: "a cat on a roof", style: "cinematic", mood: "calm", seed: 1, variants: 1, maxTokens: 0 });
  const firstRequestMs = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < 50; i++) engine.improve({ prompt: "a lighthouse in a storm", style: i % 2 ? "watercolour" : "", mood: "dramatic", seed: i, variants: 1, maxTokens: 0 });
  const requestMs = (performance.now() - t) / 50;
  // The parts on their own (warm now, so slightly faster than inside the engine's first build).
  t = performance.now();
  const lists = readModifierLists(folder)!;
  const listsMs = performance.now() - t;
  t = performance.now();
  new RelevanceIndex(lists.flavors, lists.artists);
  const indexMs = performance.now() - t;
  t = performance.now();
  ExactClipCounter.fromMergesFile(merges);
  const tokenizerMs = performance.now() - t;
  return { importMs, listsMs, indexMs, tokenizerMs, engineMs, heapMiB, rssMiB, firstRequestMs, requestMs };
}

function median(values: number[]): number {
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  if (process.env.PROMPT_STATS_CHILD) {
    process.stdout.write(JSON.stringify(await measure()));
    return;
  }
  const runs = Number(process.argv[2] ?? 5);
  const self = fileURLToPath(import.meta.url);
  const results: RunStats[] = [];
  for (let i = 0; i < runs; i++) {
    const out = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", self], { env: { ...process.env, PROMPT_STATS_CHILD: "1" }, encoding: "utf8" });
    const stats = JSON.parse(out.trim().split("\n").pop()!) as RunStats;
    results.push(stats);
    console.log(JSON.stringify(Object.fromEntries(Object.entries(stats).map(([key, value]) => [key, Math.round(value * 10) / 10]))));
  }
  const medians = Object.fromEntries(
    (Object.keys(results[0]!) as (keyof RunStats)[]).map((key) => [key, Math.round(median(results.map((run) => run[key])) * 10) / 10]),
  );
  console.log("median", JSON.stringify(medians));
}

await main();
