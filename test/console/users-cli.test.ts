/** `npm run users`: the first admin from standard input, listing, role, disable, allowance, password reset. */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteAccountStorage } from "../../server/accounts/sqlite-account-storage.js";
import { AccountStore } from "../../server/accounts/account-store.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const cliPath = path.join(repoRoot, "bin", "users-cli.ts");
let dataDir: string;

function users(input: string | undefined, ...args: string[]) {
  const result = spawnSync(process.execPath, ["--import", "tsx", cliPath, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ATELIER_DATA_DIR: dataDir, ATELIER_DATABASE_URL: "" },
    input: input ?? "",
    encoding: "utf8",
    timeout: 30_000,
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function withStore<T>(use: (store: AccountStore) => Promise<T>): Promise<T> {
  const store = new AccountStore(SqliteAccountStorage.open(dataDir), { idleMs: 60_000, absoluteMs: 3_600_000 });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-users-cli-"));
});

afterAll(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("users CLI", () => {
  it("creates the first admin with the password from standard input, never from arguments", async () => {
    const created = users("first admin password\n", "create", "--email", "Root@Example.com", "--name", "Root", "--admin", "--password-stdin", "--json");
    expect(created.status).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ email: "root@example.com", displayName: "Root", role: "admin", status: "active" });
    expect(created.stdout + created.stderr).not.toContain("first admin password");
    expect(await withStore(async (store) => (await store.verifyCredentials("root@example.com", "first admin password"))?.role)).toBe("admin");

    const withoutStdinFlag = users("x\n", "create", "--email", "a@example.com");
    expect(withoutStdinFlag.status).toBe(2);
    expect(withoutStdinFlag.stderr).toContain("--password-stdin");
    const shortPassword = users("short\n", "create", "--email", "b@example.com", "--password-stdin");
    expect(shortPassword.status).toBe(2);
    expect(shortPassword.stderr).toContain("at least 10 characters");
    expect(users("member password!\n", "create", "--email", "root@example.com", "--password-stdin").stderr).toContain("already exists");
  });

  it("lists, changes roles and allowances, disables and resets passwords", async () => {
    expect(users("member password!\n", "create", "--email", "m@example.com", "--password-stdin").status).toBe(0);
    expect(JSON.parse(users(undefined, "list", "--json").stdout).map((user: { email: string; role: string }) => `${user.email}:${user.role}`)).toEqual([
      "root@example.com:admin",
      "m@example.com:member",
    ]);
    expect(users(undefined, "set-role", "m@example.com", "admin").status).toBe(0);
    expect(users(undefined, "set-role", "m@example.com", "owner").status).toBe(2);
    expect(users(undefined, "set-allowance", "m@example.com", "40").status).toBe(0);
    expect(users(undefined, "disable", "m@example.com").status).toBe(0);
    expect(users(undefined, "disable", "nobody@example.com")).toMatchObject({ status: 1, stderr: "users: No user with email nobody@example.com.\n" });
    await withStore(async (store) => {
      expect(await store.findUserByEmail("m@example.com")).toMatchObject({ role: "admin", keyAllowance: 40, disabledAt: expect.any(Date) });
    });
    expect(users(undefined, "enable", "m@example.com").status).toBe(0);
    expect(users("a brand new password\n", "reset-password", "m@example.com", "--password-stdin").status).toBe(0);
    await withStore(async (store) => {
      expect(await store.verifyCredentials("m@example.com", "a brand new password")).not.toBeNull();
      expect(await store.verifyCredentials("m@example.com", "member password!")).toBeNull();
    });
  });
});
