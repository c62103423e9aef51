#!/usr/bin/env node
/**
 * The `atelier` command:
 *
 *   atelier upscale photo.jpg --scale 4 -o big.png
 *   atelier generate "a lighthouse at dusk" -o out.png
 *   atelier style photo.jpg --style udnie -o painted.png
 *   atelier remove-background portrait.jpg --replacement white -o cutout.png
 *   atelier improve "a cat on a roof" --style watercolor
 *   atelier models [--task upscale]
 *
 * Key and server from --api-key / --base-url or ATELIER_API_KEY / ATELIER_BASE_URL. Results go to
 * the file named by -o (default: a name derived from the input); `--json` prints the response.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { Atelier, AtelierError, RateLimitError, type AtelierImage, type JobOperation } from "../node.js";
import { Progress } from "./progress.js";

const USAGE = `Usage: atelier <command> [arguments] [options]

Commands:
  generate <prompt>             Text to image        (--model, --width, --height, --seed, --steps, --negative)
  upscale <image>               Enlarge an image     (--scale 2..8, --model, --quality fast|balanced|max)
  style <image> --style <id>    Paint in a style     (--strength 0..1, --preserve-colors)
  remove-background <image>     Cut out the subject  (--replacement <colour|url|blur|text|@file>, --model, --only-mask)
  improve <prompt>              Improve a prompt     (--style, --mood, --variants, --seed)
  models                        List models          (--task <task>)

An <image> is a file path, an http(s) URL or a data URL. A file is uploaded as it is (a
multipart/form-data form); a URL is sent for the server to fetch. --replacement @photo.jpg
uploads photo.jpg as the new background.

Options:
  -o, --output <file>    Where to write the image (default: derived from the input)
      --format <f>       png (default), jpeg or webp
      --job              Run as an asynchronous job and show its progress (needs a server with jobs)
      --json             Print the full JSON response on stdout
      --api-key <key>    Default: ATELIER_API_KEY
      --base-url <url>   Default: ATELIER_BASE_URL, else http://localhost:8080
      --timeout <s>      Seconds per attempt (default 600)
      --max-retries <n>  Retries on connection errors, 429 and 5xx (default 2)
  -h, --help`;

const OPTIONS = {
  output: { type: "string", short: "o" },
  format: { type: "string" },
  scale: { type: "string" },
  model: { type: "string" },
  quality: { type: "string" },
  style: { type: "string" },
  strength: { type: "string" },
  "preserve-colors": { type: "boolean" },
  replacement: { type: "string" },
  "only-mask": { type: "boolean" },
  width: { type: "string" },
  height: { type: "string" },
  seed: { type: "string" },
  steps: { type: "string" },
  negative: { type: "string" },
  mood: { type: "string" },
  variants: { type: "string" },
  task: { type: "string" },
  job: { type: "boolean" },
  json: { type: "boolean" },
  "api-key": { type: "string" },
  "base-url": { type: "string" },
  timeout: { type: "string" },
  "max-retries": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

class UsageError extends Error {}

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

function number(values: Values, name: keyof Values): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const parsed = Number(raw);
  if (typeof raw !== "string" || raw.trim() === "" || !Number.isFinite(parsed)) throw new UsageError(`--${name} expects a number, received ${JSON.stringify(raw)}.`);
  return parsed;
}

function defined<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as T;
}

function one(positionals: string[], what: string): string {
  if (positionals.length !== 1) throw new UsageError(`Expected one ${what}, received ${positionals.length}.`);
  return positionals[0]!;
}

/** `photo.jpg` → `photo-upscaled.png`; a URL or data URL → `upscaled.png`. */
function derivedName(input: string | undefined, suffix: string, mimeType: string): string {
  const extension = mimeType.split("/")[1] === "jpeg" ? "jpg" : (mimeType.split("/")[1] ?? "png");
  const base = input && !/^(https?:|data:)/i.test(input) ? path.parse(input).name : "";
  return `${base ? `${base}-` : ""}${suffix}.${extension}`;
}

interface Plan {
  label: string;
  operation: JobOperation;
  params: Record<string, unknown>;
  input: string | undefined;
  suffix: string;
}

