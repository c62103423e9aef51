/**
 * The sign-in throttle (5 failed password checks per account, 20 per address, per 15 minutes) must
 * hold however many guesses arrive at once: each attempt is counted before its password is
 * checked, atomically in the database, so a burst of concurrent guesses gets exactly the budget
 * checked and every other one refused unchecked, the right password included. The current-password
 * check of a password change spends the same budget. The account budget is tried on SQLite and on
 * PostgreSQL; the address budget, counted by the same limiter and statement, on SQLite.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import type { AccountStore } from "../../../server/accounts/account-store.js";
import { startPostgresServer, type PostgresServer } from "../../support/postgres-server.js";
import { postForm, signInHttp, startConsoleService, type ConsoleService } from "../../console/support/console-service.js";

const PER_ACCOUNT = 5;
const PER_ADDRESS = 20;
const BURST = 60;
const THROTTLED_MESSAGE = "Too many sign-in attempts";
/**
 * The service's idle keep-alive time here. This file's fetch and the in-process server share one
 * event loop: when it lags (password hashes on a loaded machine), the server's 5 s keep-alive timer
 * and the client's shorter idle timer come due together, and a burst after a pause can go out on
 * pooled connections the server is just closing (ECONNRESET). A client in another process does not
 * share the lag; a timeout longer than the file keeps the pool's connections open.
 */
const IN_PROCESS_KEEP_ALIVE_MS = 120_000;

interface Answer {
  status: number;
  retryAfter: string | null;
  text: string;
}

async function answerOf(response: Response): Promise<Answer> {
  return { status: response.status, retryAfter: response.headers.get("retry-after"), text: await response.text() };
}

