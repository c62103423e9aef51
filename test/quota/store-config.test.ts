/** The two scale-out settings: ATELIER_REDIS_URL (quota) and ATELIER_DATABASE_URL (API keys). */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { problemsOf } from "../support/config-problems.js";

describe("scale-out configuration", () => {
  it("is unset by default, and blank means unset: SQLite for both", () => {
    expect(loadConfig({})).toMatchObject({ databaseUrl: undefined, quota: { redisUrl: undefined } });
    expect(loadConfig({ ATELIER_REDIS_URL: " ", ATELIER_DATABASE_URL: "" })).toMatchObject({
      databaseUrl: undefined,
      quota: { redisUrl: undefined },
    });
  });

  it("reads Redis and PostgreSQL URLs", () => {
    const config = loadConfig({
      ATELIER_REDIS_URL: " rediss://:pw@cache.internal:6380/2 ",
      ATELIER_DATABASE_URL: "postgresql://atelier:pw@db.internal:5432/atelier?sslmode=require",
    });
    expect(config.quota.redisUrl).toBe("rediss://:pw@cache.internal:6380/2");
    expect(config.databaseUrl).toBe("postgresql://atelier:pw@db.internal:5432/atelier?sslmode=require");
    expect(loadConfig({ ATELIER_DATABASE_URL: "postgres://db/atelier" }).databaseUrl).toBe("postgres://db/atelier");
  });

  it("reports URLs of the wrong kind together, without echoing them (they may hold passwords)", () => {
    const problems = problemsOf({
      ATELIER_REDIS_URL: "http://:sekrit@cache:6379",
      ATELIER_DATABASE_URL: "mysql://root:sekrit@db/atelier",
    });
    expect(problems).toEqual([
      "ATELIER_DATABASE_URL: Expected a URL like postgresql://user:password@host:5432/atelier.",
      "ATELIER_REDIS_URL: Expected a URL like redis://host:6379.",
    ]);
    expect(problemsOf({ ATELIER_REDIS_URL: "cache:6379 with spaces" })).toEqual(["ATELIER_REDIS_URL: Expected a URL like redis://host:6379."]);
  });
});
