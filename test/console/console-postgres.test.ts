/**
 * The console on PostgreSQL (ATELIER_DATABASE_URL): accounts, sessions and keys all live in the
 * shared database, so two routers pointed at it serve one console: a session started on one is
 * valid on the other, a key made on one works and is revoked on the other, and sign-in failures
 * count against one shared budget.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { skipWithoutPostgres, startPostgresServer, type PostgresServer } from "../support/postgres-server.js";
import { postForm, postFormAndFollow, signInHttp, startConsoleService, type ConsoleService } from "./support/console-service.js";

const skip = skipWithoutPostgres("console-postgres");

describe.skipIf(skip)("console with PostgreSQL", () => {
  let postgres: PostgresServer;
  let databaseUrl: string;
  let first: ConsoleService;
  let second: ConsoleService;

  beforeAll(async () => {
    postgres = await startPostgresServer();
    databaseUrl = await postgres.createDatabase("console");
    [first, second] = await Promise.all([startConsoleService({ ATELIER_DATABASE_URL: databaseUrl }), startConsoleService({ ATELIER_DATABASE_URL: databaseUrl })]);
    await first.createUser("pat@example.com", "pat's long password", "member");
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await postgres?.dispose();
  });

  it("shares users, sessions and keys between routers, and stores only hashes", async () => {
    const session = await signInHttp(first.url, "pat@example.com", "pat's long password");
    // The same cookie is a session on the other router too (only the Origin differs: another port).
    const { page: created } = await postFormAndFollow(second.url, "/keys", session, { name: "shared key" });
    expect(created.status).toBe(200);
    const secret = /id="new-key-secret"[^>]*value="(atl_[^"]+)"/.exec(await created.text())![1]!;
    const call = (url: string) =>
      fetch(`${url}/api/v1/prompt/improve`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${secret}` }, body: '{"prompt":"a harbour"}' });
    expect((await call(first.url)).status).toBe(200);
    const id = secret.split("_")[1]!;
    expect((await postForm(first.url, `/keys/${id}/revoke`, session, {})).status).toBe(303);
    expect((await call(second.url)).status).toBe(401);

    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const dump = JSON.stringify([
        (await client.query("SELECT * FROM atelier_users")).rows,
        (await client.query("SELECT * FROM atelier_sessions")).rows,
        (await client.query("SELECT * FROM atelier_api_keys")).rows,
      ]);
      expect(dump).toContain("pat@example.com");
      expect(dump).toContain(id);
      for (const secretText of ["pat's long password", secret, decodeURIComponent(session.cookie.split("=")[1]!)]) expect(dump).not.toContain(secretText);
      expect((await client.query("SELECT owner_id FROM atelier_api_keys WHERE id = $1", [id])).rows[0].owner_id).toMatch(/^usr_/);
    } finally {
      await client.end();
    }
  });

  it("shares the sign-in throttle: failures on one router block the account on the other", async () => {
    await first.createUser("quinn@example.com", "quinn's long password", "member");
    for (let attempt = 1; attempt <= 5; attempt++) {
      const router = attempt % 2 === 0 ? second : first;
      expect((await postForm(router.url, "/sign-in", null, { email: "quinn@example.com", password: `wrong ${attempt} password` })).status).toBe(401);
    }
    expect((await postForm(second.url, "/sign-in", null, { email: "quinn@example.com", password: "quinn's long password" })).status).toBe(429);
    expect((await postForm(first.url, "/sign-in", null, { email: "quinn@example.com", password: "quinn's long password" })).status).toBe(429);
  });
});
