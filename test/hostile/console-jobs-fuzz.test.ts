/**
 * A fuzzer with a fixed seed (fast-check) over every console form and the jobs API, against a real
 * service in a process of its own. The console forms are posted as a signed-in admin with the
 * session's CSRF token and the site's Origin (most of the time), so the inputs reach the form
 * handlers; bodies are urlencoded, raw, JSON or bytes in other charsets, under right and wrong
 * content types, with odd, huge and unicode values and repeated, extra and missing fields. The jobs
 * API gets submissions with fuzzed Prefer, Idempotency-Key, Accept and webhookUrl, and get, list,
 * cancel, events and result calls with odd ids, query strings and Last-Event-ID.
 * No answer is a 5xx the input caused; every API error is JSON with a code; the process is still up
 * at the end, and its heap (after a full collection) has not grown beyond a generous bound since a
 * warm-up pass.
 */
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { openAccountStore } from "../../server/accounts/open-account-store.js";
import { openApiKeyStore } from "../../server/keys/open-api-key-store.js";
import { MODEL_CATALOG } from "../../models/catalog/model-catalog.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { acceptableForBadInput, errorCodeOf, rawRequest, type RawAnswer } from "./support/hostile-service.js";
import { startServiceProcess, type ProcessMemory, type ServiceProcess } from "./support/service-process.js";

const SEED = 20261128;
/** Runs of each form's fuzzer; forms that may hash a password (scrypt, deliberately slow) get fewer. */
const FORM_RUNS = 16;
const HASHING_FORM_RUNS = 8;
const JOBS_RUNS = 80;
const WARM_UP_RUNS = 1;
const MiB = 2 ** 20;

const ADMIN = { email: "admin@example.com", password: "admin password 12345" };
const MEMBER = { email: "member@example.com", password: "member password 12345" };

// The service runs in its own process: this one loads only the stores that seed it, not the service.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-test-"));
// An empty model mirror: console installs run the real installer and fail at once, offline.
const emptyMirror = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-empty-mirror-"));
const ENV: Record<string, string> = {
  ATELIER_DATA_DIR: dataDir,
  // SQLite in the data folder, whatever the environment running the tests names.
  ATELIER_DATABASE_URL: "",
  ATELIER_REDIS_URL: "",
  ATELIER_SIGNUP: "open",
  ATELIER_MODEL_MIRROR: emptyMirror,
  ATELIER_JOB_MAX_WAIT_SECONDS: "1",
  ATELIER_FETCH_TIMEOUT_MS: "500",
  ATELIER_ALLOWED_PRIVATE_HOSTS: "",
};

interface Fixtures {
  /** Secret of the admin's key the jobs fuzzer calls with. */
  apiKey: string;
  /** Secret of the member's key, whose jobs the admin's key must not see. */
  memberKey: string;
  adminId: string;
  memberId: string;
  /** Admin-owned keys the console forms may rename, rotate and revoke (never the two above). */
  consoleKeyIds: string[];
  /** Jobs of `apiKey`: a succeeded upscale, a finished generation, then every job the submissions fuzzer made. */
  jobIds: string[];
  memberJobId: string;
  inviteCodes: string[];
}

/** A signed-in browser: its session cookie and the CSRF token the console's pages carry. */
interface Session {
  cookie: string;
  csrfToken: string;
}

let service: ServiceProcess;
let session: Session;
let adminPassword = ADMIN.password;
let fixtures: Fixtures;
let image: string;

async function createAccountsAndKeys(): Promise<Omit<Fixtures, "jobIds" | "memberJobId">> {
  const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", ...ENV });
  const accounts = await openAccountStore(config);
  const admin = await accounts.createUser({ ...ADMIN, role: "admin" });
  const member = await accounts.createUser({ ...MEMBER, role: "member" });
  const inviteCodes = [(await accounts.createInvite("invited@example.com", "member", admin.id)).code, (await accounts.createInvite("boss@example.com", "admin", admin.id)).code];
  await accounts.close();
  const keys = await openApiKeyStore(config);
  const apiKey = (await keys.create({ name: "jobs fuzz", hourlyLimit: 1_000_000, ownerId: admin.id })).key;
  const memberKey = (await keys.create({ name: "member", hourlyLimit: 1_000_000, ownerId: member.id })).key;
  const consoleKeyIds: string[] = [];
  for (const name of ["one", "two", "three"]) consoleKeyIds.push((await keys.create({ name, hourlyLimit: null, ownerId: admin.id })).record.id);
  await keys.close();
  return { apiKey, memberKey, adminId: admin.id, memberId: member.id, consoleKeyIds, inviteCodes };
}

