/**
 * The console took its own origin from the request's `Host`: a DNS-rebinding page (its own name
 * pointed at the service) passed the origin check on the public forms under that name, and a
 * forged `Host` on an admin's request gave an invite link to another site. ATELIER_PUBLIC_URL now
 * names the origin: console requests for any other host are refused (421), form posts are checked
 * against it and links are written with it. Without it, a console listening on loopback answers
 * loopback names only. The API and the health endpoints answer whatever the Host.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../core/config.js";
import { problemsOf } from "../../support/config-problems.js";
import { rawRequest, type RawAnswer } from "../support/hostile-service.js";
import { startConsoleService, type ConsoleService } from "../../console/support/console-service.js";

const ADMIN = { email: "admin@example.com", password: "admin password 12345" };
const PUBLIC_URL = "https://atelier.example.com";

/** A request with the given `Host` (fetch always sends the URL's own). */
function request(service: ConsoleService, method: string, path: string, host: string, headers: Record<string, string> = {}, form?: Record<string, string>): Promise<RawAnswer> {
  const body = form ? new URLSearchParams(form).toString() : undefined;
  return rawRequest(service.port, method, path, { host, ...(body ? { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body) } : {}), ...headers }, body);
}

/** Signs in under `host` with `origin`; the answer, and the session cookie it set, if any. */
async function signIn(service: ConsoleService, host: string, origin: string): Promise<{ answer: RawAnswer; cookie: string | undefined }> {
  const answer = await request(service, "POST", "/sign-in", host, { origin }, ADMIN);
  const cookie = (answer.headers["set-cookie"] ?? []).find((line) => line.startsWith("atelier_session="))?.split(";")[0];
  return { answer, cookie };
}

/** Creates an invite as the signed-in admin, sending `host`; the answer, or the page its redirect leads to (with that `host`). */
async function invite(service: ConsoleService, host: string, origin: string, session: { cookie: string; host: string }): Promise<RawAnswer> {
  const keys = await request(service, "GET", "/keys", session.host, { cookie: session.cookie });
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(keys.body)![1]!;
  const made = await request(service, "POST", "/users/invite", host, { origin, cookie: session.cookie }, { _csrf: csrf, email: "new@example.com", role: "member" });
  const location = made.headers.location;
  return made.status === 303 && typeof location === "string" ? request(service, "GET", location, host, { cookie: session.cookie }) : made;
}

describe("ATELIER_PUBLIC_URL", () => {
  it("takes an origin, written as browsers write it, and refuses anything more at start-up", () => {
    expect(loadConfig({}).console.publicOrigin).toBeUndefined();
    expect(loadConfig({ ATELIER_PUBLIC_URL: "https://Atelier.Example.com:443/" }).console.publicOrigin).toBe(PUBLIC_URL);
    expect(loadConfig({ ATELIER_PUBLIC_URL: "http://localhost:8080" }).console.publicOrigin).toBe("http://localhost:8080");
    for (const value of ["https://atelier.example.com/console", "https://atelier.example.com/?a=1", "https://user:pw@atelier.example.com", "ftp://atelier.example.com", "atelier.example.com"]) {
      expect(problemsOf({ ATELIER_PUBLIC_URL: value }), value).toEqual([expect.stringMatching(/^ATELIER_PUBLIC_URL: Expected the address browsers open/)]);
    }
  });
});

describe("with ATELIER_PUBLIC_URL", () => {
  let service: ConsoleService;
  const publicHost = new URL(PUBLIC_URL).host;
  beforeAll(async () => {
    service = await startConsoleService({ ATELIER_PUBLIC_URL: PUBLIC_URL });
    await service.createUser(ADMIN.email, ADMIN.password, "admin");
  });
  afterAll(async () => {
    await service?.close();
  });

  it("refuses console requests for any other host with 421 and says where the console is", async () => {
    for (const host of ["rebind.example", `127.0.0.1:${service.port}`, "atelier.example.com.evil.example", "atelier.example.com:8443", "evil.example@atelier.example.com"]) {
      const answer = await request(service, "GET", "/sign-in", host);
      expect(answer.status, host).toBe(421);
      expect(answer.body, host).toContain(`${PUBLIC_URL} (ATELIER_PUBLIC_URL)`);
    }
    for (const host of [publicHost, "ATELIER.example.com", `${publicHost}:443`]) expect((await request(service, "GET", "/sign-in", host)).status, host).toBe(200);
  });

  it("refuses a rebinding page's sign-in, which matched its own Host", async () => {
    const { answer, cookie } = await signIn(service, "rebind.example", "http://rebind.example");
    expect(answer.status).toBe(421);
    expect(cookie).toBeUndefined();
  });

  it("checks form posts against the public origin, scheme included", async () => {
    expect((await signIn(service, publicHost, "http://atelier.example.com")).answer.status).toBe(403);
    const { answer, cookie } = await signIn(service, publicHost, PUBLIC_URL);
    expect(answer.status).toBe(303);
    expect(cookie).toBeDefined();
  });

  it("writes invite links with the public URL, and gives none to a request with a forged Host", async () => {
    const { cookie } = await signIn(service, publicHost, PUBLIC_URL);
    const session = { cookie: cookie!, host: publicHost };
    const made = await invite(service, publicHost, PUBLIC_URL, session);
    expect(made.status).toBe(200);
    expect(made.body).toMatch(new RegExp(`id="invite-link"[^>]*value="${PUBLIC_URL}/invite#[^"]+"`));
    const forged = await invite(service, "evil.example", PUBLIC_URL, session);
    expect(forged.status).toBe(421);
    expect(forged.body).not.toContain("/invite#");
  });

  it("answers the API and the health endpoints whatever the Host (probes and internal callers use pod addresses and service names)", async () => {
    for (const host of ["10.1.2.3:8080", "atelier-router.default.svc"]) {
      expect((await request(service, "GET", "/healthz", host)).status, host).toBe(200);
      expect([200, 503], host).toContain((await request(service, "GET", "/readyz", host)).status);
      const models = await request(service, "GET", "/api/v1/models", host);
      expect(models.status, host).toBe(200);
      expect(JSON.parse(models.body)).toHaveProperty("data");
    }
  });
});

describe("without ATELIER_PUBLIC_URL, listening on loopback", () => {
  let service: ConsoleService;
  beforeAll(async () => {
    service = await startConsoleService();
    await service.createUser(ADMIN.email, ADMIN.password, "admin");
  });
  afterAll(async () => {
    await service?.close();
  });

  it("refuses a DNS-rebinding page's sign-in, whose Origin matched its own Host", async () => {
    const host = `rebind.example:${service.port}`;
    expect((await request(service, "GET", "/sign-in", host)).status).toBe(421);
    const { answer, cookie } = await signIn(service, host, `http://${host}`);
    expect(answer.status).toBe(421);
    expect(answer.body).toContain("ATELIER_PUBLIC_URL");
    expect(cookie).toBeUndefined();
  });

  it("still answers loopback names, and writes invite links with the request's own origin", async () => {
    for (const name of ["127.0.0.1", "localhost", "[::1]", "127.1.2.3"]) {
      const host = `${name}:${service.port}`;
      expect((await request(service, "GET", "/sign-in", host)).status, host).toBe(200);
      const { answer, cookie } = await signIn(service, host, `http://${host}`);
      expect(answer.status, host).toBe(303);
      if (name !== "localhost") continue;
      const made = await invite(service, host, `http://${host}`, { cookie: cookie!, host });
      expect(made.body).toMatch(new RegExp(`value="http://localhost:${service.port}/invite#[^"]+"`));
    }
  });
});
