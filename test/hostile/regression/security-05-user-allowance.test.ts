/**
 * Security item 5: the allowance limited each key, not the user. A member made 33 keys at 100/h
 * each and had 3,300 requests an hour against an allowance of 100. The allowance is now one hourly
 * budget all of a user's keys share, charged in the same atomic step as each key's own limit, on
 * one router with SQLite and on two routers sharing Redis (quota) and PostgreSQL (keys, accounts);
 * and a user may have at most ATELIER_MAX_KEYS_PER_USER active keys, even when they ask at once.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AtelierError } from "../../../core/errors.js";
import type { User } from "../../../server/accounts/account-store.js";
import { postForm, signInHttp } from "../../console/support/console-service.js";
import { startPostgresServer, type PostgresServer } from "../../support/postgres-server.js";
import { startRedisServer, type RedisServer } from "../../support/redis-server.js";
import { startTestService, type TestService } from "../../support/test-service.js";
import { errorCodeOf, rawRequest, type RawAnswer } from "../support/hostile-service.js";

/** A small default, so a member without an allowance of their own is visibly held to it. */
const ENV = { ATELIER_RATE_LIMIT_PER_HOUR: "5", ATELIER_MAX_KEYS_PER_USER: "10" };
const PASSWORD = "a long enough passphrase";

interface Setup {
  name: string;
  start(): Promise<{ routers: TestService[]; stop(): Promise<void> }>;
}

