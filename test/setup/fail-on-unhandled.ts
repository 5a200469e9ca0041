// Every test file runs with this: a promise rejected with nobody listening fails the test that
// caused it, by name, instead of being reported at the end (or not at all) by the runner.
import { afterEach } from 'vitest';

const unhandled: unknown[] = [];
const record = (reason: unknown): void => {
  unhandled.push(reason);
};
process.on('unhandledRejection', record);

afterEach(async () => {
  // Rejections are reported one macrotask late; give them that chance before checking.
  await new Promise((resolve) => setImmediate(resolve));
  if (unhandled.length > 0) {
    const reasons = unhandled.splice(0).map(String).join('; ');
    throw new Error(`unhandled rejection during this test: ${reasons}`);
  }
});
