/**
 * What every account storage (server/accounts/account-store.ts over SQLite or PostgreSQL) answers
 * alike: users, passwords, sessions with idle and absolute expiry and their one-time flashes,
 * single-use invites. Each storage
 * runs this suite in test/console/account-store.test.ts.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { AccountStore, FLASH_LIFETIME_MS, INVITE_LIFETIME_MS, type AccountStorage } from "../../server/accounts/account-store.js";

const IDLE_MS = 30 * 60_000;
const ABSOLUTE_MS = 8 * 3_600_000;

/** A storage under test: a fresh one per test, and what removes it. */
export interface AccountBackend {
  name: string;
  skip: boolean;
  open(): Promise<AccountStorage>;
  dispose(): Promise<void>;
}

export function accountStoreContract(backend: AccountBackend): void {
  describe.skipIf(backend.skip)(`AccountStore on ${backend.name}`, () => {
    let clock: number;
    let store: AccountStore;
    let storage: AccountStorage;

    beforeAll(async () => {
      clock = Date.UTC(2026, 0, 1);
    });

    beforeEach(async () => {
      storage = await backend.open();
      store = new AccountStore(storage, { idleMs: IDLE_MS, absoluteMs: ABSOLUTE_MS }, { now: () => clock });
    });

    afterEach(async () => {
      await store.close();
      await backend.dispose();
    });

    it("creates users with a normalised, unique email and validates every field together", async () => {
      const user = await store.createUser({ email: "  Ada@Example.COM ", password: "analytical engine", role: "admin" });
      expect(user).toMatchObject({ email: "ada@example.com", displayName: "ada", role: "admin", disabledAt: null, keyAllowance: null });
      await expect(store.createUser({ email: "ada@example.com", password: "another password", role: "member" })).rejects.toThrow(/already exists/);
      const failure = await store.createUser({ email: "not an email", password: "short", role: "boss" as never }).catch((error: unknown) => error);
      expect((failure as { issues: Array<{ path: string }> }).issues.map((issue) => issue.path)).toEqual(["email", "password", "role"]);
      expect((await store.listUsers()).map((listed) => listed.email)).toEqual(["ada@example.com"]);
      expect(await store.countUsers()).toBe(1);
    });

    it("verifies credentials without telling unknown, wrong and disabled apart", async () => {
      const user = await store.createUser({ email: "bob@example.com", password: "bob's password", role: "member" });
      expect((await store.verifyCredentials("BOB@example.com", "bob's password"))?.id).toBe(user.id);
      expect(await store.verifyCredentials("bob@example.com", "wrong password")).toBeNull();
      expect(await store.verifyCredentials("nobody@example.com", "bob's password")).toBeNull();
      await store.setDisabled(user.id, true);
      expect(await store.verifyCredentials("bob@example.com", "bob's password")).toBeNull();
    });

    it("ends sessions after the idle time and after the absolute lifetime, however active", async () => {
      const user = await store.createUser({ email: "c@example.com", password: "c's long password", role: "member" });
      const idle = await store.startSession(user.id);
      clock += IDLE_MS - 1;
      expect(await store.resolveSession(idle)).not.toBeNull(); // and touches it
      clock += IDLE_MS - 1;
      expect(await store.resolveSession(idle)).not.toBeNull();
      clock += IDLE_MS + 1;
      expect(await store.resolveSession(idle)).toBeNull();

      const active = await store.startSession(user.id);
      const startedAt = clock;
      for (let elapsed = 0; elapsed < ABSOLUTE_MS - IDLE_MS; elapsed += IDLE_MS / 2) {
        clock += IDLE_MS / 2;
        expect(await store.resolveSession(active)).not.toBeNull();
      }
      clock += IDLE_MS / 2;
      expect(await store.resolveSession(active)).not.toBeNull(); // touched 15 minutes before the end
      clock = startedAt + ABSOLUTE_MS;
      expect(await store.resolveSession(active)).not.toBeNull();
      clock += 1; // idle for only 15 minutes, but past the absolute lifetime
      expect(await store.resolveSession(active)).toBeNull();
      expect(await store.resolveSession("never issued")).toBeNull();
    });

    it("ends every session on password change and on disabling", async () => {
      const user = await store.createUser({ email: "d@example.com", password: "d's long password", role: "member" });
      const [one, two] = [await store.startSession(user.id), await store.startSession(user.id)];
      await store.setPassword(user.id, "d's new long password");
      expect(await store.resolveSession(one)).toBeNull();
      expect(await store.resolveSession(two)).toBeNull();
      expect(await store.verifyCredentials("d@example.com", "d's new long password")).not.toBeNull();
      const three = await store.startSession(user.id);
      await store.setDisabled(user.id, true);
      expect(await store.resolveSession(three)).toBeNull();
      await expect(store.setPassword(user.id, "short")).rejects.toThrow(/at least 10/);
    });

    it("accepts an invite once, before it expires, with the invite's email and role", async () => {
      const admin = await store.createUser({ email: "admin@example.com", password: "admin long password", role: "admin" });
      const { code } = await store.createInvite("New@Example.com", "admin", admin.id);
      expect(await store.findInvite(code)).toEqual({ email: "new@example.com", role: "admin" });
      const user = await store.acceptInvite(code, "Newcomer", "newcomer's password");
      expect(user).toMatchObject({ email: "new@example.com", role: "admin", displayName: "Newcomer" });
      expect(await store.acceptInvite(code, "Again", "another password!")).toBeNull();

      const late = await store.createInvite("late@example.com", "member", admin.id);
      clock += INVITE_LIFETIME_MS;
      expect(await store.acceptInvite(late.code, "Late", "late long password")).toBeNull();
      await expect(store.createInvite("admin@example.com", "member", admin.id)).rejects.toThrow(/already exists/);
    });

    it("updates role, display name and key allowance, and rejects bad values", async () => {
      const user = await store.createUser({ email: "e@example.com", password: "e's long password", role: "member" });
      expect((await store.setRole(user.id, "admin"))?.role).toBe("admin");
      expect((await store.setDisplayName(user.id, " Eve "))?.displayName).toBe("Eve");
      expect((await store.setKeyAllowance(user.id, 25))?.keyAllowance).toBe(25);
      expect((await store.setKeyAllowance(user.id, null))?.keyAllowance).toBeNull();
      await expect(store.setKeyAllowance(user.id, 0)).rejects.toMatchObject({ code: "INVALID_INPUT" });
      expect(await store.setRole("usr_unknown", "member")).toBeNull();
    });

    it("keeps a session's flash for one take, sealed at rest, until it expires or the session ends", async () => {
      const user = await store.createUser({ email: "g@example.com", password: "g's long password", role: "member" });
      const session = await store.startSession(user.id);
      const other = await store.startSession(user.id);
      await store.putFlash(session, "first secret");
      await store.putFlash(session, "atl_flash_secret");
      expect(await store.takeFlash(other)).toBeNull();
      expect(await store.takeFlash(session)).toBe("atl_flash_secret");
      expect(await store.takeFlash(session)).toBeNull();

      await store.putFlash(session, "atl_flash_secret");
      const sealed = await storage.takeFlash(createHash("sha256").update(session).digest(), clock);
      expect(sealed).not.toBeNull();
      expect(sealed!.toString("latin1")).not.toContain("flash_secret");

      await store.putFlash(session, "expires");
      clock += FLASH_LIFETIME_MS;
      expect(await store.takeFlash(session)).toBeNull();

      await store.putFlash(session, "ends with the session");
      await store.endSession((await store.resolveSession(session))!.idHash);
      expect(await storage.takeFlash(createHash("sha256").update(session).digest(), clock)).toBeNull();
    });

    it("prunes expired sessions", async () => {
      const user = await store.createUser({ email: "f@example.com", password: "f's long password", role: "member" });
      await store.startSession(user.id);
      await store.startSession(user.id);
      clock += IDLE_MS + 1;
      const live = await store.startSession(user.id);
      expect(await store.pruneSessions()).toBe(2);
      expect(await store.resolveSession(live)).not.toBeNull();
    });
  });}
