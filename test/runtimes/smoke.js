// The runtime smoke suite: one source, run against the BUILT package (dist/) by Node (ESM and
// CJS), Deno, Bun (ESM and CJS), workerd and headless Chromium; runtimes.test.ts drives them
// all and compares each report with the same expectations. Plain JavaScript that every one of
// them runs as it is, on real timers and real HTTP over loopback against smoke-server.js's
// routes (served by the runtime itself where it can listen, else by the Node harness). `smoke`
// takes the library as an argument, so the same code runs against the ES module and the
// CommonJS build.
//
// Waits are a few milliseconds; the one exception is Retry-After, whose smallest value is 1 s.

/** Backoff of a few milliseconds, without jitter, so the delays can be compared exactly. */
const TINY = { initialDelayMs: 2, multiplier: 2, maxDelayMs: 8, jitter: 'none' };

const httpError = (response) => Object.assign(new Error(`HTTP ${response.status}`), { status: response.status, response });
const never = () => new Promise(() => {});
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const settle = (promise) =>
  promise.then(
    (value) => ({ value }),
    (error) => ({ error }),
  );
const elapsedSince = (started) => Math.round(performance.now() - started);
const describeError = (error) => (error instanceof Error ? `${error.name}: ${error.message}` : `${typeof error}: ${String(error)}`);

/** A name that never resolves (RFC 6761), so the DNS case needs no network. */
const UNRESOLVABLE = 'http://does-not-exist.invalid/';

/**
 * An error and its causes as plain data, with what differs from run to run (ports, keys,
 * workerd's error reference) replaced, for comparison with test/classify/runtime-errors.ts.
 */
function shapeOf(error) {
  const levels = [];
  for (let level = error; typeof level === 'object' && level !== null && levels.length < 4; level = level.cause) {
    const message = String(level.message)
      .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')
      .replace(/key=[^&\s)]*/g, 'key=K')
      .replace(/reference = \w+/, 'reference = REF');
    const found = { name: level.name, message };
    if (typeof level.code === 'string') found.code = level.code;
    if (typeof level.syscall === 'string') found.syscall = level.syscall;
    levels.push(found);
  }
  return levels;
}

/**
 * Runs every case against `lib` (the exports of the package's three entries, merged) and the
 * server at `base`; resolves with a report of plain data. `id` keeps the keys of concurrent runs
 * on one server apart. `network` names the harness's fault server (`faults`, fault-server.mjs)
 * and an origin on which nothing listens (`refused`).
 */
