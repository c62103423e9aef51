/**
 * Setup file of the unit lane (vitest.config.ts): that lane is pure logic, so it stays quick. A test
 * file there that listens on a port, opens a connection or starts a child process fails at that
 * call, naming the lane it belongs in, rather than quietly making the quick lane slow.
 */
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";

function refuse(what: string): never {
  throw new Error(`The unit lane runs pure logic; a test that starts ${what} belongs in the service or e2e lane (vitest.config.ts).`);
}

net.Server.prototype.listen = function listen(): never {
  refuse("a server");
};
net.Socket.prototype.connect = function connect(): never {
  refuse("a network connection");
};
for (const name of ["spawn", "exec", "execFile", "fork", "spawnSync", "execSync", "execFileSync"] as const) {
  childProcess[name] = (() => refuse("a child process")) as never;
}
// Named imports of node:child_process read these bindings, not the object patched above.
syncBuiltinESMExports();
