/** The API guide's error table, from the one error table in core/errors.ts. */
import { ERROR_KINDS, type ErrorKind } from "../../core/errors.js";
import { markdownTable } from "./markdown-table.js";

export function errorTable(): string {
  const rows = (Object.entries(ERROR_KINDS) as [string, ErrorKind][])
    // Never sent: the caller has gone before it could be.
    .filter(([, kind]) => kind.scope !== "unseen")
    .sort(([, a], [, b]) => a.http - b.http)
    .map(([code, kind]) => [String(kind.http), `\`${code}\``, kind.description, (kind.headers ?? []).map((header) => `\`${header}\``).join(", ")]);
  return markdownTable(["Status", "Code", "When", "Headers"], rows);
}
