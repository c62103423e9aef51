/**
 * The places for large request bodies, shared by the body readers (JSON, json-body.ts, and
 * multipart forms, multipart-body.ts): at most `ATELIER_MAX_CONCURRENT_LARGE_BODIES` bodies over
 * {@link LARGE_BODY_BYTES} are read at once, whatever their media type, so the memory held by
 * uploads in progress stays bounded.
 */
import { AtelierError } from "../core/errors.js";

/** Bodies above this many bytes count against the concurrent large-body limit. */
export const LARGE_BODY_BYTES = 1024 * 1024;

export class LargeBodies {
  private reading = 0;

  constructor(private readonly max: number) {}

  /** Takes a place; undefined when all are taken. The returned function gives it back (once, however often called). */
  take(): (() => void) | undefined {
    if (this.reading >= this.max) return undefined;
    this.reading++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.reading--;
    };
  }

  /** The 503 for a body refused because every place is taken. */
  busy(): AtelierError {
    return new AtelierError("OVERLOADED", `The server is reading ${this.max} large request bodies already (ATELIER_MAX_CONCURRENT_LARGE_BODIES). Retry shortly.`, { retryAfterSeconds: 1 });
  }
}
