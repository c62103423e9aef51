/**
 * The `Prefer` request header (RFC 7240) as far as jobs use it: `respond-async` and `wait=N`.
 * Several headers and several comma-separated preferences combine; names are case-insensitive;
 * unknown preferences are ignored, as the RFC asks.
 */
export interface Preferences {
  respondAsync: boolean;
  /** Seconds the client is willing to wait for a complete answer. */
  waitSeconds: number | undefined;
}

export function parsePrefer(header: string | string[] | undefined): Preferences {
  const preferences: Preferences = { respondAsync: false, waitSeconds: undefined };
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  for (const preference of values.flatMap((value) => value.split(","))) {
    const [token = ""] = preference.split(";");
    const [name = "", rawValue] = token.split("=", 2).map((part) => part.trim());
    const value = rawValue?.replace(/^"(.*)"$/, "$1");
    switch (name.toLowerCase()) {
      case "respond-async":
        preferences.respondAsync = true;
        break;
      case "wait":
        // The first valid wait wins (RFC 7240: a repeated preference's first value applies).
        if (preferences.waitSeconds === undefined && value !== undefined && /^\d{1,9}$/.test(value)) preferences.waitSeconds = Number(value);
        break;
    }
  }
  return preferences;
}
