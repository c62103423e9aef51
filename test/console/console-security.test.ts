/**
 * The console's security properties over plain HTTP, as an attacker would probe them: cookie
 * flags (with TLS judged through a trusted proxy), session fixation, CSRF from another origin and
 * without the token, sign-in throttling per account and per address, no user enumeration, members
 * confined to their own keys (404, never 403), sessions ended by sign-out, password change and
 * disabling, CSP on every page, the key errors of the API (expired, scope), and no plaintext
 * password, key secret or session id in the database files or the logs.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postForm, postFormAndFollow, setCookies, signInHttp, startConsoleService, type ConsoleService, type HttpSession } from "./support/console-service.js";

const ADMIN = { email: "admin@example.com", password: "admin password 12345" };
const BOB = { email: "bob@example.com", password: "bob's long password" };
const CAROL = { email: "carol@example.com", password: "carol's long password" };
const THROTTLED = { email: "throttled@example.com", password: "throttled password!" };

let atelier: ConsoleService;
let base: string;
const secrets: string[] = [];

beforeAll(async () => {
  // loopback is trusted as a proxy, so X-Forwarded-Proto/-For from the test act as a TLS proxy would.
  atelier = await startConsoleService({ ATELIER_TRUST_PROXY: "loopback" });
  base = atelier.url;
  for (const [account, role] of [[ADMIN, "admin"], [BOB, "member"], [CAROL, "member"], [THROTTLED, "member"]] as const) {
    await atelier.createUser(account.email, account.password, role);
    secrets.push(account.password);
  }
});

afterAll(async () => {
  await atelier?.close();
});

/** Creates a key through the console form and returns its secret, read from the page. */
async function createKeyThroughConsole(session: HttpSession, name: string): Promise<{ secret: string; id: string }> {
  const { page: response } = await postFormAndFollow(base, "/keys", session, { name });
  expect(response.status).toBe(200);
  expect(response.headers.get("cache-control")).toBe("no-store");
  const secret = /id="new-key-secret"[^>]*value="(atl_[^"]+)"/.exec(await response.text())?.[1];
  expect(secret).toBeDefined();
  secrets.push(secret!);
  return { secret: secret!, id: secret!.split("_")[1]! };
}

