// gRPC service configs read into options: name matching, the A6 policy fields, the cap of 5,
// hedging and retryThrottling (errors: service-config-errors.test.ts).
import { describe, expect, it } from 'vitest';
import { RetryError, computeDelay, retry } from '../../src/index.js';
import { fromGrpcServiceConfig, readGrpcServiceConfig } from '../../src/google/index.js';
import { failing } from '../helpers/attempts.js';
import { grpcError, track, useVirtualClock } from '../helpers/clock.js';

const retryPolicy = {
  maxAttempts: 4,
  initialBackoff: '0.1s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE', 8],
};

const document = {
  loadBalancingConfig: [{ round_robin: {} }],
  methodConfig: [
    { name: [{ service: 'echo.Echo', method: 'Say' }], retryPolicy, timeout: '30s' },
    { name: [{ service: 'echo.Echo' }], retryPolicy: { ...retryPolicy, maxAttempts: 2 } },
    { name: [{}], timeout: '5s', waitForReady: true },
  ],
  retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
};

describe('fromGrpcServiceConfig: which entry applies', () => {
  it('takes the exact {service, method} first, then the service-wide entry, then the default', () => {
    const say = fromGrpcServiceConfig(document, { service: 'echo.Echo', method: 'Say' });
    expect(say).toMatchObject({ maxAttempts: 4, deadlineMs: 30_000 });
    expect(fromGrpcServiceConfig(document, { service: 'echo.Echo', method: 'Shout' })).toMatchObject({
      maxAttempts: 2,
      deadlineMs: Infinity,
    });
    expect(fromGrpcServiceConfig(document, { service: 'echo.Echo' })).toMatchObject({ maxAttempts: 2 });
    const other = fromGrpcServiceConfig(document, { service: 'other.Other', method: 'Get' });
    expect(other).toMatchObject({ maxAttempts: 1, deadlineMs: 5000 });
    expect(other.retryable(grpcError('UNAVAILABLE'))).toBe(false);
  });

  it('reads JSON text as well as the parsed object, snake_case fields included', () => {
    const text = JSON.stringify({ method_config: [{ name: [{ service: 's.S' }], retry_policy: { ...retryPolicy, max_attempts: 3 } }] });
    expect(fromGrpcServiceConfig(text, { service: 's.S', method: 'M' }).maxAttempts).toBe(3);
  });

  it('refuses a method no entry covers, naming it and the closest name', () => {
    const noDefault = { methodConfig: document.methodConfig.slice(0, 2) };
    expect(() => fromGrpcServiceConfig(noDefault, { service: 'echo.Echoo', method: 'Say' })).toThrow(
      'fromGrpcServiceConfig: no entry, service-wide entry or default for "echo.Echoo/Say" in methodConfig (did you mean "echo.Echo/Say"?)',
    );
    expect(() => fromGrpcServiceConfig({}, { service: 'a.B' })).toThrow(/no entry.*"a\.B" in methodConfig \(there are none\)/);
  });
});

