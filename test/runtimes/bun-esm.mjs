// Bun, ES module: the built entries (dist/index.js, dist/fetch.js, dist/google.js) against
// Bun.serve in this process.
import * as main from '../../dist/index.js';
import * as fetchEntry from '../../dist/fetch.js';
import * as google from '../../dist/google.js';
import { handle } from './smoke-server.js';
import { report } from './smoke.js';

const lib = { ...main, ...fetchEntry, ...google };
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: handle });
// The harness names its fault server and a refused origin (see fault-server.mjs).
const [faults, refused] = process.argv.slice(2);
const result = await report(lib, `http://127.0.0.1:${server.port}`, 'bun-esm', { faults, refused });
console.log(`REPORT ${JSON.stringify(result)}`);
server.stop(true);
