// Node, CommonJS: the built dist/index.cjs, loaded with require(), against a node:http server.
const lib = require('../../dist/index.cjs');

(async () => {
  const { serve } = await import('./node-server.mjs');
  const { handle } = await import('./smoke-server.js');
  const { report } = await import('./smoke.js');
  const server = await serve(handle);
  const result = await report(lib, server.origin, 'node-cjs');
  console.log(`REPORT ${JSON.stringify(result)}`);
  await server.close();
})();
