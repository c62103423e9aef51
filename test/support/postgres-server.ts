/**
 * A disposable PostgreSQL server for tests: `initdb` into a temporary folder, then `postgres` on a
 * free loopback port (and a Unix socket in the same folder), trust authentication, no fsync. Each
 * test asks for a fresh database with {@link PostgresServer.createDatabase}.
 *
 * PostgreSQL refuses to run as root: as root, the folder is given to the `postgres` system user and
 * both programs run as that user (`runuser -u postgres --`, else `su postgres -s /bin/sh -c`).
 *
 * Without the binaries a suite is skipped with a notice; with `CI` set it fails instead, so CI can
 * never pass by skipping (`.ci/run` installs Debian's `postgresql`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freeLoopbackPort } from "./free-port.js";

interface Binaries {
  initdb: string;
  postgres: string;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Debian keeps each major version under /usr/lib/postgresql/<major>/bin; the newest wins. */
function findBinaries(): Binaries | undefined {
  const root = "/usr/lib/postgresql";
  const versions = fs.existsSync(root)
    ? fs.readdirSync(root).filter((name) => /^\d+(\.\d+)?$/.test(name)).sort((a, b) => Number(b) - Number(a))
    : [];
  const dirs = [...versions.map((version) => path.join(root, version, "bin")), ...(process.env.PATH ?? "").split(path.delimiter)];
  for (const dir of dirs) {
    const initdb = path.join(dir, "initdb");
    const postgres = path.join(dir, "postgres");
    if (isExecutable(initdb) && isExecutable(postgres)) return { initdb, postgres };
  }
  return undefined;
}

/** uid and gid of the `postgres` system user, read from /etc/passwd. */
function postgresUser(): { uid: number; gid: number } | undefined {
  try {
    const line = fs.readFileSync("/etc/passwd", "utf8").split("\n").find((entry) => entry.startsWith("postgres:"));
    const [, , uid, gid] = line?.split(":") ?? [];
    return uid && gid ? { uid: Number(uid), gid: Number(gid) } : undefined;
  } catch {
    return undefined;
  }
}

const binaries = findBinaries();
const runningAsRoot = process.getuid?.() === 0;
const systemUser = runningAsRoot ? postgresUser() : undefined;

/** Why PostgreSQL cannot run here, or undefined when it can. */
function unavailableReason(): string | undefined {
  if (binaries === undefined) return "PostgreSQL binaries (initdb, postgres) not found under /usr/lib/postgresql/*/bin or on PATH";
  if (runningAsRoot && systemUser === undefined) return "running as root and there is no `postgres` user to run PostgreSQL as";
  return undefined;
}

/**
 * True when the calling suite should be skipped: PostgreSQL cannot run here and `CI` is unset.
 * Prints the notice naming `suite`. With `CI` set it is false, and {@link startPostgresServer}
 * then fails the suite.
 */
export function skipWithoutPostgres(suite: string): boolean {
  const reason = unavailableReason();
  if (reason === undefined || process.env.CI) return false;
  console.warn(
    `[${suite}] SKIPPED: ${reason}. Install it with: apt-get install postgresql (with CI set this suite fails instead).`,
  );
  return true;
}

