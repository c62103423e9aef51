/**
 * What ran during given stretches of a process's life, from its V8 CPU profile (`--cpu-prof`): the
 * samples taken inside each stretch, grouped by the innermost frame worth naming (a frame of
 * node's own buffer, stream or event code is named with the caller that reached it). The router
 * event-loop bench names its worst blocks this way. Profile timestamps and process.hrtime() both
 * read the monotonic clock, in microseconds here.
 */
import fs from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Stretch {
  startUs: number;
  endUs: number;
}

/** Frames of node's own plumbing: named through the caller that reached them. */
const PLUMBING = /^node:|^$|\/node_modules\/(express|router)\//;

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.split("/").slice(-2).join("/");
  return `${functionName || "(anonymous)"}${file ? ` ${file}:${lineNumber + 1}` : ""}`;
}

/** For each stretch, the milliseconds of samples by frame, most first (at most `top`). */
export function framesDuring(profileFile: string, stretches: readonly Stretch[], top = 3): { frame: string; ms: number }[][] {
  const profile = JSON.parse(fs.readFileSync(profileFile, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  /** The sample's frame: the innermost one not of node's plumbing, with the plumbing leaf it was in. */
  const nameOf = (id: number): string => {
    const leaf = byId.get(id)!;
    let current: ProfileNode | undefined = leaf;
    while (current && PLUMBING.test(current.callFrame.url) && parent.has(current.id)) current = byId.get(parent.get(current.id)!);
    const named = current ?? leaf;
    return named === leaf ? frameName(leaf) : `${frameName(named)} > ${leaf.callFrame.functionName || "(anonymous)"}`;
  };
  const times: number[] = [];
  let time = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((time += delta));
  return stretches.map(({ startUs, endUs }) => {
    const totals = new Map<string, number>();
    for (let i = 0; i < times.length; i++) {
      if (times[i]! < startUs || times[i]! > endUs) continue;
      const node = byId.get(profile.samples[i]!)!;
      if (node.callFrame.functionName === "(idle)") continue;
      const name = nameOf(node.id);
      totals.set(name, (totals.get(name) ?? 0) + ((times[i + 1] ?? times[i]!) - times[i]!) / 1000);
    }
    return [...totals].sort((a, b) => b[1] - a[1]).slice(0, top).map(([frame, ms]) => ({ frame, ms }));
  });
}
