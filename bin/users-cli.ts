/**
 * `npm run users -- <command>`: the operator's shell over the console accounts, in the same
 * database as the service ({@link openAccountStore}). Passwords are read from standard input
 * (`--password-stdin`), never taken as arguments, which other users could see in the process list.
 *
 * Exit codes and messages as for every operator CLI ({@link runOperatorCli}).
 */
import { loadConfig } from "../core/config.js";
import { CommandError, parseCommandLine, print, runOperatorCli, UsageError } from "./operator-cli.js";
import { USER_ROLES, type AccountStore, type User, type UserRole } from "../server/accounts/account-store.js";
import { openAccountStore } from "../server/accounts/open-account-store.js";

const USAGE = `Usage: npm run users -- <command> [options]

Commands:
  create --email EMAIL [--name NAME] [--admin] --password-stdin [--json]
                                        Create a user (member unless --admin); password from stdin
  list [--json]                         List users (never passwords)
  set-role EMAIL (admin|member)         Change a user's role
  disable EMAIL                         Disable a user: they cannot sign in; their sessions end
  enable EMAIL                          Enable a disabled user again
  set-allowance EMAIL (N|default)       Hourly requests all the user's keys may make together
                                        (also the largest limit of one key); default: the
                                        service default for members, none for admins
  reset-password EMAIL --password-stdin Set a new password; the user's sessions end
  help                                  Show this help

The password is the first line of standard input, e.g.:
  printf '%s\\n' "$PASSWORD" | npm run users -- create --email admin@example.com --admin --password-stdin

Environment: ATELIER_DATABASE_URL or ATELIER_DATA_DIR, as for the service.
`;

async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("Password (input is not hidden; prefer piping it): ");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    if (Buffer.concat(chunks).includes(10)) break;
  }
  const line = Buffer.concat(chunks).toString("utf8").split(/\r?\n/)[0] ?? "";
  if (line.length === 0) throw new UsageError("No password on standard input.");
  return line;
}

function describe(user: User): Record<string, unknown> {
  return {
    id: user.id,
    email: user.email,
    displayName: user.displayName,
    role: user.role,
    status: user.disabledAt ? "disabled" : "active",
    keyAllowance: user.keyAllowance,
    createdAt: user.createdAt.toISOString(),
  };
}

async function userByEmail(store: AccountStore, email: string | undefined): Promise<User> {
  if (!email) throw new UsageError("Missing EMAIL.");
  const user = await store.findUserByEmail(email);
  if (!user) throw new CommandError(`No user with email ${email}.`);
  return user;
}

async function run(argv: string[]): Promise<void> {
  const { command, args, values: options } = parseCommandLine(argv, {
    email: { type: "string" },
    name: { type: "string" },
    admin: { type: "boolean", default: false },
    "password-stdin": { type: "boolean", default: false },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  });
  if (options.help || command === "help") return print(USAGE.trimEnd());
  if (!command) throw new UsageError("Missing command.");
  const known = ["create", "list", "set-role", "disable", "enable", "set-allowance", "reset-password"];
  if (!known.includes(command)) throw new UsageError(`Unknown command '${command}'.`);
  if ((command === "create" || command === "reset-password") && !options["password-stdin"]) {
    throw new UsageError(`'${command}' needs --password-stdin (the password is read from standard input, never from arguments).`);
  }
  const password = command === "create" || command === "reset-password" ? await readPassword() : "";

  const config = loadConfig();
  const store = await openAccountStore(config);
  try {
    switch (command) {
      case "create": {
        if (!options.email) throw new UsageError("'create' needs --email EMAIL.");
        const user = await store.createUser({ email: options.email, displayName: options.name, password, role: options.admin ? "admin" : "member" });
        if (options.json) return print(JSON.stringify(describe(user)));
        return print(`Created ${user.role} ${user.email} (${user.id}). Sign in to the console with this email and the password given.`);
      }
      case "list": {
        const users = await store.listUsers();
        if (options.json) return print(JSON.stringify(users.map(describe)));
        if (users.length === 0) return print("No users yet. Create the first admin with: npm run users -- create --email EMAIL --admin --password-stdin");
        for (const user of users) print(`${user.email}\t${user.role}\t${user.disabledAt ? "disabled" : "active"}\t${user.displayName}`);
        return;
      }
      case "set-role": {
        const [email, role] = args;
        if (!USER_ROLES.includes(role as UserRole)) throw new UsageError("Role must be admin or member.");
        const user = await userByEmail(store, email);
        await store.setRole(user.id, role as UserRole);
        return print(`${user.email} is now ${role}.`);
      }
      case "disable":
      case "enable": {
        const user = await userByEmail(store, args[0]);
        await store.setDisabled(user.id, command === "disable");
        return print(command === "disable" ? `Disabled ${user.email}; their sessions have ended.` : `Enabled ${user.email}.`);
      }
      case "set-allowance": {
        const [email, value] = args;
        const user = await userByEmail(store, email);
        if (value !== "default" && !/^\d+$/.test(value ?? "")) throw new UsageError("Allowance must be a whole number or 'default'.");
        await store.setKeyAllowance(user.id, value === "default" ? null : Number(value));
        if (value !== "default") return print(`${user.email}'s keys may now make ${value} requests per hour together.`);
        if (user.role === "admin") return print(`${user.email} now has no allowance: as an admin, only each key's own limit applies.`);
        return print(`${user.email}'s keys may now make the service default (ATELIER_RATE_LIMIT_PER_HOUR) requests per hour together.`);
      }
      case "reset-password": {
        const user = await userByEmail(store, args[0]);
        await store.setPassword(user.id, password);
        return print(`Password of ${user.email} reset; their sessions have ended.`);
      }
    }
  } finally {
    await store.close();
  }
}

await runOperatorCli("users", USAGE, () => run(process.argv.slice(2)));