async function submitJob(key: string, operation: string, body: Record<string, unknown>): Promise<string> {
  const answer = await rawRequest(service.port, "POST", `/api${operation}`, { "content-type": "application/json", authorization: `Bearer ${key}`, prefer: "respond-async" }, JSON.stringify(body));
  expect(answer.status, answer.body).toBe(202);
  return (JSON.parse(answer.body) as { id: string }).id;
}

/** The job's final status, once it has one (a generous deadline: the queue is short). */
async function finished(key: string, id: string): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { status } = JSON.parse((await rawRequest(service.port, "GET", `/api/v1/jobs/${id}`, { authorization: `Bearer ${key}` })).body) as { status: string };
    if (["succeeded", "failed", "canceled"].includes(status) || Date.now() > deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let baseline: ProcessMemory;

beforeAll(async () => {
  const accountsAndKeys = await createAccountsAndKeys();
  service = await startServiceProcess(ENV);
  session = await signIn(ADMIN.email, ADMIN.password);
  image = dataUrl(await gradientPng(8, 8));
  const upscale = await submitJob(accountsAndKeys.apiKey, "/v1/tools/upscale", { imageUrl: image, scale: 2, model: "lanczos" });
  const generation = await submitJob(accountsAndKeys.apiKey, "/v1/generate", { prompt: "a red bicycle", width: 256, height: 256 });
  const memberJobId = await submitJob(accountsAndKeys.memberKey, "/v1/tools/upscale", { imageUrl: image, scale: 2, model: "lanczos" });
  expect(await finished(accountsAndKeys.apiKey, upscale)).toBe("succeeded");
  // Failed, unless a generation model ships with the service: either way a finished job of another kind.
  expect(["succeeded", "failed"]).toContain(await finished(accountsAndKeys.apiKey, generation));
  fixtures = { ...accountsAndKeys, jobIds: [upscale, generation], memberJobId };
}, 120_000);

afterAll(async () => {
  await service?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(emptyMirror, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Values

const latin1Char = fc.integer({ min: 0x20, max: 0xff }).filter((code) => code !== 0x7f).map((code) => String.fromCharCode(code));
/** Any value a header may carry on the wire (Node refuses to send control characters). */
const headerValue = fc.string({ unit: latin1Char, maxLength: 80 });
/** The text with any lone surrogate replaced (encodeURIComponent and URLSearchParams need well-formed text). */
const wellFormed = (text: string) => text.replace(/\p{Cs}/gu, "\ufffd");

/** Odd values for any form field or query parameter. */
const oddValue = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom("", " ", "0", "-1", "1.5", "1e309", "NaN", "Infinity", "9".repeat(400), "0x10", "2030-02-31", "9999-12-31", "0000-00-00", "admin", "member", "__proto__", "\u0000", "<script>alert(1)</script>", "%zz", "a\r\nb", "\u202e\ufeff", "😀".repeat(100)),
  },
  { weight: 1, arbitrary: fc.constantFrom(1_000, 20_000, 70_000).map((length) => "x".repeat(length)) },
);
const plausibleEmail = fc.oneof(fc.emailAddress(), fc.constantFrom(ADMIN.email, MEMBER.email, "ADMIN@EXAMPLE.COM", " admin@example.com ", "a@b", "@", "x@localhost"));
const plausiblePassword = fc.oneof(fc.string({ minLength: 10, maxLength: 30 }), fc.string({ unit: "grapheme", minLength: 10, maxLength: 20 }), fc.constantFrom("short", "x".repeat(257), "ﬀ".repeat(10)));
const oneOf = (...values: string[]) => fc.constantFrom(...values);
/** `value` in one draw of `outOf`, else null (absent). */
const sometimes = <T>(value: fc.Arbitrary<T>, outOf: number): fc.Arbitrary<T | null> => fc.oneof({ weight: outOf - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: value });

/** An id in a path: a real one, or anything at all, percent-encoded or not. */
const pathId = (real: () => string[]) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(null).chain(() => fc.constantFrom(...real())) },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 30 }).map((text) => encodeURIComponent(wellFormed(text))) },
    { weight: 1, arbitrary: fc.constantFrom("%zz", "%", "%E0%A4%A", "..", "%2e%2e", "%2F", "%00", "job_", "key_", "null", "__proto__", "constructor", "a".repeat(5000), "%F0%9F%98%80", "1;2", "x%20y") },
  );

// ---------------------------------------------------------------------------------------------
// Console forms

