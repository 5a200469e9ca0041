// workerd: the built entries (dist/index.js, dist/fetch.js, dist/google.js) inside a Worker.
// workerd cannot listen for the smoke suite's test server, so the harness serves it and names it
// in the request: GET /?base=ORIGIN&id=ID&faults=FAULTS&refused=REFUSED runs the suite against
// ORIGIN (and the fault server and refused origin of fault-server.mjs) and answers with the report.
import * as main from './dist/index.js';
import * as fetchEntry from './dist/fetch.js';
import * as google from './dist/google.js';
import { report } from './smoke.js';

const lib = { ...main, ...fetchEntry, ...google };

// workerd prints no unhandled rejection, even with --verbose: the worker collects them and
// returns them with the report, and the harness counts them as stderr.
const unhandled = [];
addEventListener('unhandledrejection', (event) => {
  unhandled.push(`unhandled rejection: ${event.reason?.stack ?? event.reason}`);
});

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const base = url.searchParams.get('base');
    if (base === null) return new Response('missing ?base=', { status: 400 });
    const network = { faults: url.searchParams.get('faults'), refused: url.searchParams.get('refused') };
    const result = await report(lib, base, url.searchParams.get('id') ?? 'workerd', network);
    return new Response(JSON.stringify({ ...result, unhandled }), { headers: { 'content-type': 'application/json' } });
  },
};
