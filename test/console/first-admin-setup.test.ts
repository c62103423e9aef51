/**
 * The first administrator of a fresh install, over real HTTP: the sign-in page says how to get the
 * setup link, the link's page creates exactly one administrator however many submissions race for
 * it (on SQLite, and on two routers sharing PostgreSQL), signs them in and sends them to their keys;
 * a wrong code never works, the link stops working once an account exists, the page keeps the
 * console's origin check, and the token appears in no log line. The start banner names the
 * console's URL and prints the link (at ATELIER_PUBLIC_URL when set) only while no account exists.
 * The whole path in a real browser, from a real `npm start`, is first-admin.browser.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBanner } from "../../operations/start-banner.js";
import { PostgresAccountStorage } from "../../server/accounts/postgres-account-storage.js";
import { freeLoopbackPort } from "../support/free-port.js";
import { startPostgresServer, type PostgresServer } from "../support/postgres-server.js";
import { postForm, setCookies, startConsoleService, type ConsoleService } from "./support/console-service.js";

const SUBMISSIONS = 10;
const PASSWORD = "a long first passphrase";

/** A router without workers (none is needed for accounts), started fast. */
async function startRouter(env: Record<string, string> = {}): Promise<ConsoleService> {
  return startConsoleService({ ATELIER_WORKER_ADDRESS: `127.0.0.1:${await freeLoopbackPort()}`, ATELIER_PROVISION_MODELS: "false", ATELIER_METRICS_PORT: "0", ...env });
}

/** The one-time code of the router's setup link (its `#fragment`). */
function setupCode(router: ConsoleService): string {
  return new URL(router.firstAdmin.link(router.url)).hash.slice(1);
}

function submitSetup(router: ConsoleService, code: string, email: string, headers: Record<string, string> = {}): Promise<Response> {
  return postForm(router.url, "/setup", null, { code, email, displayName: email.split("@")[0]!, password: PASSWORD }, headers);
}

/** Answers of concurrent submissions, each a distinct email, spread over `routers` with each one's own code. */
async function race(routers: ConsoleService[]): Promise<{ status: number; location: string | null; cookie: string | undefined; email: string }[]> {
  return Promise.all(
    Array.from({ length: SUBMISSIONS }, async (_, index) => {
      const router = routers[index % routers.length]!;
      const email = `racer${index}@example.com`;
      const response = await submitSetup(router, setupCode(router), email);
      await response.arrayBuffer();
      const cookie = setCookies(response).find((line) => line.startsWith("atelier_session=") && !line.startsWith("atelier_session=;"));
      return { status: response.status, location: response.headers.get("location"), cookie: cookie?.split(";")[0], email };
    }),
  );
}

describe("the first administrator of a fresh install, on SQLite", () => {
  let router: ConsoleService;

  beforeAll(async () => {
    router = await startRouter();
  });

  afterAll(async () => {
    await router?.close();
  });

  it("prints the console's URL and the setup link while no account exists, and only the console's URL afterwards", async () => {
    const banner = await startBanner(router.services.config, router.url, { metrics: undefined, provisioner: undefined }, false, router.firstAdmin);
    expect(banner).toContain(`  Console:   ${router.url}/\n`);
    expect(banner).toContain(`open ${router.url}/setup#${setupCode(router)} to create the first administrator`);
    expect(banner).toContain("npm run users -- create --email you@example.com --admin --password-stdin");
  });

  it("tells a visitor of the sign-in page how to get the setup link instead of sending them to an administrator", async () => {
    const page = await (await fetch(`${router.url}/sign-in`)).text();
    expect(page).toContain("No account exists yet. To create the first administrator, open the setup link printed in the terminal where <code>npm start</code> runs");
    expect(page).toContain("npm run users -- create --email you@example.com --admin --password-stdin");
    expect(page).not.toContain("Ask an administrator");
  });

  it("shows the setup form, and refuses a wrong code, a cross-origin post and a short password without creating an account", async () => {
    const form = await fetch(`${router.url}/setup`);
    expect(form.status).toBe(200);
    const markup = await form.text();
    expect(markup).toContain("Create the first administrator");
    expect(markup).toContain('name="code"');
    expect(markup).not.toContain(setupCode(router)); // the page itself never carries the code

    const wrong = await submitSetup(router, "not-the-code", "mallory@example.com");
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("This setup code is not right.");
    const empty = await submitSetup(router, "", "mallory@example.com");
    expect(empty.status).toBe(400);
    // The code with its last character changed (to one it does not already end with).
    const code = setupCode(router);
    const almost = await submitSetup(router, `${code.slice(0, -1)}${code.endsWith("A") ? "B" : "A"}`, "mallory@example.com");
    expect(almost.status).toBe(400);

    const crossOrigin = await submitSetup(router, setupCode(router), "mallory@example.com", { origin: "http://evil.example" });
    expect(crossOrigin.status).toBe(403);

    const shortPassword = await postForm(router.url, "/setup", null, { code: setupCode(router), email: "admin@example.com", password: "short" });
    expect(shortPassword.status).toBe(400);
    expect(await shortPassword.text()).toContain("at least 10 characters");
    expect(await router.services.accounts.countUsers()).toBe(0);
  });

  it(`creates exactly one administrator of ${SUBMISSIONS} concurrent submissions, signs them in and sends them to the API keys page`, async () => {
    const code = setupCode(router);
    const answers = await race([router]);
    const winners = answers.filter((answer) => answer.status === 303);
    expect(winners).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 410)).toHaveLength(SUBMISSIONS - 1);
    const [winner] = winners;
    expect(winner!.location).toBe("/keys");

    const users = await router.services.accounts.listUsers();
    expect(users.map((user) => [user.email, user.role])).toEqual([[winner!.email, "admin"]]);
    // Signed in: the session opens the keys page as that administrator.
    const keys = await fetch(`${router.url}/keys`, { headers: { cookie: winner!.cookie! }, redirect: "manual" });
    expect(keys.status).toBe(200);
    const keysPage = await keys.text();
    expect(keysPage).toContain(winner!.email.split("@")[0]);
    expect(keysPage).toContain('<span class="badge">admin</span>');

    // The link has done its job: the page says so and points at sign-in, and the code no longer works.
    const after = await fetch(`${router.url}/setup`);
    expect(after.status).toBe(410);
    expect(await after.text()).toContain('<a href="/sign-in">Sign in</a>');
    const again = await submitSetup(router, code, "late@example.com");
    expect(again.status).toBe(410);
    expect(await router.services.accounts.countUsers()).toBe(1);

    // Sign-in is back to its usual sentence; a restarted service would print no link.
    expect(await (await fetch(`${router.url}/sign-in`)).text()).toContain("Ask an administrator for an invite.");
    const banner = await startBanner(router.services.config, router.url, { metrics: undefined, provisioner: undefined }, false, router.firstAdmin);
    expect(banner).toContain(`  Console:   ${router.url}/`);
    expect(banner).not.toContain("/setup#");

    expect(router.logText()).toContain("console first administrator created");
    expect(router.logText()).not.toContain(code);
  });

  it("stops the link once the first account is made another way (the CLI)", async () => {
    const other = await startRouter();
    try {
      await other.createUser("cli-admin@example.com", PASSWORD, "admin");
      const answer = await submitSetup(other, setupCode(other), "late@example.com");
      expect(answer.status).toBe(410);
      expect(await answer.text()).toContain("Setup is done");
      expect((await other.services.accounts.listUsers()).map((user) => user.email)).toEqual(["cli-admin@example.com"]);
    } finally {
      await other.close();
    }
  });
});