interface ConsoleForm {
  /** The form's action path, or paths with an id in them. */
  path: fc.Arbitrary<string>;
  /** Each field the form sends, with values a person might type. */
  fields: Record<string, fc.Arbitrary<string>>;
  /** Posted with the admin's session, its CSRF token and this site's Origin; public forms go without a session. */
  signedIn: boolean;
  runs: number;
  /** Called with each answer that got past the guards (to follow a password change). */
  after?: (fields: [string, string][], answer: RawAnswer) => Promise<void>;
}

const keyIds = () => fixtures.consoleKeyIds;
const MODEL_IDS = MODEL_CATALOG.map((entry) => entry.id);

/** Every POST form of console/pages, by its action. */
const CONSOLE_FORMS: Record<string, ConsoleForm> = {
  "sign-in": {
    path: fc.constant("/sign-in"),
    fields: { email: plausibleEmail, password: plausiblePassword, next: oneOf("/keys", "//evil.example", "/\\evil", "https://evil.example/", "/sign-in", "/jobs?x=1") },
    signedIn: false,
    runs: HASHING_FORM_RUNS,
  },
  "sign-up": {
    path: fc.constant("/sign-up"),
    fields: { email: plausibleEmail, displayName: oddValue, password: plausiblePassword },
    signedIn: false,
    runs: HASHING_FORM_RUNS,
  },
  "invite accept": {
    path: fc.constant("/invite"),
    fields: { code: fc.oneof(fc.constant(null).chain(() => fc.constantFrom(...fixtures.inviteCodes)), fc.string({ maxLength: 60 })), displayName: oddValue, password: plausiblePassword },
    signedIn: false,
    runs: HASHING_FORM_RUNS,
  },
  "sign-out": { path: fc.constant("/sign-out"), fields: {}, signedIn: false, runs: 6 },
  "account profile": { path: fc.constant("/account/profile"), fields: { displayName: oddValue }, signedIn: true, runs: FORM_RUNS },
  "account password": {
    path: fc.constant("/account/password"),
    fields: { currentPassword: fc.oneof(fc.constant(null).map(() => adminPassword), plausiblePassword), newPassword: plausiblePassword, username: plausibleEmail },
    signedIn: true,
    runs: HASHING_FORM_RUNS,
    // A changed password ends every session, this one too, and starts a fresh one for this browser.
    after: async (fields, answer) => {
      if (answer.status !== 303) return;
      adminPassword = fields.find(([name]) => name === "newPassword")![1];
      session = (await sessionFrom(answer)) ?? session;
    },
  },
  "account invite": { path: fc.constant("/account/invite"), fields: { email: plausibleEmail }, signedIn: true, runs: FORM_RUNS },
  "key create": {
    path: fc.constant("/keys"),
    fields: {
      name: oddValue,
      expiresOn: oneOf("", "2030-12-31", "2000-01-01", "2030-02-31", "tomorrow", "+275760-09-13", "9999-99-99"),
      hourlyLimit: oneOf("", "1", "0", "-5", "1000000", "1000001", "1e3", "01", " 7 ", "999999999999999999999"),
      scopes: oneOf("upscale", "generate", "style-transfer", "background-remove", "prompt-improve", "models", "everything", ""),
    },
    signedIn: true,
    runs: FORM_RUNS,
  },
  "key rename": { path: pathId(keyIds).map((id) => `/keys/${id}`), fields: { name: oddValue }, signedIn: true, runs: FORM_RUNS },
  "webhook secret show and rotate": {
    path: pathId(keyIds).map((id) => `/keys/${id}/webhook-secret`),
    fields: { action: oneOf("show", "rotate", "ROTATE", "", "delete") },
    signedIn: true,
    runs: FORM_RUNS,
  },
  "key revoke": { path: pathId(keyIds).map((id) => `/keys/${id}/revoke`), fields: {}, signedIn: true, runs: FORM_RUNS },
  "job cancel": { path: pathId(() => [...fixtures.jobIds, fixtures.memberJobId]).map((id) => `/jobs/${id}/cancel`), fields: {}, signedIn: true, runs: FORM_RUNS },
  "user create": {
    path: fc.constant("/users"),
    fields: { email: plausibleEmail, displayName: oddValue, password: plausiblePassword, role: oneOf("member", "admin", "owner", "") },
    signedIn: true,
    runs: HASHING_FORM_RUNS,
  },
  "user invite": { path: fc.constant("/users/invite"), fields: { email: plausibleEmail, role: oneOf("member", "admin", "root") }, signedIn: true, runs: FORM_RUNS },
  // Never the admin's own id: a password set there would end the session the fuzzer runs in.
  "user settings, password, disable": {
    path: pathId(() => [fixtures.memberId]).map((id) => `/users/${id}`),
    fields: {
      action: oneOf("settings", "password", "disable", "enable", "delete", ""),
      role: oneOf("member", "admin", "superuser"),
      keyAllowance: oneOf("", "1", "0", "1000000", "1000001", "-1", "12.5", "99999999999999999999"),
      password: plausiblePassword,
    },
    signedIn: true,
    runs: HASHING_FORM_RUNS,
  },
  "model install, remove, cancel": {
    path: fc.tuple(pathId(() => MODEL_IDS), oneOf("install", "remove", "cancel")).map(([id, action]) => `/models/${id}/${action}`),
    fields: {},
    signedIn: true,
    runs: FORM_RUNS,
  },
};

