/**
 * `npm run keys -- <command>`: the operator's shell over the key store the service uses
 * ({@link openApiKeyStore}: PostgreSQL when `ATELIER_DATABASE_URL` is set, else SQLite). Exit codes
 * and messages as for every operator CLI ({@link runOperatorCli}).
 */
import { loadConfig } from "../core/config.js";
import { CommandError, parseCommandLine, print, runOperatorCli, UsageError } from "./operator-cli.js";
import type { ApiKeyRecord, ApiKeyStore } from "../server/keys/api-key-store.js";
import { openApiKeyStore } from "../server/keys/open-api-key-store.js";

const USAGE = `Usage: npm run keys -- <command> [options]

Commands:
  create --name NAME [--limit N] [--json]  Create a key and print it (the only time it is shown)
  list [--json]                            List keys with their usage and status (never secrets)
  revoke ID                                Revoke a key; it stops authenticating at once
  set-limit ID (N|default)                 Set a key's hourly request limit, or use the default
  help                                     Show this help

Environment:
  ATELIER_DATABASE_URL  PostgreSQL URL of the shared key database (when the service uses one)
  ATELIER_DATA_DIR      folder holding atelier.db when ATELIER_DATABASE_URL is unset (as for the service)
`;

interface Options {
  name?: string;
  limit?: string;
  json: boolean;
}

/** Which options each command accepts; anything else is a usage error rather than silently ignored. */
const ALLOWED_OPTIONS: Record<string, readonly (keyof Options)[]> = {
  create: ["name", "limit", "json"],
  list: ["json"],
  revoke: [],
  "set-limit": [],
};

function readCommandLine(argv: string[]): { command: string | undefined; args: string[]; options: Options; help: boolean } {
  const { command, args, values } = parseCommandLine(argv, {
    name: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  });
  const { name, limit, json, help } = values;
  return { command, args, options: { name, limit, json }, help };
}

function checkOptions(command: string, options: Options): void {
  const allowed = ALLOWED_OPTIONS[command] ?? [];
  for (const option of ["name", "limit"] as const) {
    if (options[option] !== undefined && !allowed.includes(option)) {
      throw new UsageError(`'${command}' does not take --${option}.`);
    }
  }
  if (options.json && !allowed.includes("json")) throw new UsageError(`'${command}' does not take --json.`);
}

function expectArgs(command: string, args: string[], names: string[]): string[] {
  if (args.length !== names.length) {
    const expected = names.length === 0 ? "no arguments" : names.join(" ");
    throw new UsageError(`'${command}' expects ${expected}, got ${args.length === 0 ? "none" : args.join(" ")}.`);
  }
  return args;
}

/** `N` or `default`; range checks are the store's, so the CLI and the API agree on them. */
function parseLimit(text: string): number | null {
  if (text === "default") return null;
  if (!/^[0-9]+$/.test(text)) throw new UsageError(`Limit must be a whole number or 'default', not '${text}'.`);
  return Number(text);
}

function formatTime(date: Date | null): string {
  return date === null ? "never" : date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

function formatLimit(record: ApiKeyRecord, defaultLimit: number): string {
  return record.hourlyLimit === null ? `default (${defaultLimit})` : String(record.hourlyLimit);
}

function statusOf(record: ApiKeyRecord): "active" | "revoked" | "expired" {
  if (record.revokedAt !== null) return "revoked";
  return record.expiresAt !== null && record.expiresAt.getTime() <= Date.now() ? "expired" : "active";
}

function formatTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => [...row[column]!].length)));
  return rows
    .map((row) => row.map((cell, column) => cell + " ".repeat(widths[column]! - [...cell].length)).join("  ").trimEnd())
    .join("\n");
}

async function createKey(store: ApiKeyStore, options: Options, defaultLimit: number): Promise<void> {
  if (options.name === undefined) throw new UsageError("'create' needs --name NAME.");
  const hourlyLimit = options.limit === undefined ? null : parseLimit(options.limit);
  const { record, key } = await store.create({ name: options.name, hourlyLimit });
  if (options.json) {
    print(
      JSON.stringify({
        id: record.id,
        key,
        name: record.name,
        hourlyLimit: record.hourlyLimit,
        createdAt: record.createdAt.toISOString(),
      }),
    );
    return;
  }
  print(`Created API key ${record.id} for "${record.name}" (hourly limit: ${formatLimit(record, defaultLimit)}).`);
  print("");
  print(`    ${key}`);
  print("");
  print("Store it now: it cannot be shown again. Only a hash of it is kept.");
}

async function listKeys(store: ApiKeyStore, options: Options, defaultLimit: number): Promise<void> {
  const records = await store.list();
  if (options.json) {
    print(JSON.stringify(records.map((record) => ({ ...record, status: statusOf(record) }))));
    return;
  }
  if (records.length === 0) {
    print("No API keys yet. Create one with: npm run keys -- create --name NAME");
    return;
  }
  // OWNER is "cli" for keys made here, else the console user's id (`npm run users -- list --json` names them).
  const header = ["ID", "NAME", "CREATED", "LAST USED", "LIMIT/H", "STATUS", "EXPIRES", "SCOPES", "OWNER"];
  const rows = records.map((record) => [
    record.id,
    record.name,
    formatTime(record.createdAt),
    formatTime(record.lastUsedAt),
    formatLimit(record, defaultLimit),
    statusOf(record),
    record.expiresAt === null ? "never" : formatTime(record.expiresAt),
    record.scopes === null ? "all" : record.scopes.join(","),
    record.ownerId ?? "cli",
  ]);
  print(formatTable([header, ...rows]));
}

async function revokeKey(store: ApiKeyStore, id: string): Promise<void> {
  if (await store.revoke(id)) {
    print(`Revoked API key ${id}.`);
    return;
  }
  const existing = await store.get(id);
  if (existing === null) throw new CommandError(`No API key with id '${id}'.`);
  print(`API key ${id} was already revoked at ${formatTime(existing.revokedAt)}.`);
}

async function setLimit(store: ApiKeyStore, id: string, limitText: string, defaultLimit: number): Promise<void> {
  const record = await store.setHourlyLimit(id, parseLimit(limitText));
  if (record === null) throw new CommandError(`No API key with id '${id}'.`);
  print(`API key ${id} now has hourly limit ${formatLimit(record, defaultLimit)}.`);
}

async function run(argv: string[]): Promise<void> {
  const { command, args, options, help } = readCommandLine(argv);
  if (help || command === "help") {
    print(USAGE.trimEnd());
    return;
  }
  if (command === undefined) throw new UsageError("Missing command.");
  if (!(command in ALLOWED_OPTIONS)) throw new UsageError(`Unknown command '${command}'.`);
  checkOptions(command, options);

  const config = loadConfig();
  const store = await openApiKeyStore(config);
  const defaultLimit = config.quota.defaultLimit;
  try {
    switch (command) {
      case "create":
        expectArgs(command, args, []);
        return await createKey(store, options, defaultLimit);
      case "list":
        expectArgs(command, args, []);
        return await listKeys(store, options, defaultLimit);
      case "revoke": {
        const [id] = expectArgs(command, args, ["ID"]);
        return await revokeKey(store, id!);
      }
      case "set-limit": {
        const [id, limit] = expectArgs(command, args, ["ID", "(N|default)"]);
        return await setLimit(store, id!, limit!, defaultLimit);
      }
    }
  } finally {
    await store.close();
  }
}

await runOperatorCli("keys", USAGE, () => run(process.argv.slice(2)));
