/**
 * Starts service-process-main.ts as a child process and watches it: its URL, whether it is still
 * running, its memory (heap after a full collection, and resident size) and the last lines it
 * wrote (its error logs, for a failing test's message).
 */
import { spawn, type ChildProcess } from "node:child_process";

export interface ProcessMemory {
  rss: number;
  heapUsed: number;
}

export interface ServiceProcess {
  url: string;
  port: number;
  /** True while the process has neither exited nor been killed. */
  running(): boolean;
  /** Memory after a full garbage collection in the child. */
  memory(): Promise<ProcessMemory>;
  /** The child's last output lines (its logs at the configured level, and anything it printed). */
  output(): string;
  close(): Promise<void>;
}

const KEPT_OUTPUT_LINES = 200;

export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const child: ChildProcess = spawn(process.execPath, ["--expose-gc", "--import", "tsx", "test/hostile/support/service-process-main.ts"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString().split("\n").filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - KEPT_OUTPUT_LINES));
  };
  child.stderr!.on("data", keep);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start:\n${lines.join("\n")}`)), 60_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      keep(chunk);
      const ready = /READY (\S+)/.exec(lines.join("\n"));
      if (ready) {
        clearTimeout(timer);
        resolve(ready[1]!);
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${code ?? signal}):\n${lines.join("\n")}`));
    });
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    url,
    port: Number(new URL(url).port),
    running,
    memory: () =>
      new Promise<ProcessMemory>((resolve, reject) => {
        if (!running()) return reject(new Error(`the service is not running:\n${lines.join("\n")}`));
        const onMessage = (message: { memory?: ProcessMemory }) => {
          if (!message.memory) return;
          child.off("message", onMessage);
          resolve(message.memory);
        };
        child.on("message", onMessage);
        child.send("memory");
      }),
    output: () => lines.join("\n"),
    close: async () => {
      if (!running()) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  };
}