type FormEncoding = "urlencoded" | "raw" | "json";

function encodeForm(fields: [string, string][], encoding: FormEncoding): string {
  if (encoding === "urlencoded") return new URLSearchParams(fields.map(([name, value]): [string, string] => [wellFormed(name), wellFormed(value)])).toString();
  if (encoding === "json") return JSON.stringify(Object.fromEntries(fields));
  return fields.map(([name, value]) => `${name}=${value}`).join("&");
}

/** A form body: the form's fields (each missing, once or repeated), extra fields, maybe a flood of them. */
function formFields(form: ConsoleForm): fc.Arbitrary<[string, string][]> {
  const own = Object.entries(form.fields).map(([name, plausible]) =>
    fc
      .option(fc.array(fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 2, arbitrary: oddValue }), { minLength: 1, maxLength: 3 }), { freq: 6 })
      .map((values) => (values ?? []).map((value): [string, string] => [name, value])),
  );
  const extra = fc.array(fc.tuple(fc.oneof(oneOf("__proto__", "constructor", "toString", "hasOwnProperty", "a[b]", "scopes[]", "action", "_csrf", ""), fc.string({ maxLength: 12 })), oddValue), { maxLength: 3 });
  const flood = fc.oneof({ weight: 9, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: oneOf("99", "150") }).map((count) => Array.from({ length: Number(count) }, (_, index): [string, string] => [`f${index}`, "1"]));
  return fc.tuple(fc.tuple(...own), extra, flood).map(([fields, extras, flooded]) => [...fields.flat(), ...extras, ...flooded]);
}

const FORM_CONTENT_TYPES = [
  "application/x-www-form-urlencoded",
  "application/x-www-form-urlencoded; charset=utf-8",
  "application/x-www-form-urlencoded; charset=iso-8859-1",
  "application/x-www-form-urlencoded; charset=utf-16",
  "application/x-www-form-urlencoded; charset=",
  "APPLICATION/X-WWW-FORM-URLENCODED",
  "multipart/form-data; boundary=----x",
  "application/json",
  "text/plain",
  "*/*",
];

interface Envelope {
  encoding: FormEncoding;
  bytes: BufferEncoding;
  contentType: string;
  contentEncoding: string | null;
  csrf: "field" | "header" | "none" | "wrong" | "repeated";
  origin: "own" | "referer" | "none" | "other" | "null";
  cookie: string | null;
  /** The models page's script asks for JSON; a plain form submit, for HTML. */
  accept: string | null;
}

/** How the body travels: mostly as the console's own pages send it, so the handler gets it; else anyhow. */
const envelope: fc.Arbitrary<Envelope> = fc.oneof(
  {
    weight: 7,
    arbitrary: fc.record({
      encoding: fc.constant<FormEncoding>("urlencoded"),
      bytes: fc.constant<BufferEncoding>("utf8"),
      contentType: fc.constant(FORM_CONTENT_TYPES[0]!),
      contentEncoding: fc.constant(null),
      csrf: fc.constantFrom<Envelope["csrf"]>("field", "field", "field", "header"),
      origin: fc.constant<Envelope["origin"]>("own"),
      cookie: fc.constant(null),
      accept: sometimes(oneOf("application/json", "text/html,application/xhtml+xml"), 2),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      encoding: fc.constantFrom<FormEncoding>("urlencoded", "raw", "json"),
      bytes: fc.constantFrom<BufferEncoding>("utf8", "latin1", "utf16le"),
      contentType: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...FORM_CONTENT_TYPES) }, { weight: 1, arbitrary: headerValue }),
      contentEncoding: sometimes(oneOf("gzip", "br", "deflate", "identity", "x-unknown"), 2),
      csrf: fc.constantFrom<Envelope["csrf"]>("field", "header", "none", "wrong", "repeated"),
      origin: fc.constantFrom<Envelope["origin"]>("own", "own", "referer", "none", "other", "null"),
      cookie: sometimes(oneOf("atelier_session=forged", "atelier_session=", "atelier_session=%zz; atelier_session=x", "atelier_notice=%E0%A4%A"), 3),
      accept: sometimes(fc.oneof(oneOf("application/json", "*/*", "image/png", "text/html;q=0, application/json;q=0"), headerValue), 2),
    }),
  },
);

