// Deno: the built entries (dist/index.js, dist/fetch.js, dist/google.js) against Deno.serve in
// this process. Run with network access to 127.0.0.1 only and no other permission (static
// imports of local modules need none).
import * as main from '../../dist/index.js';
import * as fetchEntry from '../../dist/fetch.js';
import * as google from '../../dist/google.js';
import { handle } from './smoke-server.js';
import { report } from './smoke.js';

// What this process may do, for the harness to check the sandbox is what it should be. Under
// --no-prompt, 'prompt' means denied.
const state = (descriptor) => Deno.permissions.querySync(descriptor).state;
const permissions = {
  loopback: state({ name: 'net', host: '127.0.0.1' }),
  otherHosts: state({ name: 'net', host: 'example.com' }),
  read: state({ name: 'read' }),
  write: state({ name: 'write' }),
  env: state({ name: 'env' }),
  run: state({ name: 'run' }),
};
console.log(`PERMISSIONS ${JSON.stringify(permissions)}`);

const lib = { ...main, ...fetchEntry, ...google };
const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen() {} }, handle);
// The harness names its fault server and a refused origin (see fault-server.mjs).
const [faults, refused] = Deno.args;
const result = await report(lib, `http://127.0.0.1:${server.addr.port}`, 'deno', { faults, refused });
console.log(`REPORT ${JSON.stringify(result)}`);
Deno.exit(0); // without waiting for /hang requests the server may still hold
