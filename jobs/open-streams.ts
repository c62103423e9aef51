/**
 * How many job event streams and result downloads each key has open, each kind up to its limit
 * (ATELIER_JOB_MAX_EVENT_STREAMS_PER_KEY, ATELIER_JOB_MAX_RESULT_DOWNLOADS_PER_KEY). An open answer
 * holds a socket and a chunk of the result until its client reads on, for as long as the client
 * likes: without a limit one key could hold any number. Counted by each router for itself, as each
 * router's memory and sockets are its own.
 */
import { AtelierError } from "../core/errors.js";

export type StreamKind = "events" | "download";

interface KindRule {
  /** The refusal's message, given the limit. */
  refusal(limit: number): string;
  /** Seconds a refused client is told to wait: a download ends when read; a stream when its job does. */
  retryAfterSeconds: number;
}

const RULES: Record<StreamKind, KindRule> = {
  events: {
    refusal: (limit) => `This key already has ${limit} job event streams open (ATELIER_JOB_MAX_EVENT_STREAMS_PER_KEY). Close one, or poll the job instead.`,
    retryAfterSeconds: 5,
  },
  download: {
    refusal: (limit) => `This key already has ${limit} job result downloads in progress (ATELIER_JOB_MAX_RESULT_DOWNLOADS_PER_KEY). Retry when one has finished.`,
    retryAfterSeconds: 1,
  },
};

export class OpenStreams {
  private readonly open = new Map<string, number>();

  constructor(private readonly limits: Readonly<Record<StreamKind, number>>) {}

  /**
   * Takes one of the key's places of `kind`, or throws TOO_MANY_STREAMS (429 with Retry-After) when
   * they are all taken; returns what gives it back (calls after the first do nothing).
   */
  take(kind: StreamKind, apiKeyId: string): () => void {
    const slot = `${kind}:${apiKeyId}`;
    const taken = this.open.get(slot) ?? 0;
    const limit = this.limits[kind];
    if (taken >= limit) throw new AtelierError("TOO_MANY_STREAMS", RULES[kind].refusal(limit), { retryAfterSeconds: RULES[kind].retryAfterSeconds });
    this.open.set(slot, taken + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = this.open.get(slot)! - 1;
      if (left === 0) this.open.delete(slot);
      else this.open.set(slot, left);
    };
  }
}