describe('fromGrpcServiceConfig: the retry policy (gRFC A6)', () => {
  it('maps the backoff to full jitter between 0 and the capped exponential wait', () => {
    const { backoff } = fromGrpcServiceConfig(document, { service: 'echo.Echo', method: 'Say' });
    expect(backoff).toEqual({ initialDelayMs: 100, multiplier: 2, maxDelayMs: 1000, jitter: 'full' });
    const top = [0, 1, 2, 3, 4].map((n) => computeDelay(n, backoff!, () => 1));
    expect(top).toEqual([100, 200, 400, 800, 1000]);
    expect(computeDelay(2, backoff!, () => 0)).toBe(0);
  });

  it('retries exactly the listed codes, by name or number', () => {
    const { retryable } = fromGrpcServiceConfig(document, { service: 'echo.Echo', method: 'Say' });
    expect(retryable(grpcError('UNAVAILABLE'))).toBe(true);
    expect(retryable(grpcError('RESOURCE_EXHAUSTED'))).toBe(true);
    expect(retryable(grpcError('DEADLINE_EXCEEDED'))).toBe(false);
    expect(retryable(new Error('no code'))).toBe(false);
  });

  it('caps maxAttempts at 5 as gRPC clients do, unless maxAttemptsLimit lifts it', () => {
    const big = { methodConfig: [{ name: [{ service: 's.S' }], retryPolicy: { ...retryPolicy, maxAttempts: 9 } }] };
    expect(fromGrpcServiceConfig(big, { service: 's.S' }).maxAttempts).toBe(5);
    expect(fromGrpcServiceConfig(big, { service: 's.S', maxAttemptsLimit: Infinity }).maxAttempts).toBe(9);
    expect(fromGrpcServiceConfig(big, { service: 's.S', maxAttemptsLimit: 3 }).maxAttempts).toBe(3);
    expect(() => fromGrpcServiceConfig(big, { service: 's.S', maxAttemptsLimit: 0 })).toThrow(
      'fromGrpcServiceConfig: options.maxAttemptsLimit must be a safe integer >= 1 or Infinity, got 0',
    );
  });

  // Regression: a count above 2^53 was refused as "must be a whole number >= 2".
  it('reads any count above 5 as 5, however large: past 2^53, and past what a double holds (Infinity)', () => {
    const policyText = (count: string, kind = 'retryPolicy') =>
      `{"methodConfig":[{"name":[{"service":"s.S"}],"${kind}":{"maxAttempts":${count},` +
      (kind === 'retryPolicy'
        ? `"initialBackoff":"0.1s","maxBackoff":"1s","backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}]}`
        : '"hedgingDelay":"0.1s"}}]}');
    for (const count of ['6', '4294967296', '9007199254740991', '9007199254740993', '1e300', '1e400', '9'.repeat(400)]) {
      expect(fromGrpcServiceConfig(policyText(count), { service: 's.S' }).maxAttempts).toBe(5);
      expect(fromGrpcServiceConfig(policyText(count), { service: 's.S', maxAttemptsLimit: 7 }).maxAttempts).toBe(
        Math.min(Number(count), 7),
      );
      const hedged = fromGrpcServiceConfig(policyText(count, 'hedgingPolicy'), { service: 's.S' });
      expect(hedged.maxAttempts).toBe(1);
    }
    const big = { methodConfig: [{ name: [{ service: 's.S' }], retryPolicy: { ...retryPolicy, maxAttempts: 2 ** 60 } }] };
    expect(fromGrpcServiceConfig(big, { service: 's.S' }).maxAttempts).toBe(5);
  });

  it('treats a first backoff above the cap as the cap, as A6 min() does', () => {
    const config = { methodConfig: [{ name: [{ service: 's.S' }], retryPolicy: { ...retryPolicy, initialBackoff: '3s' } }] };
    expect(fromGrpcServiceConfig(config, { service: 's.S' }).backoff).toMatchObject({ initialDelayMs: 1000, maxDelayMs: 1000 });
  });

  // Regression: the options of a method without `timeout` have no deadline; countsAsAttempt then made the call endless.
  it('has no deadline without a timeout: countsAsAttempt laid over it is refused until a deadline is given', async () => {
    const options = fromGrpcServiceConfig(document, { service: 'echo.Echo', method: 'Other' });
    expect(options.deadlineMs).toBe(Infinity);
    const countsAsAttempt = () => false;
    await expect(retry(() => 1, { ...options, countsAsAttempt })).rejects.toThrow(
      new RangeError('retry: options.countsAsAttempt needs a finite options.deadlineMs, got Infinity: the loop would never give up'),
    );
    expect(() => retry(() => 1, { ...options, countsAsAttempt, deadlineMs: 30_000 })).not.toThrow();
  });

  it('returns frozen options that retry() takes as they are', () => {
    const options = fromGrpcServiceConfig(document, { service: 'echo.Echo', method: 'Say' });
    expect(Object.isFrozen(options)).toBe(true);
    expect(Object.isFrozen(options.backoff)).toBe(true);
  });
});

describe('fromGrpcServiceConfig: a retry in virtual time', () => {
  const clock = useVirtualClock();

  it('makes maxAttempts attempts with waits below the policy bound, then gives up', async () => {
    const options = fromGrpcServiceConfig(document, { service: 'echo.Echo', method: 'Say' });
    const starts: number[] = [];
    const call = track(
      retry(
        () => {
          starts.push(Date.now());
          throw grpcError('UNAVAILABLE');
        },
        { ...options, rng: () => 0.5 },
      ),
    );
    await clock.tickAsync(10_000);
    expect(call.state).toBe('rejected');
    expect(call.error).toBeInstanceOf(RetryError);
    expect(call.error).toMatchObject({ reason: 'attempts', attempts: 4 });
    expect(starts).toEqual([0, 50, 150, 350]);
  });

  it('stops at once on a code the policy does not list, with that error', async () => {
    const options = fromGrpcServiceConfig(document, { service: 'echo.Echo', method: 'Say' });
    const denied = grpcError('PERMISSION_DENIED');
    const { fn, calls } = failing(denied);
    const call = track(retry(fn, options));
    await clock.tickAsync(0);
    expect(call.error).toBe(denied);
    expect(calls).toHaveLength(1);
  });
});

