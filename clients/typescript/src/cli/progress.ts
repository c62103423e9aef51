/**
 * Progress on stderr, drawn only when it is a terminal (pipes and logs get a single line at the end):
 * a spinner with elapsed time while a synchronous call runs, a bar when a job reports progress.
 */
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const BAR_WIDTH = 24;

export class Progress {
  private timer: ReturnType<typeof setInterval> | undefined;
  private frame = 0;
  private readonly started = Date.now();
  private detail = "";
  private readonly interactive: boolean;

  constructor(
    private readonly label: string,
    private readonly stream: Pick<NodeJS.WriteStream, "write" | "isTTY"> = process.stderr,
  ) {
    this.interactive = Boolean(stream.isTTY);
  }

  start(): this {
    if (this.interactive) this.timer = setInterval(() => this.draw(), 100);
    return this;
  }

  /** A fraction from 0 to 1 draws a bar; a stage name or step count is shown beside it. */
  update(fraction: number | undefined, detail = ""): void {
    this.detail = fraction === undefined ? detail : `${bar(fraction)} ${Math.round(fraction * 100)}%${detail ? ` ${detail}` : ""}`;
    if (this.interactive) this.draw();
  }

  stop(outcome: string): void {
    if (this.timer) clearInterval(this.timer);
    if (this.interactive) this.stream.write("\r\x1b[2K");
    this.stream.write(`${outcome} (${this.elapsed()})\n`);
  }

  private elapsed(): string {
    return `${((Date.now() - this.started) / 1000).toFixed(1)} s`;
  }

  private draw(): void {
    this.frame = (this.frame + 1) % FRAMES.length;
    this.stream.write(`\r\x1b[2K${FRAMES[this.frame]} ${this.label} ${this.detail} ${this.elapsed()}`);
  }
}

function bar(fraction: number): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * BAR_WIDTH);
  return `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}]`;
}