const formRequest = (form: ConsoleForm) => fc.record({ path: form.path, fields: formFields(form), envelope });

/**
 * The session an answer started (sign-in, a password change), with the CSRF token read from a page
 * the way the console's own forms and scripts get it; undefined when the answer started none.
 */
async function sessionFrom(answer: RawAnswer): Promise<Session | undefined> {
  const cookie = ([] as string[])
    .concat(answer.headers["set-cookie"] ?? [])
    .map((line) => line.split(";")[0]!)
    .find((pair) => pair.startsWith("atelier_session=") && pair !== "atelier_session=");
  if (!cookie) return undefined;
  const page = await rawRequest(service.port, "GET", "/account", { cookie });
  const csrfToken = /<meta name="csrf-token" content="([^"]+)">/.exec(page.body)?.[1];
  expect(csrfToken, "the account page of a new session carries its CSRF token").toBeDefined();
  return { cookie, csrfToken: csrfToken! };
}

async function signIn(email: string, password: string): Promise<Session> {
  const answer = await rawRequest(service.port, "POST", "/sign-in", { origin: service.url, "content-type": "application/x-www-form-urlencoded" }, new URLSearchParams({ email, password }).toString());
  expect(answer.status, answer.body).toBe(303);
  return (await sessionFrom(answer))!;
}

/** A refusal before the form's handler: origin or CSRF check, no session, body too large or unreadable, an undecodable address. */
function refusedBeforeHandler(answer: RawAnswer): boolean {
  if (answer.status === 413) return true;
  if ((answer.status === 401 || answer.status === 403) && String(answer.headers["content-type"]).startsWith("text/plain")) return true;
  return answer.status === 400 && /<title>Bad (form|address)/.test(answer.body);
}

async function fuzzForm(name: string, form: ConsoleForm, runs: number, seed: number): Promise<{ reached: number }> {
  let reached = 0;
  const own = service.url;
  await fc.assert(
    fc.asyncProperty(formRequest(form), async ({ path: target, fields: formFields, envelope: how }) => {
      const fields: [string, string][] = [...formFields];
      const headers: Record<string, string> = { "content-type": how.contentType };
      if (form.signedIn) {
        headers.cookie = how.cookie ? `${session.cookie}; ${how.cookie}` : session.cookie;
        if (how.csrf === "field") fields.unshift(["_csrf", session.csrfToken]);
        if (how.csrf === "header") headers["x-csrf-token"] = session.csrfToken;
        if (how.csrf === "wrong") fields.unshift(["_csrf", `${session.csrfToken.slice(1)}A`]);
        if (how.csrf === "repeated") fields.unshift(["_csrf", session.csrfToken], ["_csrf", session.csrfToken]);
      } else if (how.cookie) {
        headers.cookie = how.cookie;
      }
      if (how.origin === "own") headers.origin = own;
      if (how.origin === "referer") headers.referer = `${own}/keys`;
      if (how.origin === "other") headers.origin = "https://evil.example";
      if (how.origin === "null") headers.origin = "null";
      if (how.contentEncoding) headers["content-encoding"] = how.contentEncoding;
      if (how.accept) headers.accept = how.accept;
      const body = Buffer.from(encodeForm(fields, how.encoding), how.bytes);
      const answer = await rawRequest(service.port, "POST", target, headers, body);
      const shown = `${name}: POST ${target.slice(0, 120)} ${JSON.stringify(how)} ${body.toString("latin1").slice(0, 300)}`;
      if (process.env.FUZZ_TRACE) console.log("FUZZ", answer.status, shown.slice(0, 400));
      expect(answer.status, `${shown} → ${answer.status} ${answer.body.slice(0, 300)}\n${service.output().slice(-2000)}`).toBeLessThan(500);
      expect(answer.headers["x-request-id"], shown).toBeTruthy();
      if (!refusedBeforeHandler(answer)) {
        reached++;
        await form.after?.(fields, answer);
      }
    }),
    { seed, numRuns: runs },
  );
  return { reached };
}

