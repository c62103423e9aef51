/**
 * bin/service.ts as `npm start` runs it, in a child process of its own: for tests of what only a
 * whole process shows (signals and the shutdown grace period, its own memory, its exit code).
 */
import { spawn, type ChildProcess } from "node:child_process";
import readline from "node:readline";

export interface MainProcess {
  child: ChildProcess;
  /** The address it printed once listening. */
  url: string;
  /** Every line it wrote to standard output so far. */
  output: string[];
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
}

/** The settings every such test starts from: loopback, a free port, no metrics, no model downloads. */
export function mainProcessEnv(dataDir: string, settings: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "info",
    ATELIER_DATA_DIR: dataDir,
    ATELIER_METRICS_PORT: "0",
    ATELIER_PROVISION_MODELS: "false",
    ...settings,
  };
}

/** Starts the service and resolves once it says where it listens; rejects with its output if it exits first. */
export async function startMainProcess(env: NodeJS.ProcessEnv): Promise<MainProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "bin/service.ts"], { env, stdio: ["ignore", "pipe", "inherit"] });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      output.push(line);
      const match = /^Atelier is listening on (\S+)/.exec(line);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`service exited with ${code}: ${output.join("\n")}`)));
  });
  return { child, url, output, exited };
}
