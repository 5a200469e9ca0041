// npm run demo: a flaky in-process operation retried by tenacious, printing each attempt,
// each wait and the outcome. Small delays so it finishes in a couple of seconds.
import { RetryError, retry } from '../src/index.js';

const started = performance.now();
const at = () => `${String(Math.round(performance.now() - started)).padStart(5)} ms`;

// Fails with a 503 three times, then answers.
let calls = 0;
async function flakyOperation(): Promise<string> {
  calls++;
  if (calls <= 3) throw Object.assign(new Error('503 Service Unavailable'), { status: 503 });
  return 'the answer';
}

try {
  const value = await retry(
    async ({ attempt }) => {
      console.log(`${at()}  attempt ${attempt}`);
      return flakyOperation();
    },
    {
      backoff: { initialDelayMs: 100, multiplier: 2, maxDelayMs: 1000, jitter: { additiveMs: 100 } },
      deadlineMs: 5000,
      onRetry: ({ attempt, error, delayMs }) =>
        console.log(`${at()}  attempt ${attempt} failed (${(error as Error).message}); waiting ${Math.round(delayMs)} ms`),
    },
  );
  console.log(`${at()}  succeeded: ${value}`);
} catch (error) {
  console.log(`${at()}  gave up: ${error instanceof RetryError ? `${error.reason}, ${error.message}` : String(error)}`);
  process.exitCode = 1;
}
