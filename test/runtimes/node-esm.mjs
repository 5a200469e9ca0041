// Node, ES module: the built dist/index.js against a node:http server in this process.
import * as lib from '../../dist/index.js';
import { serve } from './node-server.mjs';
import { handle } from './smoke-server.js';
import { report } from './smoke.js';

const server = await serve(handle);
const result = await report(lib, server.origin, 'node-esm');
console.log(`REPORT ${JSON.stringify(result)}`);
await server.close();