describe("the setup link with ATELIER_PUBLIC_URL", () => {
  it("is printed at the public origin, as the console's URL is", async () => {
    const router = await startRouter({ ATELIER_PUBLIC_URL: "https://atelier.example.com" });
    try {
      const banner = await startBanner(router.services.config, router.url, { metrics: undefined, provisioner: undefined }, false, router.firstAdmin);
      expect(banner).toContain("  Console:   https://atelier.example.com/\n");
      expect(banner).toContain(`open https://atelier.example.com/setup#${setupCode(router)} to create`);
    } finally {
      await router.close();
    }
  });
});

describe("the first administrator on two routers sharing PostgreSQL", () => {
  let postgres: PostgresServer;
  let routers: ConsoleService[] = [];

  beforeAll(async () => {
    postgres = await startPostgresServer();
    const databaseUrl = await postgres.createDatabase("first_admin");
    routers = await Promise.all([startRouter({ ATELIER_DATABASE_URL: databaseUrl }), startRouter({ ATELIER_DATABASE_URL: databaseUrl })]);
  });

  afterAll(async () => {
    await Promise.all(routers.map((router) => router.close()));
    await postgres?.dispose();
  });

  it(`creates exactly one administrator of ${SUBMISSIONS} concurrent submissions spread over both routers`, async () => {
    // Each router's code lives in its own memory: the other router's is a wrong code there.
    expect((await submitSetup(routers[1]!, setupCode(routers[0]!), "crossed@example.com")).status).toBe(400);
    const answers = await race(routers);
    expect(answers.filter((answer) => answer.status === 303)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 410)).toHaveLength(SUBMISSIONS - 1);
    const users = await routers[1]!.services.accounts.listUsers();
    expect(users).toHaveLength(1);
    expect(users[0]!.role).toBe("admin");
    expect(users[0]!.email).toBe(answers.find((answer) => answer.status === 303)!.email);
    for (const router of routers) expect((await fetch(`${router.url}/setup`)).status).toBe(410);
  });

  it("lets exactly one of many simultaneous first-user inserts through, from two connection pools", async () => {
    // Below the page, with no password hashing to spread the submissions out in time.
    const databaseUrl = await postgres.createDatabase("first_admin_inserts");
    const storages = await Promise.all([PostgresAccountStorage.open(databaseUrl), PostgresAccountStorage.open(databaseUrl)]);
    try {
      // Every connection opened first, so the inserts meet in the database rather than in connecting.
      await Promise.all(storages.flatMap((storage) => Array.from({ length: 5 }, () => storage.countUsers())));
      const inserted = await Promise.all(
        Array.from({ length: 2 * SUBMISSIONS }, (_, index) =>
          storages[index % 2]!.insertFirstUser({ id: `usr_${index}`, email: `first${index}@example.com`, displayName: `first ${index}`, role: "admin", passwordHash: "scrypt$15$8$1$salt$hash", createdAtMs: Date.now(), disabledAtMs: null, keyAllowance: null }),
        ),
      );
      expect(inserted.filter(Boolean)).toHaveLength(1);
      expect(await storages[0]!.countUsers()).toBe(1);
    } finally {
      await Promise.all(storages.map((storage) => storage.close()));
    }
  });
});
