// Runs in headless Chromium (see browser.test.ts): loads the built ES modules as a browser would
// (the three entries and the chunks they share), exercises retry(), computeDelay and retryFetch
// with gcs() over real fetches, timers and AbortSignals, and posts what it saw back to the server
// that served it.
import { HttpStatusError as MainHttpStatusError, RetryError, computeDelay, retry } from '/dist/index.js';
import { HttpStatusError, retryFetch } from '/dist/fetch.js';
import { gcs } from '/dist/google.js';

const httpError = (status, response) => Object.assign(new Error(`HTTP ${status}`), { status, response });

/** The server's /flaky endpoint answers 503, then 429 with Retry-After: 1, then 200. */
async function flakyFetch() {
  const statuses = [];
  const delays = [];
  const started = performance.now();
  const body = await retry(
    async ({ signal }) => {
      const response = await fetch('/flaky', { signal });
      statuses.push(response.status);
      if (!response.ok) throw httpError(response.status, response);
      return response.json();
    },
    { backoff: { initialDelayMs: 20, maxDelayMs: 80 }, rng: () => 1, deadlineMs: 10_000, onRetry: (e) => delays.push(e.delayMs) },
  );
  return { body, statuses, delays, elapsedMs: performance.now() - started };
}

/** The subpath entries together: retryFetch with gcs(); the server's /once-busy answers 503, then 200. */
async function subpaths() {
  const retried = [];
  const response = await retryFetch('/once-busy', undefined, {
    ...gcs({ operation: 'objects.get', backoff: { initialDelayMs: 1, maxDelayMs: 2 } }),
    onRetry: (event) => retried.push({ status: event.error.status, httpStatusError: event.error instanceof HttpStatusError }),
  });
  return { status: response.status, body: await response.json(), retried, sharedErrorClass: HttpStatusError === MainHttpStatusError };
}

async function exhausted() {
  let calls = 0;
  try {
    await retry(
      () => {
        calls += 1;
        throw httpError(503);
      },
      { maxAttempts: 3, backoff: { initialDelayMs: 1, maxDelayMs: 2 } },
    );
    return { resolved: true };
  } catch (error) {
    return { calls, isRetryError: error instanceof RetryError, reason: error.reason, attempts: error.attempts, cause: error.cause.message };
  }
}

async function permanent() {
  const notFound = httpError(404);
  let calls = 0;
  const outcome = await retry(() => {
    calls += 1;
    throw notFound;
  }).catch((error) => error);
  return { calls, sameError: outcome === notFound };
}

async function abortDuringAttempt() {
  const controller = new AbortController();
  const reason = new Error('user navigated away');
  let attemptSignal;
  setTimeout(() => controller.abort(reason), 30);
  const outcome = await retry(
    ({ signal }) => {
      attemptSignal = signal;
      return new Promise(() => {}); // never settles: only the abort can end this call
    },
    { signal: controller.signal },
  ).catch((error) => error);
  return { rejectedWithReason: outcome === reason, attemptAborted: attemptSignal.aborted, attemptReason: attemptSignal.reason === reason };
}

async function deadline() {
  const started = performance.now();
  const outcome = await retry(() => new Promise(() => {}), { deadlineMs: 100 }).catch((error) => error);
  return { isRetryError: outcome instanceof RetryError, reason: outcome.reason, elapsedMs: performance.now() - started };
}

function delays() {
  const google = { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 32_000, jitter: { additiveMs: 1000 } };
  const badAttempt = (() => {
    try {
      computeDelay(-1, google);
      return 'no error';
    } catch (error) {
      return `${error.name}: ${error.message}`;
    }
  })();
  return {
    google: [0, 1, 2, 3, 4, 5, 9, 10_000].map((n) => computeDelay(n, google, () => 0.25)),
    full: [0, 1, 2].map((n) => computeDelay(n, { ...google, jitter: 'full' }, () => 0.5)),
    badAttempt,
  };
}

async function main() {
  return {
    userAgent: navigator.userAgent,
    flakyFetch: await flakyFetch(),
    subpaths: await subpaths(),
    exhausted: await exhausted(),
    permanent: await permanent(),
    abortDuringAttempt: await abortDuringAttempt(),
    deadline: await deadline(),
    delays: delays(),
  };
}

const report = await main().catch((error) => ({ failed: `${error?.name}: ${error?.message}\n${error?.stack}` }));
await fetch('/report', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(report) });
