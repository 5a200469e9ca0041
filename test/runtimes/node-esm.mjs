// Node, ES module: the built dist/index.js against a node:http server in this process.
import * as lib from '../../dist/index.js';
import { serve } from './node-server.mjs';
import { handle } from './smoke-server.js';
import { report } from './smoke.js';

// The harness names its fault server and a refused origin (see fault-server.mjs).
const [faults, refused] = process.argv.slice(2);
const server = await serve(handle);
const result = await report(lib, server.origin, 'node-esm', { faults, refused });
console.log(`REPORT ${JSON.stringify(result)}`);
await server.close();
