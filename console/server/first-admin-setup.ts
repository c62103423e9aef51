/**
 * The way into a fresh install: while no account exists, `npm start` prints a one-time setup link
 * and the console's setup page (console/pages/first-admin.ts) lets whoever holds it create the
 * first administrator. The CLI (`npm run users -- create ... --admin`) stays the scripted way.
 *
 * The token is 256 random bits kept only in this router's memory: never in the database, never in a
 * log line (the start banner is the one place it is printed), and carried in the link's
 * `#fragment`, which browsers never send, so no request line, proxy log or Referer sees it. Each
 * router has its own; a link works on the router that printed it. It works until the first
 * account exists, however that account was made; creating it is one atomic step of the account
 * store, so of several concurrent submissions, on any routers sharing the database, one wins.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { AccountStore, User } from "../../server/accounts/account-store.js";

/** The console path of the setup page. */
export const SETUP_PATH = "/setup";

/** What the first administrator gives on the setup page. */
export interface FirstAdminInput {
  email: string;
  displayName?: string;
  password: string;
}

/** The administrator created; or why not: the token is not this router's, or an account exists already. */
export type FirstAdminOutcome = { created: User } | { refused: "wrong-token" | "done" };

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

export class FirstAdminSetup {
  readonly #token = randomBytes(32).toString("base64url");
  readonly #tokenDigest = digest(this.#token);

  constructor(private readonly accounts: AccountStore) {}

  /** True while no account exists: the setup link works. */
  async isOpen(): Promise<boolean> {
    return (await this.accounts.countUsers()) === 0;
  }

  /** The setup link at `consoleOrigin` (`http://127.0.0.1:8080`, or ATELIER_PUBLIC_URL), for the start banner only. */
  link(consoleOrigin: string): string {
    return `${consoleOrigin}${SETUP_PATH}#${this.#token}`;
  }

  /** True when `token` is this router's; compared by digest, so in constant time whatever its length. */
  accepts(token: string): boolean {
    return timingSafeEqual(digest(token), this.#tokenDigest);
  }

  /** Creates the first administrator when `token` is this router's and no account exists yet. Throws INVALID_INPUT for a bad field. */
  async createAdministrator(token: string, input: FirstAdminInput): Promise<FirstAdminOutcome> {
    if (!(await this.isOpen())) return { refused: "done" };
    if (!this.accepts(token)) return { refused: "wrong-token" };
    const user = await this.accounts.createFirstAdmin(input);
    return user ? { created: user } : { refused: "done" };
  }
}