function statusCounts(answers: Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** A sign-in form post from `address` (loopback is trusted as a proxy, so X-Forwarded-For sets it). */
function signIn(atelier: ConsoleService, email: string, password: string, address: string): Promise<Answer> {
  return postForm(atelier.url, "/sign-in", null, { email, password }, { "x-forwarded-for": address }).then(answerOf);
}

/** Every refusal is the throttle's: 429, a Retry-After within the 15-minute window, its sentence. */
function expectThrottled(answers: Answer[]): void {
  for (const answer of answers) {
    expect(answer.status).toBe(429);
    expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    expect(Number(answer.retryAfter)).toBeLessThanOrEqual(900);
    expect(answer.text).toContain(THROTTLED_MESSAGE);
  }
}

const backends: { name: string; env: (postgres: () => Promise<PostgresServer>) => Promise<Record<string, string>> }[] = [
  { name: "SQLite", env: async () => ({}) },
  { name: "PostgreSQL", env: async (postgres) => ({ ATELIER_DATABASE_URL: await (await postgres()).createDatabase("throttle") }) },
];

let postgres: PostgresServer | undefined;
afterAll(async () => {
  await postgres?.dispose();
});

describe.each(backends)("sign-in throttle under concurrent guesses, on $name", ({ env }) => {
  let atelier: ConsoleService;
  let passwordChecks: MockInstance<AccountStore["verifyCredentials"]>;
  let currentPasswordChecks: MockInstance<AccountStore["checkPassword"]>;

  beforeAll(async () => {
    const backendEnv = await env(async () => (postgres ??= await startPostgresServer()));
    atelier = await startConsoleService({ ATELIER_TRUST_PROXY: "loopback", ATELIER_HTTP_KEEP_ALIVE_TIMEOUT_MS: String(IN_PROCESS_KEEP_ALIVE_MS), ...backendEnv });
    passwordChecks = vi.spyOn(atelier.services.accounts, "verifyCredentials");
    currentPasswordChecks = vi.spyOn(atelier.services.accounts, "checkPassword");
  });

  afterAll(async () => {
    await atelier?.close();
  });

  beforeEach(() => {
    passwordChecks.mockClear();
    currentPasswordChecks.mockClear();
  });

  it(`checks exactly ${PER_ACCOUNT} of ${BURST} concurrent wrong guesses for one account, then refuses the right password`, async () => {
    const victim = { email: "victim@example.com", password: "the victim's long password" };
    await atelier.createUser(victim.email, victim.password);
    const address = "203.0.113.10";
    const answers = await Promise.all(Array.from({ length: BURST }, (_, guess) => signIn(atelier, victim.email, `wrong guess ${guess} password`, address)));
    expect(statusCounts(answers)).toEqual({ 401: PER_ACCOUNT, 429: BURST - PER_ACCOUNT });
    expect(passwordChecks).toHaveBeenCalledTimes(PER_ACCOUNT);
    expectThrottled(answers.filter((answer) => answer.status !== 401));

    // The right password, from the guessing address and from a fresh one, is refused unchecked.
    expectThrottled([await signIn(atelier, victim.email, victim.password, address), await signIn(atelier, victim.email, victim.password, "203.0.113.11")]);
    expect(passwordChecks).toHaveBeenCalledTimes(PER_ACCOUNT);
  });

  it("counts the current-password check of a password change against the same budget", async () => {
    const owner = { email: "owner@example.com", password: "the owner's long password" };
    await atelier.createUser(owner.email, owner.password);
    const session = await signInHttp(atelier.url, owner.email, owner.password, { "x-forwarded-for": "192.0.2.30" });
    passwordChecks.mockClear();
    const changePassword = (currentPassword: string, address: string) =>
      postForm(atelier.url, "/account/password", session, { currentPassword, newPassword: "a brand new long password" }, { "x-forwarded-for": address }).then(answerOf);

    // A stolen session guessing the current password, all at once.
    const burst = 20;
    const answers = await Promise.all(Array.from({ length: burst }, (_, guess) => changePassword(`wrong guess ${guess} password`, "192.0.2.31")));
    expect(statusCounts(answers)).toEqual({ 400: PER_ACCOUNT, 429: burst - PER_ACCOUNT });
    expect(currentPasswordChecks).toHaveBeenCalledTimes(PER_ACCOUNT);
    for (const answer of answers.filter((answer) => answer.status === 400)) expect(answer.text).toContain("The current password is not right.");
    expectThrottled(answers.filter((answer) => answer.status !== 400));

    // The budget is spent for sign-in too, and for the right current password.
    expectThrottled([await signIn(atelier, owner.email, owner.password, "192.0.2.32"), await changePassword(owner.password, "192.0.2.33")]);
    expect(passwordChecks).not.toHaveBeenCalled();
    expect(currentPasswordChecks).toHaveBeenCalledTimes(PER_ACCOUNT);
    // Nothing was changed: the old password is still the one stored.
    expect(await atelier.services.accounts.verifyCredentials(owner.email, owner.password)).not.toBeNull();
  });

  it("refuses a password change once sign-in guesses have spent the account's budget", async () => {
    const owner = { email: "keeper@example.com", password: "the keeper's long password" };
    await atelier.createUser(owner.email, owner.password);
    const session = await signInHttp(atelier.url, owner.email, owner.password, { "x-forwarded-for": "192.0.2.40" });
    const guesses = await Promise.all(Array.from({ length: PER_ACCOUNT }, (_, guess) => signIn(atelier, owner.email, `wrong guess ${guess} password`, `192.0.2.${41 + guess}`)));
    expect(statusCounts(guesses)).toEqual({ 401: PER_ACCOUNT });
    const change = await postForm(atelier.url, "/account/password", session, { currentPassword: owner.password, newPassword: "a brand new long password" }, { "x-forwarded-for": "192.0.2.40" });
    expectThrottled([await answerOf(change)]);
    expect(currentPasswordChecks).not.toHaveBeenCalled();
  });
});

// Its burst costs 20 password hashes, so it runs on one backend only, to keep the file quick.
describe("sign-in throttle under concurrent guesses from one address, on SQLite", () => {
  let atelier: ConsoleService;
  let passwordChecks: MockInstance<AccountStore["verifyCredentials"]>;

  beforeAll(async () => {
    atelier = await startConsoleService({ ATELIER_TRUST_PROXY: "loopback" });
    passwordChecks = vi.spyOn(atelier.services.accounts, "verifyCredentials");
  });

  afterAll(async () => {
    await atelier?.close();
  });

  it(`checks exactly ${PER_ADDRESS} of ${BURST} concurrent guesses from one address across accounts`, async () => {
    const bystander = { email: "bystander@example.com", password: "the bystander's long password" };
    await atelier.createUser(bystander.email, bystander.password);
    const address = "198.51.100.20";
    const answers = await Promise.all(Array.from({ length: BURST }, (_, guess) => signIn(atelier, `guess${guess}@example.com`, "a guessed password", address)));
    expect(statusCounts(answers)).toEqual({ 401: PER_ADDRESS, 429: BURST - PER_ADDRESS });
    expect(passwordChecks).toHaveBeenCalledTimes(PER_ADDRESS);
    expectThrottled(answers.filter((answer) => answer.status !== 401));

    expectThrottled([await signIn(atelier, bystander.email, bystander.password, address)]);
    // The account itself is not throttled: from another address it signs in.
    expect((await signIn(atelier, bystander.email, bystander.password, "198.51.100.21")).status).toBe(303);
  });
});
