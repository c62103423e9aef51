/**
 * Opening Atelier's PostgreSQL pools (API keys, accounts, usage share `ATELIER_DATABASE_URL`): one
 * place for what every component does alike — the pool's timeouts, reporting dropped idle
 * connections, running the component's migrations, and the operator's message when that fails.
 */
import pg from "pg";
import type { Logger } from "../core/logger.js";
import { migratePostgres } from "./postgres-migrations.js";
import { storeUnavailable, type SharedStore } from "./store-unavailable.js";

const NETWORK_ERROR_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"]);
// SQLSTATE: class 08 is "connection exception"; the 57P0x codes are server shutdown and start-up;
// 53300 is "too many connections".
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-3]|53300)$/;
const DRIVER_CONNECTION_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error/i;

/** True when `error` says the database could not be reached, rather than that a statement failed. */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (NETWORK_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnreachable);
  return DRIVER_CONNECTION_MESSAGES.test(error.message);
}

/** `host:port/database` of a connection URL, without user or password, for messages and logs. */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.host || parsed.searchParams.get("host") || "local socket";
    return `postgresql://${host}${parsed.pathname}`;
  } catch {
    return "the configured PostgreSQL database";
  }
}

/** The database could not be reached or migrated at open; its message is for operators. */
export class DatabaseOpenError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DatabaseOpenError";
  }
}

/** What differs between the components opening a pool. */
export interface MigratedPoolOptions {
  /** The component's row in the schema table (`api_keys`, `accounts`, …). */
  component: string;
  /** The component's migrations, append-only (see {@link migratePostgres}). */
  migrations: readonly string[];
  /** `application_name` of the connections, so `pg_stat_activity` tells the components apart. */
  applicationName: string;
  /** What failed to open, for the operator's message: "Could not open the <label> <database>: …". */
  label: string;
  /** Connections this pool keeps at most. */
  maxConnections: number;
  /** Milliseconds to wait for a connection; default 5000. */
  connectTimeoutMs?: number;
  /** A statement that outlives this is treated like a dropped connection rather than waited on. */
  queryTimeoutMs: number;
  /** TCP keep-alive on the connections; default off. */
  keepAlive?: boolean;
  /** Where dropped idle connections are reported; without it they are ignored (the pool replaces them). */
  logger?: Logger;
}

/**
 * Connects to `url`, creates or migrates the component's tables, and returns the pool. Throws
 * {@link DatabaseOpenError} naming the database (never its password) when it cannot be reached or
 * migrated, having closed the pool.
 */
export async function openMigratedPool(url: string, options: MigratedPoolOptions): Promise<pg.Pool> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    query_timeout: options.queryTimeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: options.keepAlive ?? false,
    application_name: options.applicationName,
  });
  // An idle connection dropped by the server is reported here; unhandled, it would end the process.
  pool.on("error", (error) => {
    options.logger?.warn({ err: error, database: describeDatabaseUrl(url) }, "PostgreSQL connection lost; the pool will reconnect");
  });
  try {
    await migratePostgres(pool, options.component, options.migrations);
  } catch (error) {
    await pool.end().catch(() => {});
    const reason = error instanceof Error ? error.message : String(error);
    throw new DatabaseOpenError(`Could not open the ${options.label} ${describeDatabaseUrl(url)}: ${reason}`, { cause: error });
  }
  return pool;
}

/** Runs one statement on `pool`; an unreachable database becomes the 503 for `store` clients can act on. */
export async function queryReachable<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  store: SharedStore,
  text: string,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  try {
    return await pool.query<R>(text, values);
  } catch (error) {
    if (isDatabaseUnreachable(error)) throw storeUnavailable(store, error);
    throw error;
  }
}