function shellQuote(arg: string): string {
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

/** Spawns `command` as the postgres user when running as root, else as the current user. */
function spawnAsOwner(command: string, args: string[], cwd: string): ChildProcess {
  const options = { cwd, stdio: ["ignore", "pipe", "pipe"] as ["ignore", "pipe", "pipe"] };
  if (!runningAsRoot) return spawn(command, args, options);
  if (isExecutable("/usr/sbin/runuser") || isExecutable("/sbin/runuser")) {
    return spawn("runuser", ["-u", "postgres", "--", command, ...args], options);
  }
  return spawn("su", ["postgres", "-s", "/bin/sh", "-c", ["exec", command, ...args].map(shellQuote).join(" ")], options);
}

function collectOutput(child: ChildProcess): () => string {
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-8_000);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  return () => output;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

async function canConnect(port: number): Promise<boolean> {
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres", connectionTimeoutMillis: 1_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Signals the postmaster named in `<data>/postmaster.pid`. The wrapper this helper spawned
 * (runuser, su) may not forward signals, so the server is signalled directly. False without a pid.
 */
function signalPostmaster(data: string, signal: NodeJS.Signals): boolean {
  try {
    const pid = Number(fs.readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    if (!Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

export class PostgresServer {
  private databases = 0;

  private constructor(
    readonly port: number,
    /** Temporary folder: the cluster in `data/`, the Unix socket beside it. */
    readonly dir: string,
    private readonly child: ChildProcess,
    private readonly output: () => string,
    /** Milliseconds initdb and start-up took together. */
    readonly startupMs: number,
  ) {}

  /** Creates a cluster in a temporary folder and starts it; resolves once it accepts connections. */
  static async start(timeoutMs = 60_000): Promise<PostgresServer> {
    const reason = unavailableReason();
    if (reason !== undefined) throw new Error(`${reason} (CI is set, so this fails rather than skips). Install it with: apt-get install postgresql`);
    const { initdb, postgres } = binaries!;
    const started = Date.now();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-pg-"));
    if (systemUser) fs.chownSync(dir, systemUser.uid, systemUser.gid);
    const data = path.join(dir, "data");
    try {
      const init = spawnAsOwner(initdb, ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"], dir);
      const initOutput = collectOutput(init);
      const code = await exitOf(init);
      if (code !== 0) throw new Error(`initdb failed (exit ${code}):\n${initOutput()}`);

      // The port is free when picked but could be taken before postgres binds it: try a few.
      for (let attempt = 1; ; attempt++) {
        try {
          return await PostgresServer.launch(postgres, data, dir, started, timeoutMs);
        } catch (error) {
          if (attempt === 3) throw error;
        }
      }
    } catch (error) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Starts postgres on a free port over an initialised cluster; resolves once it accepts connections. */
  private static async launch(postgres: string, data: string, dir: string, started: number, timeoutMs: number): Promise<PostgresServer> {
    const port = await freeLoopbackPort();
    const child = spawnAsOwner(
      postgres,
      [
        "-D", data,
        "-p", String(port),
        "-k", dir,
        "-c", "listen_addresses=127.0.0.1",
        // Disposable data: durability only costs time here.
        "-c", "fsync=off",
        "-c", "synchronous_commit=off",
        "-c", "full_page_writes=off",
        "-c", "max_connections=200",
      ],
      dir,
    );
    const output = collectOutput(child);
    const deadline = Date.now() + timeoutMs;
    while (!(await canConnect(port))) {
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
        signalPostmaster(data, "SIGKILL");
        child.kill("SIGKILL");
        throw new Error(`postgres did not start on port ${port}:\n${output()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return new PostgresServer(port, dir, child, output, Date.now() - started);
  }

  /** Connection URL of `database` over TCP, as the service would be configured. */
  url(database = "postgres"): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Creates an empty database and returns its URL. */
  async createDatabase(prefix = "atelier_test"): Promise<string> {
    const name = `${prefix}_${++this.databases}_${randomBytes(3).toString("hex")}`;
    const client = new pg.Client({ connectionString: this.url() });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    } finally {
      await client.end();
    }
    return this.url(name);
  }

  /** Fast shutdown (SIGINT to the postmaster), then removes the folder. Safe to call twice. */
  async dispose(): Promise<void> {
    const data = path.join(this.dir, "data");
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = exitOf(this.child);
      if (!signalPostmaster(data, "SIGINT")) this.child.kill("SIGINT");
      const timer = setTimeout(() => {
        signalPostmaster(data, "SIGKILL");
        this.child.kill("SIGKILL");
      }, 10_000);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** The server's recent log output, for failure messages. */
  log(): string {
    return this.output();
  }
}

/** Starts a disposable PostgreSQL; see {@link PostgresServer}. Call `dispose()` when done. */
export function startPostgresServer(): Promise<PostgresServer> {
  return PostgresServer.start();
}