function plan(command: string, positionals: string[], values: Values): Plan | undefined {
  const outputFormat = values.format;
  switch (command) {
    case "generate": {
      const prompt = positionals.join(" ").trim();
      if (!prompt) throw new UsageError('generate needs a prompt, e.g. atelier generate "a lighthouse at dusk".');
      const params = defined({ prompt, model: values.model, width: number(values, "width"), height: number(values, "height"), seed: number(values, "seed"), steps: number(values, "steps"), negativePrompt: values.negative, outputFormat });
      return { label: "Generating", operation: "images.generate", params, input: undefined, suffix: "generated" };
    }
    case "upscale": {
      const input = one(positionals, "image");
      const scale = number(values, "scale");
      return { label: "Upscaling", operation: "tools.upscale", params: defined({ image: input, scale, model: values.model, quality: values.quality, outputFormat }), input, suffix: `upscaled-x${scale ?? 2}` };
    }
    case "style": {
      const input = one(positionals, "image");
      if (!values.style) throw new UsageError("style needs --style <id>; `atelier models --task style-transfer` lists them.");
      const params = defined({ image: input, style: values.style, strength: number(values, "strength"), preserveColors: values["preserve-colors"], outputFormat });
      return { label: "Styling", operation: "tools.styleTransfer", params, input, suffix: values.style };
    }
    case "remove-background": {
      const input = one(positionals, "image");
      // `@file` names a picture for the background, as curl's -F does; any other text is sent as it is.
      const replacement = values.replacement?.startsWith("@") ? pathToFileURL(path.resolve(values.replacement.slice(1))) : values.replacement;
      const params = defined({ image: input, replacement, model: values.model, onlyMask: values["only-mask"], outputFormat });
      return { label: "Removing the background", operation: "tools.removeBackground", params, input, suffix: "cutout" };
    }
  }
  return undefined;
}

async function runImageCommand(client: Atelier, work: Plan, values: Values): Promise<void> {
  const progress = new Progress(work.label).start();
  let result: { data: AtelierImage[] } & Record<string, unknown>;
  try {
    if (values.job) {
      // The plan's params were built for this operation; the CLI assembles them untyped from flags.
      const job = await client.jobs.create(work.operation, work.params as never);
      result = (await job.wait({
        onProgress: (current) => progress.update(current.progress?.fraction, current.progress?.stage ?? current.status),
      })) as typeof result;
    } else {
      const method = work.operation.split(".") as [keyof Atelier, string];
      const resource = client[method[0]] as unknown as Record<string, (params: unknown) => Promise<typeof result>>;
      result = await resource[method[1]]!(work.params);
    }
  } catch (error) {
    progress.stop("failed");
    throw error;
  }
  const image = result.data[0];
  if (!image) throw new AtelierError("The response carried no image.", { code: "INVALID_RESPONSE" });
  const output = values.output ?? derivedName(work.input, work.suffix, image.mimeType);
  await image.save(output);
  progress.stop(`${image.width}x${image.height} ${image.mimeType}`);
  if (values.json) console.log(JSON.stringify(result, null, 2));
  else console.log(output);
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command || values.help ? 0 : 2;
  }
  const timeout = number(values, "timeout");
  const maxRetries = number(values, "max-retries");
  const client = new Atelier(defined({ apiKey: values["api-key"], baseURL: values["base-url"], timeout: timeout === undefined ? undefined : timeout * 1000, maxRetries }));

  const work = plan(command, rest, values);
  if (work) {
    await runImageCommand(client, work, values);
    return 0;
  }
  if (command === "improve") {
    const prompt = rest.join(" ").trim();
    if (!prompt) throw new UsageError('improve needs a prompt, e.g. atelier improve "a cat on a roof".');
    const result = await client.prompts.improve(defined({ prompt, style: values.style, mood: values.mood, variants: number(values, "variants"), seed: number(values, "seed") }));
    if (values.json) console.log(JSON.stringify(result, null, 2));
    else for (const variant of result.variants) console.log(variant.prompt);
    return 0;
  }
  if (command === "models") {
    const result = await client.models.list();
    const models = result.data.filter((model) => !values.task || model.task === values.task);
    if (values.json) console.log(JSON.stringify(models, null, 2));
    else for (const model of models) console.log(`${model.id.padEnd(24)} ${model.task.padEnd(18)} ${((model.installed ? "installed" : "not installed") + (model.disabled ? " (disabled)" : "")).padEnd(14)} ${model.name}`);
    return 0;
  }
  throw new UsageError(`Unknown command ${JSON.stringify(command)}.`);
}

function describe(error: unknown): string {
  if (error instanceof RateLimitError) {
    return `error: ${error.message} [${error.code}, HTTP 429${error.resetAt ? `, quota resets ${error.resetAt.toISOString()}` : ""}${error.requestId ? `, request ${error.requestId}` : ""}]`;
  }
  if (error instanceof AtelierError) {
    const where = [error.code, error.status ? `HTTP ${error.status}` : undefined, error.requestId ? `request ${error.requestId}` : undefined].filter(Boolean).join(", ");
    const issues = error.issues.map((issue) => `\n  ${issue.path || "(body)"}: ${issue.message}`).join("");
    return `error: ${error.message} [${where}]${issues}`;
  }
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) return `usage: ${(error as Error).message}\nRun atelier --help for the commands.`;
  if ((error as { code?: string }).code === "ENOENT") return `error: ${(error as Error).message}`;
  return `error: ${error instanceof Error ? error.message : String(error)}`;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(describe(error));
    process.exitCode = error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") ? 2 : 1;
  },
);
