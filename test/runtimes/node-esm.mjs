// Node, ES module: the built entries (dist/index.js, dist/fetch.js, dist/google.js) against a
// node:http server in this process.
import * as main from '../../dist/index.js';
import * as fetchEntry from '../../dist/fetch.js';
import * as google from '../../dist/google.js';
import { serve } from './node-server.mjs';
import { handle } from './smoke-server.js';
import { report } from './smoke.js';

// The harness names its fault server and a refused origin (see fault-server.mjs).
const [faults, refused] = process.argv.slice(2);
const lib = { ...main, ...fetchEntry, ...google };
const server = await serve(handle);
const result = await report(lib, server.origin, 'node-esm', { faults, refused });
console.log(`REPORT ${JSON.stringify(result)}`);
await server.close();
