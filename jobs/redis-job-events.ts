/**
 * Live job events across routers: each event, once stored in Redis, is published on one Redis
 * pub/sub channel, and every router hands it to its own listeners (event streams, `Prefer: wait`,
 * and the runner, which stops a job canceled through another router). Stored events stay the
 * record: a message lost while a connection is down is replayed from the store by `Last-Event-ID`.
 */
import type { Redis } from "ioredis";
import type { Logger } from "../core/logger.js";
import { JobEventHub } from "./job-events.js";
import type { JobEvent } from "./job-store.js";

const CHANNEL = "atelier:jobs:events";

export class RedisJobEventHub extends JobEventHub {
  private constructor(
    private readonly publisher: Redis,
    private readonly logger: Logger,
  ) {
    super();
  }

  /** Subscribes `subscriber` (a connection of its own: a subscribed connection only listens). */
  static async connect(publisher: Redis, subscriber: Redis, logger: Logger): Promise<RedisJobEventHub> {
    const hub = new RedisJobEventHub(publisher, logger);
    subscriber.on("message", (channel: string, message: string) => {
      if (channel === CHANNEL) hub.deliver(JSON.parse(message) as JobEvent);
    });
    await subscriber.subscribe(CHANNEL);
    return hub;
  }

  override publish(event: JobEvent): void {
    this.publisher.publish(CHANNEL, JSON.stringify(event)).catch((error: unknown) => this.logger.warn({ err: error, jobId: event.jobId }, "job event not published"));
  }

  private deliver(event: JobEvent): void {
    super.publish(event);
  }
}
