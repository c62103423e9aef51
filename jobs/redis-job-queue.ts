/**
 * Opens the queue routers share through Redis (ATELIER_REDIS_URL): the store, the event hub and the
 * BullMQ scheduler, each on its own connection (a pub/sub subscriber and BullMQ's blocking worker
 * cannot share one).
 */
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import type { AtelierConfig } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import { BullmqJobScheduler, TURN_QUEUE } from "./bullmq-job-scheduler.js";
import { RedisJobEventHub } from "./redis-job-events.js";
import { RedisJobStore } from "./redis-job-store.js";
import { settlesWithin } from "./settles-within.js";

/** Time a router gets to attempt a webhook delivery it took, beyond the receiver's timeout. */
const DELIVERY_LEASE_MARGIN_MS = 30_000;
/** How long closing waits for each part before dropping its connection (Redis may be down). */
const CLOSE_WAIT_MS = 5_000;

export async function openRedisJobQueue(url: string, config: AtelierConfig["jobs"], logger: Logger) {
  const connections: Redis[] = [];
  const connect = async (name: string) => {
    // maxRetriesPerRequest null: commands wait through a reconnection instead of failing (BullMQ needs it).
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: null, connectionName: `atelier-jobs-${name}` });
    redis.on("error", (error: Error) => logger.warn({ err: error, connection: name }, "job queue Redis connection error"));
    connections.push(redis);
    await redis.connect();
    return redis;
  };
  const closeAll = () =>
    Promise.all(
      connections.map(async (redis) => {
        if (redis.status !== "ready" || !(await settlesWithin(redis.quit(), CLOSE_WAIT_MS))) redis.disconnect();
      }),
    );
  try {
    const store = new RedisJobStore(await connect("store"), { deliveryLeaseMs: config.webhookTimeoutMs + DELIVERY_LEASE_MARGIN_MS });
    const hub = await RedisJobEventHub.connect(connections[0]!, await connect("events"), logger);
    const queue = new Queue(TURN_QUEUE, { connection: await connect("queue") });
    const scheduler = new BullmqJobScheduler(store, queue, await connect("worker"), { concurrency: config.concurrency, leaseMs: config.leaseMs, closeWaitMs: CLOSE_WAIT_MS });
    return {
      store,
      hub,
      scheduler,
      close: async () => {
        await settlesWithin(queue.close(), CLOSE_WAIT_MS);
        await closeAll();
      },
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
