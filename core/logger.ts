/** The process-wide structured logger. API keys and image bytes are never passed to it. */
import { pino, type Logger } from "pino";

export type { Logger };

export function createLogger(level: string, name = "atelier"): Logger {
  return pino({
    name,
    level,
    redact: { paths: ["req.headers.authorization", "headers.authorization", "key", "secret"], censor: "[redacted]" },
  });
}
