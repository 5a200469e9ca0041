// `npm run demo:otel` runs as shown: a child process, as a user would start it, on real time.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('npm run demo:otel', () => {
  it('prints the call span with its three HTTP client spans under it, numbered, and the metrics', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/demo-otel.ts'], {
      cwd: ROOT,
      timeout: 30_000,
    });
    expect(stdout).toContain('retryFetch answered 200');
    expect(stdout).toMatch(/^ {2}objects\.get {2}\[INTERNAL, .*tenacious\.attempts=3 tenacious\.outcome=success$/m);
    const http = stdout.split('\n').filter((line) => /^ {6}GET {2}\[CLIENT/.test(line));
    expect(http.map((line) => /http\.response\.status_code=(\d+)/.exec(line)?.[1])).toEqual(['503', '503', '200']);
    expect(http.map((line) => /http\.request\.resend_count=(\d+)/.exec(line)?.[1])).toEqual([undefined, '1', '2']);
    expect(stdout).toMatch(/tenacious\.call\.retries \{retry\} .* count=1 sum=2$/m);
  }, 40_000);
});
