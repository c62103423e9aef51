/**
 * One Atelier with its console for a test file: its own data folder, every log line captured (to
 * prove no secret is ever logged), and helpers to make users and to sign in over plain HTTP.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { loadConfig } from "../../../core/config.js";
import { startAtelier, type RunningAtelier } from "../../../bin/start-atelier.js";
import type { User, UserRole } from "../../../server/accounts/account-store.js";
import { startOverOwnDir } from "../../support/make-temp-dir.js";

export interface ConsoleService extends RunningAtelier {
  dataDir: string;
  /** Everything logged so far, one JSON line per entry. */
  logText(): string;
  createUser(email: string, password: string, role?: UserRole): Promise<User>;
}

/** `close()` removes the service's temporary data folder once it has closed (not one given in `env`). */
export async function startConsoleService(env: Record<string, string> = {}): Promise<ConsoleService> {
  if (env.ATELIER_DATA_DIR !== undefined) return startOver(env, env.ATELIER_DATA_DIR);
  return startOverOwnDir("test", (dataDir) => startOver(env, dataDir));
}

async function startOver(env: Record<string, string>, dataDir: string): Promise<ConsoleService> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", ATELIER_DATA_DIR: dataDir, ...env });
  const running = await startAtelier(config, pino({ level: "trace" }, sink));
  return {
    ...running,
    dataDir,
    logText: () => lines.join(""),
    createUser: (email, password, role = "member") => running.services.accounts.createUser({ email, password, role }),
  };
}

/** A cookie jar of one: the session cookie a sign-in set, for fetch-based tests. */
export interface HttpSession {
  cookie: string;
  csrfToken: string;
}

/** `name=value` of every Set-Cookie in the response. */
export function setCookies(response: Response): string[] {
  return response.headers.getSetCookie();
}

/** Signs in over HTTP as a browser would (same Origin), returning the session cookie and its CSRF token. */
export async function signInHttp(baseUrl: string, email: string, password: string, headers: Record<string, string> = {}): Promise<HttpSession> {
  const response = await fetch(`${baseUrl}/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { origin: baseUrl, "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ email, password }),
  });
  if (response.status !== 303) throw new Error(`sign-in as ${email} answered ${response.status}`);
  const cookie = setCookies(response).find((line) => line.includes("atelier_session="))!.split(";")[0]!;
  const page = await fetch(`${baseUrl}/keys`, { headers: { cookie } });
  const token = /<meta name="csrf-token" content="([^"]+)">/.exec(await page.text())?.[1];
  if (!token) throw new Error("no CSRF token on the keys page");
  return { cookie, csrfToken: token };
}

/** POSTs a console form with the session (and, unless overridden, this site's Origin and the token). */
export function postForm(baseUrl: string, path: string, session: HttpSession | null, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  const body = new URLSearchParams({ ...(session ? { _csrf: session.csrfToken } : {}), ...fields });
  return fetch(`${baseUrl}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { origin: baseUrl, "content-type": "application/x-www-form-urlencoded", ...(session ? { cookie: session.cookie } : {}), ...headers },
    body,
  });
}

/**
 * POSTs a console form that answers with a redirect (Post/Redirect/Get), then GETs the page it leads
 * to with the session, as a browser would: the redirect and the page.
 */
export async function postFormAndFollow(baseUrl: string, path: string, session: HttpSession, fields: Record<string, string>): Promise<{ redirect: Response; page: Response }> {
  const redirect = await postForm(baseUrl, path, session, fields);
  const location = redirect.headers.get("location");
  if (redirect.status !== 303 || !location) throw new Error(`POST ${path} answered ${redirect.status}, not a 303 redirect`);
  const page = await fetch(new URL(location, baseUrl), { redirect: "manual", headers: { cookie: session.cookie } });
  return { redirect, page };
}