/** Console pages that read ids and query strings, fetched with odd ones. */
const consoleGet = fc.oneof(
  pathId(keyIds).chain((id) => oneOf(`/keys/${id}`, `/keys/${id}/revoke`)),
  pathId(() => [fixtures.memberId, fixtures.adminId]).map((id) => `/users/${id}`),
  pathId(() => [...fixtures.jobIds, fixtures.memberJobId]).chain((id) => oneOf(`/jobs/${id}`, `/jobs/${id}/state`, `/jobs/${id}/images/0`, `/jobs/${id}/images/-1`, `/jobs/${id}/images/1e3`, `/jobs/${id}/images/%zz`)),
  pathId(() => ["upscale", "generate", "tools.upscale"]).map((id) => `/playground/${id}`),
  fc
    .tuple(oneOf("/jobs", "/usage", "/usage.csv", "/sign-in", "/models/installs", "/keys", "/account", "/reference"), fc.array(fc.tuple(oneOf("status", "key", "before", "next", "from", "to", "range", "group", "page", "status[]"), oddValue), { maxLength: 4 }))
    .map(([page, query]) => (query.length > 0 ? `${page}?${query.map(([name, value]) => `${name}=${encodeURIComponent(wellFormed(value.slice(0, 2000)))}`).join("&")}` : page)),
);

// ---------------------------------------------------------------------------------------------
// Jobs API

const OPERATIONS: { path: string; valid: () => Record<string, unknown> }[] = [
  { path: "/api/v1/tools/upscale", valid: () => ({ imageUrl: image, scale: 2, model: "lanczos", outputFormat: "png" }) },
  { path: "/api/v1/generate", valid: () => ({ prompt: "a red bicycle", width: 256, height: 256 }) },
  { path: "/api/v1/prompt/improve", valid: () => ({ prompt: "a cat", style: "photographic" }) },
  { path: "/api/v1/tools/style-transfer", valid: () => ({ imageUrl: image, style: "udnie", strength: 0.5 }) },
  { path: "/api/v1/tools/background-remove", valid: () => ({ imageUrl: image, model: "portrait-selfie" }) },
];

const preferHeader = fc.oneof(
  { weight: 4, arbitrary: oneOf("respond-async", "respond-async", "wait=1", "wait=0", "respond-async, wait=1", "wait=999999999") },
  { weight: 2, arbitrary: oneOf("wait=-1", "wait=abc", 'wait="1"', "respond-async; foo=bar", "RESPOND-ASYNC", "wait", ",,,", "wait=1, wait=0") },
  { weight: 1, arbitrary: headerValue },
);
// A few keys used again and again, so retries replay and mismatches happen.
const idempotencyKey = fc.oneof(
  { weight: 4, arbitrary: oneOf("retry-1", "retry-2", '"retry-1"') },
  { weight: 2, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: oneOf("", "k".repeat(300)) },
  { weight: 1, arbitrary: headerValue },
);
const webhookUrl = fc.oneof(
  oneOf("http://127.0.0.1:1/hook", "http://[::1]/hook", "http://169.254.169.254/latest", "ftp://example.com/", "javascript:alert(1)", "http://", "https://user:pass@10.0.0.1/", "x".repeat(3000)),
  fc.jsonValue({ maxDepth: 2 }),
);

const submission = fc.record({
  operation: fc.constantFrom(...OPERATIONS),
  body: fc.oneof(
    { weight: 5, arbitrary: fc.constant(null) },
    { weight: 2, arbitrary: fc.record({ field: oneOf("imageUrl", "scale", "model", "prompt", "width", "n", "outputFormat", "webhookUrl", "__proto__"), value: fc.jsonValue({ maxDepth: 3 }) }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value) => ({ raw: JSON.stringify(value) })) },
  ),
  webhookUrl: sometimes(webhookUrl, 6),
  // Mostly with a preference: that is what makes a call a job.
  prefer: fc.oneof({ weight: 4, arbitrary: preferHeader }, { weight: 1, arbitrary: fc.constant(null) }),
  idempotencyKey: sometimes(idempotencyKey, 3),
  accept: sometimes(oneOf("image/png", "image/jpeg", "image/webp", "image/*", "*/*", "application/json", "image/gif", "text/html;q=0.1, image/png", "image/png;q=0"), 3),
});

const jobsQuery = fc
  .array(fc.tuple(oneOf("status", "cursor", "limit", "lastEventId", "status[]", "limit", "extra", "__proto__"), fc.oneof(oneOf("queued", "running", "succeeded", "failed", "canceled", "0", "1", "100", "101", "-1", "1e2", "abc", ""), oddValue)), { maxLength: 4 })
  .map((query) => query.map(([name, value]) => `${name}=${encodeURIComponent(wellFormed(value.slice(0, 2000)))}`).join("&"));

