/**
 * Accounts on both storages (embedded SQLite and a real PostgreSQL started for this file): users,
 * passwords, sessions with idle and absolute expiry, single-use invites: the one suite of
 * test/support/account-store-contract.ts for both.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "../../server/accounts/password-hash.js";
import { PostgresAccountStorage } from "../../server/accounts/postgres-account-storage.js";
import { SqliteAccountStorage } from "../../server/accounts/sqlite-account-storage.js";
import { accountStoreContract, type AccountBackend } from "../support/account-store-contract.js";
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from "../support/postgres-server.js";



let dataDir: string;
let postgres: PostgresServer | undefined;
const skipPostgres = skipWithoutPostgres("account-store");

const backends: AccountBackend[] = [
  {
    name: "SQLite",
    skip: false,
    open: async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-accounts-"));
      return SqliteAccountStorage.open(dataDir);
    },
    dispose: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
  },
  {
    name: "PostgreSQL",
    skip: skipPostgres,
    open: async () => {
      postgres ??= await startPostgresServer();
      return PostgresAccountStorage.open(await postgres.createDatabase("accounts"));
    },
    dispose: async () => {},
  },
];

afterAll(async () => {
  await postgres?.dispose();
});

describe("password hashing", () => {
  it("salts every hash, verifies only the right password, and rejects malformed stored values", async () => {
    const [first, second] = await Promise.all([hashPassword("a long enough password"), hashPassword("a long enough password")]);
    expect(first).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(first).not.toBe(second);
    expect(first).not.toContain("password");
    expect(await verifyPassword("a long enough password", first)).toBe(true);
    expect(await verifyPassword("a long enough passwore", first)).toBe(false);
    expect(await verifyPassword("a long enough password", "plain text")).toBe(false);
    expect(await verifyPassword("a long enough password", first.replace("$15$", "$30$"))).toBe(false); // refuses absurd cost
  });
});

for (const backend of backends) accountStoreContract(backend);