export async function smoke(lib, base, id, network) {
  const { RetryError, TimeoutError, createRetryBudget, gcs, iam, isTransient, networkError, notSent, retry, retryFetch } = lib;
  let n = 0;
  const url = (path, query = {}) => {
    n += 1;
    return `${base}${path}?${new URLSearchParams({ key: `${id}-${n}`, ...query })}`;
  };
  const served = async (at) => (await (await fetch(at.replace(/\/\w+\?/, '/count?'))).json()).served;

  const cases = {};

  // retry() around a real fetch: two 503s, then 200.
  {
    const at = url('/flaky', { fail: 2, status: 503 });
    const delays = [];
    const body = await retry(
      async ({ signal }) => {
        const response = await fetch(at, { signal });
        if (!response.ok) throw httpError(response);
        return response.json();
      },
      { backoff: TINY, deadlineMs: 10_000, onRetry: (event) => delays.push(event.delayMs) },
    );
    cases.transient = { body, delays };
  }

  // retryFetch: a 502 then 200, and a 404 returned at once with its body intact.
  {
    const at = url('/flaky', { fail: 1, status: 502 });
    const response = await retryFetch(at, undefined, { backoff: TINY });
    const notFoundAt = url('/flaky', { fail: 99, status: 404 });
    const notFound = await retryFetch(notFoundAt, undefined, { backoff: TINY });
    cases.retryFetch = {
      status: response.status,
      body: await response.json(),
      notFound: { status: notFound.status, body: await notFound.json(), served: await served(notFoundAt) },
    };
  }

  // A non-retryable error comes back unchanged, after one attempt.
  {
    const at = url('/flaky', { fail: 99, status: 404 });
    let thrown;
    const outcome = await settle(
      retry(async () => {
        const response = await fetch(at);
        thrown = httpError(response);
        throw thrown;
      }),
    );
    cases.permanent = { sameError: outcome.error === thrown, served: await served(at) };
  }

  // Out of attempts: RetryError 'attempts' with the last error as its cause.
  {
    const at = url('/flaky', { fail: 99, status: 503 });
    const outcome = await settle(
      retry(
        async () => {
          throw httpError(await fetch(at));
        },
        { maxAttempts: 3, backoff: TINY },
      ),
    );
    cases.exhausted = {
      isRetryError: outcome.error instanceof RetryError,
      reason: outcome.error?.reason,
      attempts: outcome.error?.attempts,
      cause: outcome.error?.cause?.message,
      served: await served(at),
    };
  }

  // A call that never settles is abandoned at the deadline; so is a real fetch the server never
  // answers.
  {
    let attemptSignal;
    const started = performance.now();
    const outcome = await settle(
      retry(
        ({ signal }) => {
          attemptSignal = signal;
          return never();
        },
        { deadlineMs: 60 },
      ),
    );
    const elapsedMs = elapsedSince(started);
    const at = url('/hang', { hang: 99 });
    const fetchStarted = performance.now();
    const fetched = await settle(retryFetch(at, undefined, { deadlineMs: 80, backoff: TINY }));
    cases.deadline = {
      isRetryError: outcome.error instanceof RetryError,
      reason: outcome.error?.reason,
      attempts: outcome.error?.attempts,
      attemptAborted: attemptSignal?.aborted,
      elapsedMs,
      fetch: {
        isRetryError: fetched.error instanceof RetryError,
        reason: fetched.error?.reason,
        elapsedMs: elapsedSince(fetchStarted),
      },
    };
  }

  // An abandoned attempt's late rejection (after the deadline, after its attempt timeout) is
  // swallowed: the runtime must report no unhandled rejection (a crash, or a line on stderr).
  {
    const late = (ms) => () => new Promise((_, reject) => setTimeout(() => reject(new Error('late')), ms));
    const afterDeadline = await settle(retry(late(60), { deadlineMs: 20 }));
    const afterTimeout = await settle(retry(late(60), { attemptTimeoutMs: 20, maxAttempts: 1 }));
    await pause(100); // both late rejections happen meanwhile
    cases.lateRejection = {
      afterDeadline: afterDeadline.error?.reason,
      afterTimeout: [afterTimeout.error?.reason, afterTimeout.error?.cause instanceof TimeoutError],
    };
  }

  // The caller's signal: aborting during a hung fetch, and during a backoff sleep, rejects at
  // once with the signal's reason.
  {
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    const at = url('/hang', { hang: 99 });
    const pending = settle(retryFetch(at, undefined, { signal: controller.signal, backoff: TINY }));
    // Abort once the server holds the request, however slow a busy machine makes it get there.
    for (let polls = 0; polls < 1000 && (await served(at)) === 0; polls += 1) await pause(5);
    const abortedAt = performance.now();
    controller.abort(reason);
    const duringFetch = await pending;
    const afterAbortMs = elapsedSince(abortedAt);

    const sleeping = new AbortController();
    const sleepReason = new Error('stop sleeping');
    let calls = 0;
    const sleepStarted = performance.now();
    const duringSleep = await settle(
      retry(
        () => {
          calls += 1;
          setTimeout(() => sleeping.abort(sleepReason), 20);
          throw Object.assign(new Error('busy'), { status: 503 });
        },
        { signal: sleeping.signal, backoff: { initialDelayMs: 10_000, maxDelayMs: 10_000, jitter: 'none' } },
      ),
    );
    cases.abort = {
      duringFetch: { rejectedWithReason: duringFetch.error === reason, served: await served(at), afterAbortMs },
      duringSleep: { rejectedWithReason: duringSleep.error === sleepReason, calls, elapsedMs: elapsedSince(sleepStarted) },
    };
  }

  // A per-attempt timeout: the hung first request times out (TimeoutError, retryable) and the
  // second is answered; a call that always hangs runs out of attempts with a TimeoutError cause.
  {
    const at = url('/hang', { hang: 1 });
    // 300 ms: long enough for the second, answered, request on a busy machine.
    const response = await retryFetch(at, undefined, { attemptTimeoutMs: 300, backoff: TINY });
    const outcome = await settle(retry(never, { attemptTimeoutMs: 10, maxAttempts: 2, backoff: TINY }));
    cases.attemptTimeout = {
      status: response.status,
      body: await response.json(),
      reason: outcome.error?.reason,
      attempts: outcome.error?.attempts,
      causeIsTimeoutError: outcome.error?.cause instanceof TimeoutError,
    };
  }

  // A retry budget of 4 tokens: each failure takes one, and retrying stops at half (2).
  {
    const budget = createRetryBudget({ maxTokens: 4, tokenRatio: 0.5 });
    const at = url('/flaky', { fail: 99, status: 503 });
    const outcome = await settle(
      retry(
        async () => {
          throw httpError(await fetch(at));
        },
        { budget, maxAttempts: 10, backoff: TINY },
      ),
    );
    const afterRefusal = budget.tokens;
    await retry(() => 'ok', { budget });
    cases.budget = {
      reason: outcome.error?.reason,
      attempts: outcome.error?.attempts,
      served: await served(at),
      afterRefusal,
      afterSuccess: budget.tokens,
    };
  }

  // The presets, with their backoff shortened: iam() retries 503 but never a lone 409, and 404
  // only when asked; gcs() retries 429 on a read, and a write only with its precondition.
  {
    const iamRetried = url('/flaky', { fail: 2, status: 503 });
    const iamConflict = url('/flaky', { fail: 99, status: 409 });
    const iamNotFound = url('/flaky', { fail: 1, status: 404 });
    const gcsRead = url('/flaky', { fail: 2, status: 429 });
    const gcsWrite = url('/flaky', { fail: 1, status: 503 });
    const gcsGuardedWrite = url('/flaky', { fail: 1, status: 503 });
    const get = (at, options) => retryFetch(at, undefined, { ...options, backoff: TINY });
    const post = (at, options) => retryFetch(at, { method: 'POST', body: 'data' }, { ...options, backoff: TINY });
    const statusAndCount = async (response, at) => [response.status, await served(at)];
    cases.presets = {
      iam: {
        retried: await statusAndCount(await get(iamRetried, iam()), iamRetried),
        conflict: await statusAndCount(await get(iamConflict, iam()), iamConflict),
        notFound: await statusAndCount(await get(iamNotFound, iam({ retryNotFound: true })), iamNotFound),
      },
      gcs: {
        read: await statusAndCount(await get(gcsRead, gcs({ operation: 'objects.get' })), gcsRead),
        write: await statusAndCount(await post(gcsWrite, gcs({ operation: 'objects.insert' })), gcsWrite),
        guardedWrite: await statusAndCount(
          await post(gcsGuardedWrite, gcs({ operation: 'objects.insert', preconditions: { ifGenerationMatch: 0 } })),
          gcsGuardedWrite,
        ),
      },
    };
  }

  // A Request whose body is given in init, retried after a 503: each attempt sends the whole body
  // again (a Request's own body is a stream, sent once).
  {
    const at = url('/flaky', { fail: 1, status: 503 });
    const response = await retryFetch(new Request(at, { method: 'PUT' }), { body: 'payload' }, { backoff: TINY });
    cases.bodyReplay = { status: response.status, body: await response.json() };
  }

  // After retryFetch has returned the response, the caller's signal still stops its body, as
  // it would with fetch.
  {
    const controller = new AbortController();
    const response = await retryFetch(url('/trickle'), { signal: controller.signal }, { backoff: TINY });
    const reader = response.body.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    controller.abort(new Error('no more body'));
    const rest = await settle(reader.read());
    cases.abortBody = { status: response.status, first, restRejected: 'error' in rest };
  }

  // Retry-After: 1 lengthens a 2 ms backoff to a whole second.
  {
    const at = url('/flaky', { fail: 1, status: 429, retryAfter: 1 });
    const delays = [];
    const started = performance.now();
    const response = await retryFetch(at, undefined, { backoff: TINY, onRetry: (event) => delays.push(event.delayMs) });
    cases.retryAfter = { status: response.status, body: await response.json(), delays, elapsedMs: elapsedSince(started) };
  }

  // Network failures, provoked for real: what the runtime's fetch throws for each, how the
  // default classification judges it, and what retryFetch does about it.
  {
    const { faults, refused } = network;
    const at = (path, fail = 99) => {
      n += 1;
      return `${faults}${path}?${new URLSearchParams({ key: `${id}-${path.slice(1)}-${n}`, fail })}`;
    };
    const servedAt = async (where) => (await (await fetch(where.replace(/\/\w+\?/, '/count?'))).json()).served;
    const judged = (error) => ({
      shape: shapeOf(error),
      isTransient: isTransient(error),
      networkError: networkError(error),
      notSent: notSent(error),
    });
    const thrown = async (request) => judged((await settle(request())).error);
    const shapes = {
      refused: await thrown(() => fetch(`${refused}/refused`)),
      reset: await thrown(() => fetch(at('/reset'))),
      close: await thrown(() => fetch(at('/close'))),
      // The headers arrive; reading the body fails.
      cut: await thrown(async () => (await fetch(at('/cut'))).text()),
      dns: await thrown(() => fetch(UNRESOLVABLE)),
    };
    // retryFetch, three attempts at most: how many it made, and how it ended.
    const attemptsOf = async (input, init) => {
      let retries = 0;
      const outcome = await settle(retryFetch(input, init, { backoff: TINY, maxAttempts: 3, onRetry: () => (retries += 1) }));
      const { error } = outcome;
      return { attempts: retries + 1, gaveUp: error instanceof RetryError ? error.reason : error?.name };
    };
    const post = { method: 'POST', body: 'data' };
    const resetGet = at('/reset', 1);
    const resetPost = at('/reset', 1);
    const resetGetResponse = await retryFetch(resetGet, undefined, { backoff: TINY });
    cases.networkFailures = {
      ...shapes,
      retryFetch: {
        refusedGet: await attemptsOf(`${refused}/refused`),
        // Resent only where the runtime's error proves it never left (notSent).
        refusedPost: await attemptsOf(`${refused}/refused`, post),
        dnsGet: await attemptsOf(UNRESOLVABLE),
        resetGet: { status: resetGetResponse.status, body: await resetGetResponse.json() },
        // A reset may come after the server acted on the request: a POST is not resent.
        resetPost: { ...(await attemptsOf(resetPost, post)), served: await servedAt(resetPost) },
      },
    };
  }

  return cases;
}

/** Runs `smoke` and never rejects: a failure becomes `{ failed }`, so every runtime reports something. */
export function report(lib, base, id, network) {
  return smoke(lib, base, id, network).then(
    (cases) => ({ cases }),
    (error) => ({ failed: `${describeError(error)}\n${error?.stack ?? ''}` }),
  );
}
