/** The concrete readiness checks: gRPC workers, the key store, Redis, and the models folder. */
import fs from "node:fs/promises";
import { credentials, makeClientConstructor, type Client, type ServiceError } from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import type { Redis } from "ioredis";
import type { WorkerServiceName } from "../../core/config.js";
import type { ApiKeyStore } from "../../server/keys/api-key-store.js";
import type { ReadinessCheck } from "./readiness.js";

const HealthClient = makeClientConstructor(healthService, "grpc.health.v1.Health");
type HealthCheck = (request: { service: string }, options: { deadline: Date }, callback: (error: ServiceError | null, response?: { status: string | number }) => void) => void;

const SERVING = new Set(["SERVING", 1]);

/**
 * Asks each distinct worker address the standard gRPC health service (`grpc.health.v1.Health/Check`,
 * whole server). Several capabilities at one address cost one call.
 */
export class WorkerHealth {
  private readonly clients = new Map<string, Client>();

  constructor(private readonly addresses: Record<WorkerServiceName, string>) {
    for (const address of new Set(Object.values(addresses))) {
      // The same dns:/// round-robin as the worker clients: a name with several replicas is
      // healthy while one of them answers.
      this.clients.set(address, new HealthClient(address, credentials.createInsecure(), {
        "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
      }));
    }
  }

  /** address → "SERVING" or why not. */
  async probe(timeoutMs = 1_500): Promise<Map<string, string>> {
    const results = await Promise.all(
      [...this.clients].map(
        ([address, client]) =>
          new Promise<[string, string]>((resolve) => {
            (client as unknown as { check: HealthCheck }).check({ service: "" }, { deadline: new Date(Date.now() + timeoutMs) }, (error, response) => {
              if (error) resolve([address, error.details || error.message]);
              else resolve([address, SERVING.has(response?.status ?? "") ? "SERVING" : String(response?.status)]);
            });
          }),
      ),
    );
    return new Map(results);
  }

  /** capability → reachable, for the `atelier_worker_up` gauge. */
  async byService(): Promise<Record<string, boolean>> {
    const states = await this.probe();
    return Object.fromEntries(Object.entries(this.addresses).map(([name, address]) => [name, states.get(address) === "SERVING"]));
  }

  check(): ReadinessCheck {
    return {
      name: "workers",
      run: async () => {
        const states = await this.probe();
        const down = [...states].filter(([, state]) => state !== "SERVING");
        if (down.length === 0) return { ok: true, detail: `${states.size} worker address(es) serving` };
        const services = (address: string) => Object.entries(this.addresses).filter(([, a]) => a === address).map(([name]) => name).join(", ");
        return { ok: false, detail: down.map(([address, state]) => `${address} (${services(address)}): ${state}`).join("; ") };
      },
    };
  }

  close(): void {
    for (const client of this.clients.values()) client.close();
  }
}

/** A read of a key id that cannot exist: a real round trip to SQLite or PostgreSQL, changing nothing. */
export function keyStoreCheck(keys: ApiKeyStore, kind: "postgresql" | "sqlite"): ReadinessCheck {
  return {
    name: "keys",
    run: async () => {
      await keys.get("readiness-probe");
      return { ok: true, detail: kind };
    },
  };
}

/** PING over a connection of its own, so a probe never competes with quota traffic. */
export function redisCheck(url: string): ReadinessCheck & { close(): Promise<void> } {
  // ioredis loads with the first probe, so a router without Redis configured never loads it.
  let client: Promise<Redis> | undefined;
  const connection = () =>
    (client ??= import("ioredis").then(({ Redis }) => {
      const redis = new Redis(url, {
        lazyConnect: true,
        enableOfflineQueue: false,
        connectTimeout: 1_500,
        commandTimeout: 1_500,
        maxRetriesPerRequest: 0,
        retryStrategy: (attempt) => Math.min(attempt * 250, 2_000),
        connectionName: "atelier-readiness",
      });
      redis.on("error", () => {
        // Reported by the probe; ioredis would otherwise print every reconnect failure.
      });
      return redis;
    }));
  return {
    name: "redis",
    run: async () => {
      const redis = await connection();
      if (redis.status === "wait") await redis.connect();
      const reply = await redis.ping();
      return { ok: reply === "PONG", detail: reply === "PONG" ? "PONG" : `unexpected reply ${reply}` };
    },
    close: async () => {
      if (client) (await client).disconnect();
    },
  };
}

/** The folder workers read weights from exists and can be read. */
export function modelsFolderCheck(modelsDir: string): ReadinessCheck {
  return {
    name: "models-folder",
    run: async () => {
      await fs.mkdir(modelsDir, { recursive: true });
      await fs.access(modelsDir, fs.constants.R_OK);
      await fs.readdir(modelsDir);
      return { ok: true, detail: modelsDir };
    },
  };
}
