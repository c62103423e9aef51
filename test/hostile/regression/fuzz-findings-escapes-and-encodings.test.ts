/**
 * What the console and jobs fuzzer (test/hostile/console-jobs-fuzz.test.ts) found, pinned with
 * plain requests:
 * - a console form sent with `Content-Encoding: gzip` (or br, deflate) whose bytes do not inflate
 *   answered 500 "Something went wrong" and logged an error: the form parser's 400 was not
 *   recognised;
 * - a path parameter with a malformed %-escape (`/keys/%zz`, `/api/v1/jobs/%zz`) answered 500, a
 *   console error page or `INTERNAL` JSON, where the request is at fault.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postForm, signInHttp, type HttpSession } from "../../console/support/console-service.js";
import { startTestService, type TestService } from "../../support/test-service.js";
import { errorCodeOf, rawRequest } from "../support/hostile-service.js";

const ADMIN = { email: "admin@example.com", password: "admin password 12345" };

let service: TestService;
let session: HttpSession;
let key: string;
beforeAll(async () => {
  service = await startTestService();
  await service.services.accounts.createUser({ ...ADMIN, role: "admin" });
  session = await signInHttp(service.url, ADMIN.email, ADMIN.password);
  key = await service.createKey("escapes");
});
afterAll(() => service?.close());

describe("console forms whose content encoding does not decode", () => {
  for (const coding of ["gzip", "br", "deflate"]) {
    it(`answer 400 "Bad form" for ${coding} bytes that are not ${coding}`, async () => {
      const signedIn = await postForm(service.url, "/account/profile", session, { displayName: "Ada" }, { "content-encoding": coding });
      expect(signedIn.status).toBe(400);
      expect(await signedIn.text()).toContain("<title>Bad form");
      const signedOut = await postForm(service.url, "/sign-in", null, { email: ADMIN.email, password: "x" }, { "content-encoding": coding });
      expect(signedOut.status).toBe(400);
    });
  }
});

describe("a malformed %-escape in a path parameter", () => {
  it("is a 400 page in the console, signed in or not", async () => {
    for (const path of ["/keys/%zz", "/jobs/%E0%A4%A/state", "/users/%"]) {
      const signedIn = await rawRequest(service.port, "GET", path, { cookie: session.cookie });
      expect(signedIn.status, path).toBe(400);
      expect(signedIn.body).toContain("<title>Bad address");
    }
    const posted = await postForm(service.url, "/keys/%zz/revoke", session, {});
    expect(posted.status).toBe(400);
  });

  it("is a 400 INVALID_INPUT JSON error on the jobs API", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/jobs/%zz"],
      ["GET", "/api/v1/jobs/%zz/events"],
      ["GET", "/api/v1/jobs/%E0%A4%A/result"],
      ["DELETE", "/api/v1/jobs/%"],
    ] as const) {
      const answer = await rawRequest(service.port, method, path, { authorization: `Bearer ${key}` });
      expect(answer.status, `${method} ${path}`).toBe(400);
      expect(answer.headers["content-type"]).toMatch(/^application\/json/);
      expect(errorCodeOf(answer.body)).toBe("INVALID_INPUT");
    }
  });
});
