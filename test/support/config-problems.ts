/** The problems loadConfig reports for `env` (none when it loads), for tests of settings validation. */
import { ConfigError, loadConfig } from "../../core/config.js";

export function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
