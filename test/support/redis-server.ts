/**
 * A disposable redis-server for tests: its own process on a free loopback port, no persistence,
 * stopped (and restartable on the same port, to test outages) by the suite that started it.
 *
 * Without the binary a suite is skipped with a notice; with `CI` set it fails instead, so CI can
 * never pass by skipping (`.ci/run` installs Debian's `redis-server`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { freeLoopbackPort } from "./free-port.js";

const CANDIDATES = ["/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server"];

function findRedisServer(): string | undefined {
  const onPath = (process.env.PATH ?? "").split(path.delimiter).map((dir) => path.join(dir, "redis-server"));
  return [...CANDIDATES, ...onPath].find((candidate) => {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const binary = findRedisServer();

/**
 * True when the calling suite should be skipped: no redis-server and `CI` unset. Prints the notice
 * naming `suite`. With `CI` set it is false, and {@link startRedisServer} then fails the suite.
 */
export function skipWithoutRedis(suite: string): boolean {
  if (binary !== undefined || process.env.CI) return false;
  console.warn(
    `[${suite}] SKIPPED: redis-server not found. Install it with: apt-get install redis-server ` +
      "(with CI set this suite fails instead).",
  );
  return true;
}

/** One `PING`; true on `+PONG`. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    let reply = "";
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString("latin1");
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"));
    });
  });
}

export class RedisServer {
  private child: ChildProcess | undefined;
  private output = "";

  private constructor(
    readonly port: number,
    /** Its working folder (nothing is written there unless something asks Redis to save). */
    readonly dir: string,
  ) {}

  /** `redis://127.0.0.1:<port>` */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts a server on a free port and waits until it answers PING. */
  static async start(): Promise<RedisServer> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-redis-"));
    // The port is free when picked but could be taken before Redis binds it: try a few.
    for (let attempt = 1; ; attempt++) {
      const server = new RedisServer(await freeLoopbackPort(), dir);
      try {
        await server.start();
        return server;
      } catch (error) {
        if (attempt === 3) {
          fs.rmSync(dir, { recursive: true, force: true });
          throw error;
        }
      }
    }
  }

  /** (Re)starts the server on its port: empty, since nothing is persisted. */
  async start(timeoutMs = 10_000): Promise<void> {
    if (binary === undefined) {
      throw new Error("redis-server not found (CI is set, so this fails rather than skips). Install it with: apt-get install redis-server");
    }
    if (this.child) return;
    this.output = "";
    const child = spawn(
      binary,
      ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", this.dir],
      { cwd: this.dir, stdio: ["ignore", "pipe", "pipe"] },
    );
    this.child = child;
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString("utf8")).slice(-4_000);
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    const deadline = Date.now() + timeoutMs;
    while (!(await ping(this.port))) {
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
        await this.stop();
        throw new Error(`redis-server did not start on port ${this.port}:\n${this.output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Stops the server (SIGTERM to the process this helper started) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGCONT"); // in case it was paused
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }

  /** Freezes the server (SIGSTOP): connections stay open but nothing is answered, as with a hung host. */
  pause(): void {
    this.child?.kill("SIGSTOP");
  }

  /** Undoes {@link pause}. */
  resume(): void {
    this.child?.kill("SIGCONT");
  }

  /** Stops the server for good and removes its folder. */
  async dispose(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Starts a disposable redis-server; see {@link RedisServer}. Call `dispose()` when done. */
export function startRedisServer(): Promise<RedisServer> {
  return RedisServer.start();
}