describe('fromGrpcServiceConfig: a hedging policy under retry(), in virtual time', () => {
  const clock = useVirtualClock();
  const hedged = fromGrpcServiceConfig(
    {
      methodConfig: [
        { name: [{ service: 's.S' }], hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.1s', nonFatalStatusCodes: ['UNAVAILABLE'] } },
      ],
    },
    { service: 's.S' },
  );

  it('sends a copy every hedgingDelay while none has answered; the first answer wins', async () => {
    const sent: Array<[copy: number, at: number]> = [];
    const call = track(
      retry(
        ({ copy, signal }) =>
          new Promise<string>((resolve, reject) => {
            sent.push([copy, Date.now()]);
            if (copy === 2) setTimeout(() => resolve('second'), 30);
            signal.addEventListener('abort', () => reject(signal.reason), { once: true });
          }),
        hedged,
      ),
    );
    await clock.tickAsync(1000);
    expect(call.value).toBe('second');
    expect(sent).toEqual([
      [1, 0],
      [2, 100],
    ]);
  });

  it('a non-fatal code sends the next copy at once; after maxAttempts copies the call is over', async () => {
    const sent: number[] = [];
    const call = track(
      retry(() => {
        sent.push(Date.now());
        throw grpcError('UNAVAILABLE');
      }, hedged),
    );
    await clock.tickAsync(1000);
    expect(sent).toEqual([0, 0, 0]);
    expect(call.error).toBeInstanceOf(RetryError);
    expect(call.error).toMatchObject({ reason: 'attempts', attempts: 1 });
  });

  it('caps the copies at 5, as grpc-js caps a hedging policy', async () => {
    const seven = fromGrpcServiceConfig(
      { methodConfig: [{ name: [{ service: 's.S' }], hedgingPolicy: { maxAttempts: 7, nonFatalStatusCodes: [14] } }] },
      { service: 's.S' },
    );
    const { fn, calls: sent } = failing(grpcError('UNAVAILABLE'));
    const call = track(retry(fn, seven));
    await clock.tickAsync(1000);
    expect(call.state).toBe('rejected');
    expect(sent).toHaveLength(5);
  });

  it('a fatal code ends the call at once with that error', async () => {
    const fatal = grpcError('INTERNAL');
    const { fn, calls: sent } = failing(fatal);
    const call = track(retry(fn, hedged));
    await clock.tickAsync(1000);
    expect(call.error).toBe(fatal);
    expect(sent).toHaveLength(1);
  });
});

describe('fromGrpcServiceConfig: hedging and throttling', () => {
  it('turns a hedging policy into one attempt of hedged copies', () => {
    const config = {
      methodConfig: [
        { name: [{ service: 's.S' }], hedgingPolicy: { maxAttempts: 7, hedgingDelay: '0.05s', nonFatalStatusCodes: ['UNAVAILABLE'] } },
      ],
    };
    const options = fromGrpcServiceConfig(config, { service: 's.S' });
    expect(options.maxAttempts).toBe(1);
    expect(typeof options.hedge?.run).toBe('function');
    expect(options.retryable(grpcError('UNAVAILABLE'))).toBe(true);
    expect(options.retryable(grpcError('INTERNAL'))).toBe(false);
    const fatalOnly = fromGrpcServiceConfig(
      { methodConfig: [{ name: [{ service: 's.S' }], hedgingPolicy: { maxAttempts: 2 } }] },
      { service: 's.S' },
    );
    expect(fatalOnly.retryable(grpcError('UNAVAILABLE'))).toBe(false);
  });

  it('makes one retry budget per read, shared by every method read from it', () => {
    const config = readGrpcServiceConfig(document);
    const say = config.forMethod({ service: 'echo.Echo', method: 'Say' });
    const shout = config.forMethod({ service: 'echo.Echo', method: 'Shout' });
    expect(config.budget).toMatchObject({ maxTokens: 10, tokenRatio: 0.1, tokens: 10 });
    expect(say.budget).toBe(config.budget);
    expect(shout.budget).toBe(config.budget);
    expect(readGrpcServiceConfig(document).budget).not.toBe(config.budget);
    expect(readGrpcServiceConfig({ methodConfig: [] }).budget).toBeUndefined();
  });

  it("has A6's token bucket: failure -1, success +tokenRatio, retries only above half", () => {
    const { budget } = readGrpcServiceConfig({ retryThrottling: { maxTokens: 4, tokenRatio: 0.5 } });
    budget!.record(false);
    expect(budget!.canRetry()).toBe(true); // 3 > 2
    budget!.record(false);
    expect(budget!.canRetry()).toBe(false); // 2 is not above 2
    budget!.record(true);
    expect(budget!.tokens).toBe(2.5);
    expect(budget!.canRetry()).toBe(true);
  });
});
