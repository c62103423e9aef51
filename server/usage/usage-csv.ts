/**
 * Usage rows as CSV (RFC 4180): one line per hour, key, operation and status. Fields that a
 * spreadsheet would run as a formula (starting with = + - @, tab or carriage return) are prefixed
 * with an apostrophe, since key names are typed by users.
 */
import type { UsageExportRow } from "./usage-store.js";

export const USAGE_CSV_HEADER = ["hour_start_utc", "key_id", "key_name", "operation", "status", "requests", "compute_seconds"] as const;

function field(value: string | number): string {
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The CSV document; `keyName` gives each key's current name (blank when unknown). */
export function usageCsv(rows: readonly UsageExportRow[], keyName: (keyId: string) => string | undefined): string {
  const lines = [USAGE_CSV_HEADER.join(",")];
  for (const row of rows) {
    lines.push(
      [
        new Date(row.hourStartMs).toISOString(),
        row.keyId,
        keyName(row.keyId) ?? "",
        row.operation,
        row.status,
        row.requests,
        (row.computeMs / 1000).toFixed(3),
      ]
        .map(field)
        .join(","),
    );
  }
  return `${lines.join("\r\n")}\r\n`;
}