/** Mostly a job of the calling key, so its answers, results and event streams are reached. */
const jobId = fc.oneof(
  { weight: 6, arbitrary: fc.constant(null).chain(() => fc.constantFrom(...fixtures.jobIds)) },
  { weight: 2, arbitrary: pathId(() => [fixtures.memberJobId]) },
  { weight: 1, arbitrary: oneOf("%zz", "%", "%E0%A4%A", "job_%ff%", "%C0%AF") },
);

const jobsCall = fc.record({
  method: fc.oneof({ weight: 6, arbitrary: fc.constant("GET") }, { weight: 1, arbitrary: oneOf("DELETE", "HEAD", "POST", "PUT", "OPTIONS") }),
  target: fc.oneof(
    { weight: 2, arbitrary: fc.constant("/api/v1/jobs") },
    {
      weight: 6,
      arbitrary: fc
        .tuple(jobId, oneOf("", "", "/result", "/result", "/events", "/events", "/", "/result/", "/cancel", "/events/1"))
        .map(([id, rest]) => `/api/v1/jobs/${id}${rest}`),
    },
    { weight: 1, arbitrary: fc.constant("/api/v1/webhooks/secret") },
  ),
  query: fc.oneof(fc.constant(""), jobsQuery),
  lastEventId: sometimes(fc.oneof(oneOf("0", "1", "3", "-1", "1e3", "9007199254740993", "NaN", "0x10", " 2 "), headerValue), 3),
  accept: sometimes(oneOf("image/png", "text/event-stream", "application/json", "*/*", "image/webp;q=0"), 3),
  auth: fc.oneof({ weight: 7, arbitrary: fc.constant("key") }, { weight: 1, arbitrary: oneOf("member", "none", "bogus") }),
});

const authorization = (auth: string): Record<string, string> =>
  auth === "key" ? { authorization: `Bearer ${fixtures.apiKey}` } : auth === "member" ? { authorization: `Bearer ${fixtures.memberKey}` } : auth === "bogus" ? { authorization: "Bearer atl_x_y" } : {};

/** One request whose answer may be a long event stream: read until it ends or for `readMs`, then hang up. */
function requestReading(method: string, target: string, headers: Record<string, string>, readMs: number): Promise<RawAnswer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request({ host: "127.0.0.1", port: service.port, method, path: target, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      const done = () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString(), ms: performance.now() - started });
      const timer = setTimeout(() => {
        done();
        request.destroy();
      }, readMs);
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        clearTimeout(timer);
        done();
      });
    });
    request.on("error", reject);
    request.end();
  });
}

/** An API answer: no 5xx the input caused, a request id, and JSON with an error code for anything but success. */
function checkApi(shown: string, method: string, answer: RawAnswer): void {
  const detail = `${shown} → ${answer.status} ${answer.body.slice(0, 300)}\n${service.output().slice(-2000)}`;
  expect(acceptableForBadInput(answer), detail).toBe(true);
  expect(answer.headers["x-request-id"], detail).toBeTruthy();
  if (method === "HEAD") return;
  const type = String(answer.headers["content-type"] ?? "");
  if (answer.status >= 300) {
    expect(type, detail).toMatch(/^application\/json/);
    expect(errorCodeOf(answer.body), detail).toMatch(/^[A-Z_]+$/);
  } else if (type.startsWith("application/json")) {
    expect(() => JSON.parse(answer.body), detail).not.toThrow();
  } else if (answer.status !== 204 && method !== "OPTIONS") {
    // OPTIONS is answered by express itself with the allowed methods as text.
    expect(type, detail).toMatch(/^(text\/event-stream|image\/)/);
  }
}

async function fuzzSubmissions(runs: number, seed: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(submission, async (call) => {
      let text: string;
      if (call.body !== null && "raw" in call.body) text = call.body.raw;
      else {
        const body: Record<string, unknown> = call.body === null ? call.operation.valid() : { ...call.operation.valid(), [call.body.field]: call.body.value };
        if (call.webhookUrl !== null) body.webhookUrl = call.webhookUrl;
        text = JSON.stringify(body);
      }
      const headers: Record<string, string> = { "content-type": "application/json", authorization: `Bearer ${fixtures.apiKey}` };
      if (call.prefer !== null) headers.prefer = call.prefer;
      if (call.idempotencyKey !== null) headers["idempotency-key"] = call.idempotencyKey;
      if (call.accept !== null) headers.accept = call.accept;
      const answer = await rawRequest(service.port, "POST", call.operation.path, headers, text);
      const shown = `POST ${call.operation.path} ${JSON.stringify({ prefer: call.prefer, idempotencyKey: call.idempotencyKey, accept: call.accept })} ${text.replace(/base64,[A-Za-z0-9+/=]+/, "base64,…").slice(0, 300)}`;
      if (process.env.FUZZ_TRACE) console.log("FUZZ", answer.status, shown.slice(0, 400), answer.body.slice(0, 200));
      checkApi(shown, "POST", answer);
      if (answer.status === 202) fixtures.jobIds.push((JSON.parse(answer.body) as { id: string }).id);
    }),
    { seed, numRuns: runs },
  );
}

