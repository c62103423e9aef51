import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PostgresApiKeyStore } from "../../server/keys/postgres-api-key-store.js";
import { SqliteApiKeyStore } from "../../server/keys/sqlite-api-key-store.js";
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from "../support/postgres-server.js";
import { freeLoopbackPort } from "../support/free-port.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const cliPath = path.join(repoRoot, "bin", "keys-cli.ts");

let dataDir: string;

beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-keys-cli-"));
});

afterEach(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

function cli(...args: string[]): CliResult {
  return cliWith({}, ...args);
}

function cliWith(env: Record<string, string>, ...args: string[]): CliResult {
  const result = spawnSync(process.execPath, ["--import", "tsx", cliPath, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ATELIER_DATA_DIR: dataDir, ATELIER_RATE_LIMIT_PER_HOUR: "250", ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function withStore<T>(use: (store: SqliteApiKeyStore) => Promise<T>): Promise<T> {
  const store = SqliteApiKeyStore.open(dataDir);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

describe("keys CLI", () => {
  it("create --json prints one JSON object whose key authenticates", async () => {
    const created = cli("create", "--name", "ci runner", "--limit", "30", "--json");
    expect(created.status, created.stderr).toBe(0);
    const output = JSON.parse(created.stdout) as Record<string, unknown>;
    expect(Object.keys(output).sort()).toEqual(["createdAt", "hourlyLimit", "id", "key", "name"]);
    expect(output).toMatchObject({ name: "ci runner", hourlyLimit: 30 });
    expect(output.key).toMatch(new RegExp(`^atl_${String(output.id)}_[A-Za-z0-9_-]{43}$`));
    expect(Number.isNaN(Date.parse(String(output.createdAt)))).toBe(false);

    const record = await withStore((store) => store.authenticate(String(output.key)));
    expect(record).toMatchObject({ id: output.id, name: "ci runner", hourlyLimit: 30 });
  });

  it("create without --json shows the key once with a warning to store it", () => {
    const created = cli("create", "--name", "human");
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/atl_[a-z2-7]{12}_[A-Za-z0-9_-]{43}/);
    expect(created.stdout).toMatch(/store it now.*cannot be shown again/i);
    expect(created.stdout).toContain("default (250)");
  });

  it("lists keys as a table and as JSON, without secrets", () => {
    const { key, id } = JSON.parse(cli("create", "--name", "listed app", "--json").stdout) as {
      key: string;
      id: string;
    };

    const table = cli("list");
    expect(table.status, table.stderr).toBe(0);
    const [header, row] = table.stdout.trimEnd().split("\n");
    expect(header).toMatch(/ID\s+NAME\s+CREATED\s+LAST USED\s+LIMIT\/H\s+STATUS\s+EXPIRES\s+SCOPES\s+OWNER$/);
    expect(row).toContain(id);
    expect(row).toContain("listed app");
    expect(row).toContain("never");
    expect(row).toContain("default (250)");
    expect(row).toMatch(/active\s+never\s+all\s+cli$/);
    expect(table.stdout).not.toContain(key);

    const json = cli("list", "--json");
    expect(json.status, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject([{ id, name: "listed app", hourlyLimit: null, status: "active" }]);
    expect(json.stdout).not.toContain(key);
  });

  it("revoke makes the key stop authenticating", async () => {
    const { key, id } = JSON.parse(cli("create", "--name", "doomed", "--json").stdout) as {
      key: string;
      id: string;
    };
    expect(await withStore((store) => store.authenticate(key))).not.toBeNull();

    const revoked = cli("revoke", id);
    expect(revoked.status, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(id);
    expect(await withStore((store) => store.authenticate(key))).toBeNull();
    expect(cli("list").stdout).toMatch(/revoked/);

    const again = cli("revoke", id);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/already revoked/);
  });

  it("set-limit changes and resets a key's limit", async () => {
    const { id } = JSON.parse(cli("create", "--name", "metered", "--json").stdout) as { id: string };
    expect(cli("set-limit", id, "75").status).toBe(0);
    expect((await withStore((store) => store.get(id)))?.hourlyLimit).toBe(75);
    expect(cli("set-limit", id, "default").status).toBe(0);
    expect((await withStore((store) => store.get(id)))?.hourlyLimit).toBeNull();
  });

  it("answers bad usage with exit code 2 and a message on stderr", () => {
    const cases: string[][] = [
      [],
      ["frobnicate"],
      ["create"],
      ["create", "--name"],
      ["create", "--name", "x", "--limit", "lots"],
      ["create", "--name", "x", "--limit", "0"],
      ["create", "--name", ""],
      ["create", "--name", "x", "--bogus"],
      ["list", "--name", "x"],
      ["revoke"],
      ["revoke", "a", "b"],
      ["set-limit", "someid"],
      ["set-limit", "someid", "-5"],
    ];
    for (const args of cases) {
      const result = cli(...args);
      expect(result.status, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toMatch(/^keys: \S/);
      expect(result.stdout, args.join(" ")).toBe("");
    }
  });

  it("answers an unknown id with exit code 1", () => {
    for (const args of [["revoke", "nosuchkeyid2"], ["set-limit", "nosuchkeyid2", "10"]]) {
      const result = cli(...args);
      expect(result.status, args.join(" ")).toBe(1);
      expect(result.stderr).toMatch(/No API key with id 'nosuchkeyid2'/);
      expect(result.stdout).toBe("");
    }
  });

  it("prints help on request", () => {
    for (const args of [["help"], ["--help"], ["list", "-h"]]) {
      const result = cli(...args);
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(/create --name NAME/);
    }
  });
});

const SKIP_POSTGRES = skipWithoutPostgres("keys/keys-cli.test PostgreSQL");

describe.skipIf(SKIP_POSTGRES)("keys CLI with ATELIER_DATABASE_URL", () => {
  let postgres: PostgresServer;
  let databaseUrl: string;
  beforeAll(async () => {
    postgres = await startPostgresServer();
  });
  afterAll(async () => {
    await postgres?.dispose();
  });
  beforeEach(async () => {
    databaseUrl = await postgres.createDatabase();
  });

  it("creates, lists and revokes keys in PostgreSQL, where the service reads them", async () => {
    const env = { ATELIER_DATABASE_URL: databaseUrl };
    const created = cliWith(env, "create", "--name", "shared runner", "--limit", "30", "--json");
    expect(created.status, created.stderr).toBe(0);
    const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };

    const store = await PostgresApiKeyStore.open(databaseUrl);
    try {
      expect(await store.authenticate(key)).toMatchObject({ id, name: "shared runner", hourlyLimit: 30 });
      const listed = cliWith(env, "list", "--json");
      expect(JSON.parse(listed.stdout)).toMatchObject([{ id, status: "active" }]);
      expect(cliWith(env, "revoke", id).status).toBe(0);
      expect(await store.authenticate(key)).toBeNull();
    } finally {
      await store.close();
    }
    // Nothing went to the embedded database.
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });

  it("answers an unreachable database with exit code 1 and a message without the password", async () => {
    const url = `postgresql://atelier:hunter2secret@127.0.0.1:${await freeLoopbackPort()}/keys`;
    const result = cliWith({ ATELIER_DATABASE_URL: url }, "list");
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^keys: Could not open the API key database postgresql:\/\/127\.0\.0\.1:\d+\/keys: /);
    expect(result.stderr).not.toContain("hunter2secret");
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(result.stdout).toBe("");
  });
});
