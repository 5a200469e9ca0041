// Node, CommonJS: the built entries (dist/index.cjs, dist/fetch.cjs, dist/google.cjs), loaded
// with require(), against a node:http server.
const lib = { ...require('../../dist/index.cjs'), ...require('../../dist/fetch.cjs'), ...require('../../dist/google.cjs') };

(async () => {
  const { serve } = await import('./node-server.mjs');
  const { handle } = await import('./smoke-server.js');
  const { report } = await import('./smoke.js');
  const server = await serve(handle);
  // The harness names its fault server and a refused origin (see fault-server.mjs).
  const [faults, refused] = process.argv.slice(2);
  const result = await report(lib, server.origin, 'node-cjs', { faults, refused });
  console.log(`REPORT ${JSON.stringify(result)}`);
  await server.close();
})();