async function fuzzJobCalls(runs: number, seed: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(jobsCall, async (call) => {
      const target = call.query ? `${call.target}?${call.query}` : call.target;
      const headers: Record<string, string> = { ...authorization(call.auth) };
      if (call.lastEventId !== null) headers["last-event-id"] = call.lastEventId;
      if (call.accept !== null) headers.accept = call.accept;
      const answer = await requestReading(call.method, target, headers, 3_000);
      const shown = `${call.method} ${target.slice(0, 300)} ${JSON.stringify(headers).slice(0, 200)}`;
      if (process.env.FUZZ_TRACE) console.log("FUZZ", answer.status, shown.slice(0, 400));
      checkApi(shown, call.method, answer);
    }),
    { seed, numRuns: runs },
  );
}

async function fuzzConsolePages(runs: number, seed: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(consoleGet, fc.boolean(), async (target, signedIn) => {
      const answer = await rawRequest(service.port, "GET", target, signedIn ? { cookie: session.cookie } : {});
      const shown = `GET ${target.slice(0, 300)}${signedIn ? " (signed in)" : ""}`;
      if (process.env.FUZZ_TRACE) console.log("FUZZ", answer.status, shown.slice(0, 400));
      expect(answer.status, `${shown} → ${answer.status} ${answer.body.slice(0, 300)}\n${service.output().slice(-2000)}`).toBeLessThan(500);
    }),
    { seed, numRuns: runs },
  );
}

// ---------------------------------------------------------------------------------------------

describe("console forms and jobs API fuzzer (fast-check, fixed seed, service in its own process)", () => {
  it("warms up: a short pass of every fuzzer, then the memory baseline", async () => {
    for (const [name, form] of Object.entries(CONSOLE_FORMS)) await fuzzForm(name, form, WARM_UP_RUNS, SEED + 1);
    await fuzzConsolePages(WARM_UP_RUNS * 3, SEED + 1);
    await fuzzSubmissions(WARM_UP_RUNS * 3, SEED + 1);
    await fuzzJobCalls(WARM_UP_RUNS * 3, SEED + 1);
    baseline = await service.memory();
  });

  for (const [name, form] of Object.entries(CONSOLE_FORMS)) {
    it(`console form ${name}: arbitrary bodies, content types, CSRF and origins reach the handler and never fail it`, async () => {
      const { reached } = await fuzzForm(name, form, form.runs, SEED);
      expect(reached, "answers from the form's own handler, past the origin, CSRF and session checks").toBeGreaterThan(0);
    });
  }

  it("console pages with odd ids and query strings", async () => {
    await fuzzConsolePages(FORM_RUNS * 2, SEED);
  });

  it("job submissions with fuzzed Prefer, Idempotency-Key, Accept, webhookUrl and bodies", async () => {
    await fuzzSubmissions(JOBS_RUNS, SEED);
  });

  it("job get, list, cancel, events and result with odd ids, queries, Last-Event-ID and keys", async () => {
    await fuzzJobCalls(JOBS_RUNS, SEED);
  });

  it("leaves the process up, the admin still signed in, and the heap flat", async () => {
    expect(service.running(), service.output()).toBe(true);
    const health = await rawRequest(service.port, "GET", "/healthz", {});
    expect(health.status).toBe(200);
    const accountPage = await rawRequest(service.port, "GET", "/account", { cookie: session.cookie });
    expect(accountPage.status, "the fuzzer's session survived the run").toBe(200);
    const after = await service.memory();
    const heapGrowth = (after.heapUsed - baseline.heapUsed) / MiB;
    const rssGrowth = (after.rss - baseline.rss) / MiB;
    if (process.env.FUZZ_TRACE) console.log("FUZZ memory", { baseline, after, heapGrowth, rssGrowth });
    expect(heapGrowth, `heap after the run ${Math.round(after.heapUsed / MiB)} MiB, after warm-up ${Math.round(baseline.heapUsed / MiB)} MiB`).toBeLessThan(24);
    expect(rssGrowth, `RSS after the run ${Math.round(after.rss / MiB)} MiB, after warm-up ${Math.round(baseline.rss / MiB)} MiB`).toBeLessThan(128);
  });
});
