// Bun, CommonJS: the built entries (dist/index.cjs, dist/fetch.cjs, dist/google.cjs), loaded with
// require(), against Bun.serve.
const lib = { ...require('../../dist/index.cjs'), ...require('../../dist/fetch.cjs'), ...require('../../dist/google.cjs') };

(async () => {
  const { handle } = await import('./smoke-server.js');
  const { report } = await import('./smoke.js');
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: handle });
  // The harness names its fault server and a refused origin (see fault-server.mjs).
  const [faults, refused] = process.argv.slice(2);
  const result = await report(lib, `http://127.0.0.1:${server.port}`, 'bun-cjs', { faults, refused });
  console.log(`REPORT ${JSON.stringify(result)}`);
  server.stop(true);
})();