function get(path: string, session?: HttpSession | null, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}${path}`, { redirect: "manual", headers: { ...(session ? { cookie: session.cookie } : {}), ...headers } });
}

describe("session cookie", () => {
  it("is HttpOnly, SameSite=Lax, Path=/ and without Secure over plain HTTP", async () => {
    const response = await postForm(base, "/sign-in", null, { email: BOB.email, password: BOB.password });
    expect(response.status).toBe(303);
    const cookie = setCookies(response).find((line) => line.startsWith("atelier_session="))!;
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).toMatch(/; Path=\//i);
    expect(cookie).not.toMatch(/; Secure/i);
    expect(cookie).not.toMatch(/Max-Age|Expires/i);
  });

  it("is Secure with the __Host- prefix when the request came over TLS through a trusted proxy", async () => {
    const response = await postForm(base, "/sign-in", null, { email: BOB.email, password: BOB.password }, {
      "x-forwarded-proto": "https",
      origin: base.replace("http:", "https:"),
    });
    expect(response.status).toBe(303);
    const cookie = setCookies(response).find((line) => line.startsWith("__Host-atelier_session="))!;
    expect(cookie).toMatch(/; Secure/i);
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).not.toMatch(/Domain=/i);
  });
});

describe("session fixation and ending sessions", () => {
  it("never adopts a session id the browser brought: sign-in issues a new one and ends the old", async () => {
    const planted = "attacker-chosen-session-id";
    const fixed = await postForm(base, "/sign-in", null, { email: CAROL.email, password: CAROL.password }, { cookie: `atelier_session=${planted}` });
    const issued = setCookies(fixed).find((line) => line.startsWith("atelier_session="))!.split(";")[0]!;
    expect(issued).not.toBe(`atelier_session=${planted}`);
    expect((await get("/keys", { cookie: `atelier_session=${planted}`, csrfToken: "" })).status).toBe(303);

    const first = await signInHttp(base, CAROL.email, CAROL.password);
    const again = await postForm(base, "/sign-in", first, { email: CAROL.email, password: CAROL.password });
    const second = setCookies(again).find((line) => line.startsWith("atelier_session=") && !line.startsWith("atelier_session=;"))!.split(";")[0]!;
    expect(second).not.toBe(first.cookie);
    expect((await get("/keys", first)).status).toBe(303); // the pre-sign-in session is gone
    expect((await get("/keys", { cookie: second, csrfToken: "" })).status).toBe(200);
  });

  it("ends the session on sign-out", async () => {
    const session = await signInHttp(base, CAROL.email, CAROL.password);
    expect((await get("/keys", session)).status).toBe(200);
    expect((await postForm(base, "/sign-out", session, {})).status).toBe(303);
    const after = await get("/keys", session);
    expect(after.status).toBe(303);
    expect(after.headers.get("location")).toBe("/sign-in?next=%2Fkeys");
  });

  it("ends every other session when the password changes, and keeps this browser signed in on a new id", async () => {
    const elsewhere = await signInHttp(base, CAROL.email, CAROL.password);
    const here = await signInHttp(base, CAROL.email, CAROL.password);
    const newPassword = "carol's new long password";
    const changed = await postForm(base, "/account/password", here, { currentPassword: CAROL.password, newPassword });
    expect(changed.status).toBe(303);
    secrets.push(newPassword);
    const fresh = setCookies(changed).find((line) => line.startsWith("atelier_session=") && !line.startsWith("atelier_session=;"))!.split(";")[0]!;
    expect((await get("/keys", elsewhere)).status).toBe(303);
    expect((await get("/keys", here)).status).toBe(303);
    expect((await get("/keys", { cookie: fresh, csrfToken: "" })).status).toBe(200);
    CAROL.password = newPassword;
  });
});

describe("CSRF", () => {
  it("refuses a state-changing request from another origin, without any origin, or without the token", async () => {
    const session = await signInHttp(base, BOB.email, BOB.password);
    const before = (await atelier.services.keys.list()).length;
    for (const headers of [{ origin: "http://evil.example" }, { origin: "null" }]) {
      const response = await postForm(base, "/keys", session, { name: "csrf" }, headers);
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(await response.text()).toMatch(/cross-origin/);
    }
    const noOrigin = await fetch(`${base}/keys`, {
      method: "POST",
      headers: { cookie: session.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: session.csrfToken, name: "csrf" }),
    });
    expect(noOrigin.status).toBe(403);
    const evilReferer = await fetch(`${base}/keys`, {
      method: "POST",
      headers: { cookie: session.cookie, referer: "http://evil.example/page", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: session.csrfToken, name: "csrf" }),
    });
    expect(evilReferer.status).toBe(403);
    const noToken = await postForm(base, "/keys", { ...session, csrfToken: "" }, { name: "csrf", _csrf: "" });
    expect(noToken.status).toBe(403);
    const otherSessionsToken = await postForm(base, "/keys", { ...session, csrfToken: (await signInHttp(base, CAROL.email, CAROL.password)).csrfToken }, { name: "csrf" });
    expect(otherSessionsToken.status).toBe(403);
    const signOut = await postForm(base, "/sign-out", session, {}, { origin: "http://evil.example" });
    expect(signOut.status).toBe(403);
    expect((await get("/keys", session)).status).toBe(200);
    expect((await atelier.services.keys.list()).length).toBe(before);
    // The same request from the console itself works.
    expect((await postForm(base, "/keys", session, { name: "same origin" })).status).toBe(303);
  });

  it("explains the refusal when TLS ends at a proxy the service does not trust", async () => {
    const response = await postForm(base, "/sign-in", null, BOB, { origin: base.replace("http:", "https:") });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain("set ATELIER_TRUST_PROXY");
  });

  it("refuses a cross-origin sign-in (login CSRF)", async () => {
    const response = await postForm(base, "/sign-in", null, { email: BOB.email, password: BOB.password }, { origin: "http://evil.example" });
    expect(response.status).toBe(403);
    expect(setCookies(response).some((line) => line.includes("atelier_session=") && !line.includes("atelier_session=;"))).toBe(false);
  });
});

describe("sign-in", () => {
  it("answers a wrong password, an unknown email and a disabled account with the same message", async () => {
    const answers = await Promise.all(
      [
        { email: BOB.email, password: "not bob's password" },
        { email: "nobody@example.com", password: "whatever password" },
      ].map(async (credentials) => {
        const response = await postForm(base, "/sign-in", null, credentials, { "x-forwarded-for": "198.51.100.7" });
        const text = await response.text();
        return { status: response.status, message: /<li>([^<]+)<\/li>/.exec(text)?.[1] };
      }),
    );
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]).toEqual({ status: 401, message: "The email or password is not right, or the account is disabled." });
  });

  it("throttles an account after 5 failures, even with the right password next, and not other accounts", async () => {
    for (let attempt = 1; attempt <= 5; attempt++) {
      const response = await postForm(base, "/sign-in", null, { email: THROTTLED.email, password: `wrong ${attempt} password` }, { "x-forwarded-for": `203.0.113.${attempt}` });
      expect(response.status).toBe(401);
    }
    const blocked = await postForm(base, "/sign-in", null, THROTTLED, { "x-forwarded-for": "203.0.113.99" });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(800);
    expect(await blocked.text()).toContain("Too many sign-in attempts");
    expect(setCookies(blocked).some((line) => line.startsWith("atelier_session=") && !line.startsWith("atelier_session=;"))).toBe(false);
    expect((await postForm(base, "/sign-in", null, BOB, { "x-forwarded-for": "203.0.113.99" })).status).toBe(303);
  });

  it("throttles an address after 20 failures across accounts", async () => {
    const address = { "x-forwarded-for": "192.0.2.50" };
    for (let attempt = 1; attempt <= 20; attempt++) {
      const response = await postForm(base, "/sign-in", null, { email: `guess${attempt}@example.com`, password: "a guessed password" }, address);
      expect(response.status).toBe(401);
    }
    expect((await postForm(base, "/sign-in", null, BOB, address)).status).toBe(429);
    expect((await postForm(base, "/sign-in", null, BOB, { "x-forwarded-for": "192.0.2.51" })).status).toBe(303);
  });
});

describe("key ownership", () => {
  it("shows a member only their keys; another member's key is 404 to list, open, rename and revoke", async () => {
    const bob = await signInHttp(base, BOB.email, BOB.password);
    const carol = await signInHttp(base, CAROL.email, CAROL.password);
    const { id, secret } = await createKeyThroughConsole(bob, "bob's private key");

    const carolsList = await (await get("/keys", carol)).text();
    expect(carolsList).not.toContain("bob&#39;s private key");
    expect(carolsList).not.toContain(id);
    expect((await get(`/keys/${id}`, carol)).status).toBe(404);
    expect((await get(`/keys/${id}/revoke`, carol)).status).toBe(404);
    expect((await postForm(base, `/keys/${id}/revoke`, carol, {})).status).toBe(404);
    expect((await postForm(base, `/keys/${id}`, carol, { name: "stolen" })).status).toBe(404);
    // The same answer as for a key that does not exist at all.
    expect((await get("/keys/aaaaaaaaaaaa", carol)).status).toBe(404);

    const record = await atelier.services.keys.get(id);
    expect(record).toMatchObject({ name: "bob's private key", revokedAt: null });
    expect((await fetch(`${base}/api/v1/prompt/improve`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${secret}` }, body: '{"prompt":"still mine"}' })).status).toBe(200);

    // Bob can; the admin can see it too.
    expect((await get(`/keys/${id}`, bob)).status).toBe(200);
    expect((await postForm(base, `/keys/${id}`, bob, { name: "bob's renamed key" })).status).toBe(303);
    expect((await atelier.services.keys.get(id))?.name).toBe("bob's renamed key");
    const admin = await signInHttp(base, ADMIN.email, ADMIN.password);
    expect(await (await get("/keys", admin)).text()).toContain(id);
    expect((await postForm(base, `/keys/${id}/revoke`, bob, {})).status).toBe(303);
    expect((await atelier.services.keys.get(id))?.revokedAt).not.toBeNull();
  });

  it("keeps members out of admin pages (403) and signed-out visitors out of everything but sign-in", async () => {
    const bob = await signInHttp(base, BOB.email, BOB.password);
    expect((await get("/users", bob)).status).toBe(403);
    expect((await postForm(base, "/users", bob, { email: "x@example.com", password: "x long password", role: "admin" })).status).toBe(403);
    for (const path of ["/keys", "/account", "/users"]) {
      const response = await get(path);
      expect(response.status, path).toBe(303);
      expect(response.headers.get("location"), path).toMatch(/^\/sign-in\?next=/);
    }
    expect((await postForm(base, "/keys", null, { name: "anonymous" })).status).toBe(401);
  });

  it("caps a member's hourly limit at the allowance an admin set", async () => {
    const dave = await atelier.createUser("dave@example.com", "dave's long password", "member");
    await atelier.services.accounts.setKeyAllowance(dave.id, 10);
    const session = await signInHttp(base, "dave@example.com", "dave's long password");
    const tooHigh = await postForm(base, "/keys", session, { name: "greedy", hourlyLimit: "11" });
    expect(tooHigh.status).toBe(400);
    expect(await tooHigh.text()).toContain("Hourly limit must be a whole number from 1 to 10");
    await createKeyThroughConsole(session, "default limit");
    const keys = await atelier.services.keys.list({ ownerId: dave.id });
    expect(keys.map((key) => key.hourlyLimit)).toEqual([10]);
  });

  it("revokes a disabled user's keys and ends their sessions", async () => {
    const erin = await atelier.createUser("erin@example.com", "erin's long password", "member");
    const session = await signInHttp(base, "erin@example.com", "erin's long password");
    const { secret } = await createKeyThroughConsole(session, "erin's key");
    const admin = await signInHttp(base, ADMIN.email, ADMIN.password);
    expect((await postForm(base, `/users/${erin.id}`, admin, { action: "disable" })).status).toBe(303);
    expect((await get("/keys", session)).status).toBe(303);
    const refused = await fetch(`${base}/api/v1/prompt/improve`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${secret}` }, body: '{"prompt":"x"}' });
    expect(refused.status).toBe(401);
    expect((await postForm(base, "/sign-in", null, { email: "erin@example.com", password: "erin's long password" })).status).toBe(401);
  });
});

describe("API key errors", () => {
  it("answers an expired key with 401 KEY_EXPIRED saying it expired", async () => {
    const { key } = await atelier.services.keys.create({ name: "short-lived", expiresAt: new Date(Date.now() + 300) });
    await new Promise((resolve) => setTimeout(resolve, 400));
    const response = await fetch(`${base}/api/v1/prompt/improve`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: '{"prompt":"late"}' });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="atelier", error="invalid_token"');
    const body = (await response.json()) as { code: string; message: string };
    expect(body.code).toBe("KEY_EXPIRED");
    expect(body.message).toMatch(/^The API key expired at \d{4}-/);
  });
});

describe("API key scopes", () => {
  it("answers an operation outside the key's scopes with 403 KEY_SCOPE_DENIED and insufficient_scope", async () => {
    const { key } = await atelier.services.keys.create({ name: "generate only", scopes: ["generate"] });
    const response = await fetch(`${base}/api/v1/prompt/improve`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: '{"prompt":"no"}' });
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="atelier", error="insufficient_scope"');
    expect(((await response.json()) as { code: string }).code).toBe("KEY_SCOPE_DENIED");
  });
});

describe("headers", () => {
  it("sends the strict CSP, no-store and anti-framing headers on every console page", async () => {
    const admin = await signInHttp(base, ADMIN.email, ADMIN.password);
    const key = (await atelier.services.keys.list())[0]!;
    const user = (await atelier.services.accounts.listUsers())[1]!;
    for (const [path, session] of [
      ["/sign-in", null],
      ["/invite", null],
      ["/keys", admin],
      [`/keys/${key.id}`, admin],
      [`/keys/${key.id}/revoke`, admin],
      ["/account", admin],
      ["/users", admin],
      [`/users/${user.id}`, admin],
    ] as const) {
      const response = await get(path, session);
      expect(response.status, path).toBe(200);
      const csp = response.headers.get("content-security-policy") ?? "";
      expect(csp, path).toContain("default-src 'none'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).toContain("style-src 'self'");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).not.toContain("unsafe-inline");
      expect(response.headers.get("x-frame-options"), path).toBe("DENY");
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(response.headers.get("cache-control"), path).toBe("no-store");
      const page = await response.text();
      expect(page, path).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
      expect(page, path).not.toMatch(/\sstyle=|<style/); // no inline style
    }
  });

  it("serves assets itself with a content hash and a one-year immutable cache", async () => {
    const page = await (await get("/sign-in")).text();
    const css = /href="(\/assets\/console\.css\?v=[0-9a-f]{12})"/.exec(page)?.[1];
    expect(css).toBeDefined();
    const response = await get(css!);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/css/);
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect((await get("/assets/../package.json")).status).toBe(404);
  });

  it("leaves the API's own responses alone (JSON 404, no console headers)", async () => {
    const response = await get("/api/v1/nope");
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/json/);
    expect(response.headers.get("content-security-policy")).toBeNull();
  });
});

describe("one-time secrets follow Post/Redirect/Get", () => {
  it("creates a key with one POST that redirects; its page shows the secret once, and a reload neither shows it nor creates a key", async () => {
    const session = await signInHttp(base, BOB.email, BOB.password);
    const keysBefore = (await atelier.services.keys.list()).length;
    const { redirect, page } = await postFormAndFollow(base, "/keys", session, { name: "made once" });
    const location = redirect.headers.get("location")!;
    expect(location).toMatch(/^\/keys\/[^/]+\/created$/);
    const secret = /id="new-key-secret"[^>]*value="(atl_[^"]+)"/.exec(await page.text())?.[1];
    expect(secret).toBeDefined();
    secrets.push(secret!);
    // The secret travels in neither the address nor a cookie.
    expect(location).not.toContain(secret!.slice(17));
    for (const cookie of [...setCookies(redirect), ...setCookies(page)]) expect(cookie).not.toContain(secret!.slice(17));
    expect(page.headers.get("cache-control")).toBe("no-store");

    const reloaded = await get(location, session);
    expect(reloaded.status).toBe(200);
    const text = await reloaded.text();
    expect(text).not.toContain(secret!.slice(17));
    expect(text).toContain("The key’s secret is no longer shown");
    expect(text).toMatch(/<details class="create-key" open>/);
    expect((await atelier.services.keys.list()).length).toBe(keysBefore + 1);
  });

  it("shows a new invite link once after its redirect; a reload shows none and says so", async () => {
    const admin = await signInHttp(base, ADMIN.email, ADMIN.password);
    const { redirect, page } = await postFormAndFollow(base, "/users/invite", admin, { email: "invited-once@example.com", role: "member" });
    expect(redirect.headers.get("location")).toBe("/users/invite");
    const link = /id="invite-link"[^>]*value="([^"]+)"/.exec(await page.text())?.[1];
    expect(link).toMatch(/\/invite#[A-Za-z0-9_-]{43}$/);
    const reloaded = await (await get("/users/invite", admin)).text();
    expect(reloaded).not.toContain(link!.split("#")[1]!);
    expect(reloaded).toContain("The invite link is no longer shown");
  });

  it("rotates a key's webhook signing secret once: reloading the page that shows it rotates nothing", async () => {
    const session = await signInHttp(base, BOB.email, BOB.password);
    const { id } = await createKeyThroughConsole(session, "webhooks");
    const { redirect, page } = await postFormAndFollow(base, `/keys/${id}/webhook-secret`, session, { action: "rotate" });
    expect(redirect.headers.get("location")).toBe(`/keys/${id}/webhook-secret`);
    const rotated = /id="webhook-secret"[^>]*value="(whsec_[^"]+)"/.exec(await page.text())?.[1];
    expect(rotated).toBeDefined();
    const again = await get(`/keys/${id}/webhook-secret`, session);
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe(`/keys/${id}`);
    const { page: shown } = await postFormAndFollow(base, `/keys/${id}/webhook-secret`, session, { action: "show" });
    expect(/id="webhook-secret"[^>]*value="(whsec_[^"]+)"/.exec(await shown.text())?.[1]).toBe(rotated);
  });
});

describe("secrets at rest and in logs", () => {
  it("keeps no password, key secret or session id in the database files or the logs", async () => {
    const session = await signInHttp(base, BOB.email, BOB.password);
    const sessionId = decodeURIComponent(session.cookie.split("=")[1]!);
    const files = fs.readdirSync(atelier.dataDir).filter((name) => /\.db(-wal|-shm)?$/.test(name));
    expect(files).toContain("atelier.db");
    const stored = Buffer.concat(files.map((name) => fs.readFileSync(path.join(atelier.dataDir, name))));
    const logs = atelier.logText();
    expect(logs).toContain("console sign-in");
    expect(secrets.length).toBeGreaterThan(6);
    for (const secret of [...secrets, sessionId, session.csrfToken]) {
      expect(stored.includes(Buffer.from(secret)), `stored: ${secret.slice(0, 8)}…`).toBe(false);
      expect(logs.includes(secret), `logged: ${secret.slice(0, 8)}…`).toBe(false);
    }
  });
});

describe("sign-up modes", () => {
  it("offers no sign-up page unless ATELIER_SIGNUP=open, and then creates members only", async () => {
    expect((await get("/sign-up")).status).toBe(404);
    const open = await startConsoleService({ ATELIER_SIGNUP: "open" });
    try {
      const page = await fetch(`${open.url}/sign-up`);
      expect(page.status).toBe(200);
      const response = await fetch(`${open.url}/sign-up`, {
        method: "POST",
        redirect: "manual",
        headers: { origin: open.url, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email: "self@example.com", password: "self-made passphrase", role: "admin" }),
      });
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe("/keys");
      expect(await open.services.accounts.findUserByEmail("self@example.com")).toMatchObject({ role: "member" });
    } finally {
      await open.close();
    }
  });
});