const SETUPS: Setup[] = [
  {
    name: "one router on SQLite",
    start: async () => {
      const router = await startTestService(ENV);
      return {
        routers: [router],
        stop: async () => {
          await router.close();
          fs.rmSync(router.dataDir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: "two routers sharing Redis and PostgreSQL",
    start: async () => {
      let redis: RedisServer | undefined;
      let postgres: PostgresServer | undefined;
      const routers: TestService[] = [];
      const stop = async () => {
        for (const router of routers) {
          await router.close();
          fs.rmSync(router.dataDir, { recursive: true, force: true });
        }
        await redis?.dispose();
        await postgres?.dispose();
      };
      try {
        [redis, postgres] = await Promise.all([startRedisServer(), startPostgresServer()]);
        const env = { ...ENV, ATELIER_REDIS_URL: redis.url, ATELIER_DATABASE_URL: await postgres.createDatabase() };
        routers.push(...(await Promise.all([startTestService(env), startTestService(env)])));
      } catch (error) {
        await stop();
        throw error;
      }
      return { routers, stop };
    },
  },
];

for (const setup of SETUPS) {
  describe(`security 5: a user's allowance is shared by all their keys (${setup.name})`, () => {
    let routers: TestService[] = [];
    let stop = async () => {};
    let users = 0;

    beforeAll(async () => {
      ({ routers, stop } = await setup.start());
    });
    afterAll(() => stop());

    const services = () => routers[0]!.services;
    const newUser = async (role: "member" | "admin", keyAllowance: number | null = null): Promise<User> => {
      const user = await services().accounts.createUser({ email: `user${++users}@example.com`, password: PASSWORD, role });
      return keyAllowance === null ? user : (await services().accounts.setKeyAllowance(user.id, keyAllowance))!;
    };
    const keysOf = async (ownerId: string | null, count: number, hourlyLimit: number) =>
      Promise.all(Array.from({ length: count }, async (_, i) => (await services().keys.create({ name: `key ${i}`, hourlyLimit, ownerId })).key));

    /** `count` requests at once, spread over `keys`, the routers and both transports. */
    const burst = (keys: string[], count: number): Promise<RawAnswer[]> =>
      Promise.all(
        Array.from({ length: count }, (_, i) => {
          const viaTrpc = i % 4 >= 2;
          return rawRequest(
            routers[i % routers.length]!.port,
            "POST",
            viaTrpc ? "/trpc/prompt.improve" : "/api/v1/prompt/improve",
            { "content-type": "application/json", authorization: `Bearer ${keys[i % keys.length]}` },
            JSON.stringify({ prompt: "a lighthouse at dusk" }),
          );
        }),
      );
    const granted = (answers: RawAnswer[]) => answers.filter((answer) => answer.status === 200).length;

    it("grants a member's six keys together exactly their allowance, and charges refusals to no key", async () => {
      const member = await newUser("member", 12);
      const keys = await keysOf(member.id, 6, 20);
      const answers = await burst(keys, 48);
      expect(answers.map((answer) => answer.status).filter((status) => status !== 200 && status !== 429)).toEqual([]);
      expect(granted(answers)).toBe(12);
      for (const answer of answers) {
        // The allowance (12) is always tighter than any key's 20, so the headers report it.
        expect(answer.headers["ratelimit-policy"]).toBe('"user-hourly";q=12;w=3600');
        expect(answer.headers["x-ratelimit-limit"]).toBe("12");
        if (answer.status !== 429) continue;
        expect(answer.headers["x-ratelimit-remaining"]).toBe("0");
        expect(Number(answer.headers["retry-after"])).toBeGreaterThan(0);
        expect(errorCodeOf(answer.body)).toBe("RATE_LIMITED");
        expect(answer.body).toContain("an allowance of 12 requests per hour, shared by all their keys");
      }
      // Only granted requests were counted on the keys: together they hold exactly the allowance.
      const records = await services().keys.list({ ownerId: member.id });
      const keyUse = await Promise.all(records.map((record) => services().quota.peek({ key: { id: record.id, limit: 20 } })));
      expect(keyUse.reduce((sum, decision) => sum + decision.key.used, 0)).toBe(12);
      expect(await services().quota.peekAllowance({ id: member.id, limit: 12 })).toMatchObject({ used: 12, remaining: 0 });
    });

    it("holds a member without an allowance to the default, an admin only to each key's limit unless one is set, and an operator key to its own", async () => {
      const member = await newUser("member");
      expect(granted(await burst(await keysOf(member.id, 2, 10), 8))).toBe(5);
      const admin = await newUser("admin");
      expect(granted(await burst(await keysOf(admin.id, 2, 4), 10))).toBe(8);
      const limitedAdmin = await newUser("admin", 3);
      expect(granted(await burst(await keysOf(limitedAdmin.id, 2, 10), 6))).toBe(3);
      expect(granted(await burst(await keysOf(null, 1, 4), 6))).toBe(4);
    });

    it("lets a user have at most ATELIER_MAX_KEYS_PER_USER active keys, even when they create them at once", async () => {
      const member = await newUser("member");
      const maxKeys = services().config.console.maxKeysPerUser;
      expect(maxKeys).toBe(10);
      const create = (router: TestService, name: string) => router.services.keys.create({ name, ownerId: member.id, ownerMaxActiveKeys: maxKeys });
      // A revoked key does not count.
      await services().keys.revoke((await services().keys.create({ name: "old", ownerId: member.id })).record.id);
      for (let i = 0; i < 7; i++) await create(routers[0]!, `early ${i}`);
      const outcomes = await Promise.allSettled(Array.from({ length: 9 }, (_, i) => create(routers[i % routers.length]!, `rush ${i}`)));
      expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(3);
      for (const outcome of outcomes.filter((entry) => entry.status === "rejected")) {
        const error = (outcome as PromiseRejectedResult).reason as AtelierError;
        expect(error).toBeInstanceOf(AtelierError);
        expect(error).toMatchObject({ code: "INVALID_INPUT", httpStatus: 400 });
        expect(error.message).toBe("You have 10 active keys, the most one user may have. Revoke a key you no longer use to create another.");
      }

      // The console refuses the eleventh with the same words; a revoked key frees a place.
      const base = routers[routers.length - 1]!.url;
      const session = await signInHttp(base, member.email, PASSWORD);
      const refused = await postForm(base, "/keys", session, { name: "eleventh" });
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain("You have 10 active keys, the most one user may have.");
      await services().keys.revoke((await services().keys.list({ ownerId: member.id })).find((key) => key.revokedAt === null)!.id);
      const created = await postForm(base, "/keys", session, { name: "eleventh" });
      expect(created.status).toBe(303);
      expect(created.headers.get("location")).toMatch(/^\/keys\/[^/]+\/created$/);
      const active = (await services().keys.list({ ownerId: member.id })).filter((key) => key.revokedAt === null);
      expect(active).toHaveLength(10);
    });
  });
}
