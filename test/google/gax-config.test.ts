// GAPIC client configs, the real ones @google-cloud/iam ships, read into options and run under
// retry() in virtual time: the attempts and waits are the document's.
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GrpcStatus, RetryError, retry } from '../../src/index.js';
import { fromGaxClientConfig } from '../../src/google/index.js';
import { failing } from '../helpers/attempts.js';
import { grpcError, track, useVirtualClock } from '../helpers/clock.js';

const iamBuild = join(dirname(createRequire(import.meta.url).resolve('@google-cloud/iam/package.json')), 'build', 'src');
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));
const POLICIES = readJson(join(iamBuild, 'v2', 'policies_client_config.json'));
const BINDINGS = readJson(join(iamBuild, 'v3', 'policy_bindings_client_config.json'));

interface Params {
  initial_retry_delay_millis: number;
  retry_delay_multiplier: number;
  max_retry_delay_millis: number;
  initial_rpc_timeout_millis: number;
  rpc_timeout_multiplier: number;
  max_rpc_timeout_millis: number;
  total_timeout_millis: number;
}
interface Interface {
  retry_codes: Record<string, string[]>;
  retry_params: Record<string, Params>;
  methods: Record<string, { timeout_millis: number; retry_codes_name: string; retry_params_name: string }>;
}

describe('fromGaxClientConfig on google.iam.v2.Policies (@google-cloud/iam)', () => {
  it('GetPolicy: UNAVAILABLE only, 1 s × 1.3 up to 10 s with full jitter, 600 s in all, 60 s per attempt', () => {
    const options = fromGaxClientConfig(POLICIES, 'google.iam.v2.Policies', 'GetPolicy');
    expect(options).toMatchObject({
      maxAttempts: Infinity,
      deadlineMs: 600_000,
      backoff: { initialDelayMs: 1000, multiplier: 1.3, maxDelayMs: 10_000, jitter: 'full' },
      attemptTimeoutMs: { initialMs: 60_000, multiplier: 1, maxMs: 60_000 },
    });
    expect(options.retryable(grpcError('UNAVAILABLE'))).toBe(true);
    expect(options.retryable(grpcError('DEADLINE_EXCEEDED'))).toBe(false);
    expect(Object.isFrozen(options)).toBe(true);
  });

  it('reads every interface and method of every client config the package ships, as the document says', () => {
    const files = readdirSync(iamBuild, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('_client_config.json'));
    expect(files.length).toBeGreaterThanOrEqual(5);
    let methods = 0;
    for (const file of files) {
      const config = readJson(join(iamBuild, file)) as { interfaces: Record<string, Interface> };
      for (const [name, service] of Object.entries(config.interfaces)) {
        for (const [methodName, method] of Object.entries(service.methods)) {
          methods++;
          const options = fromGaxClientConfig(config, name, methodName);
          const codes = service.retry_codes[method.retry_codes_name] ?? [];
          const params = service.retry_params[method.retry_params_name] as Params;
          const expected =
            codes.length === 0
              ? { maxAttempts: 1, deadlineMs: method.timeout_millis, attemptTimeoutMs: method.timeout_millis }
              : {
                  maxAttempts: Infinity,
                  deadlineMs: params.total_timeout_millis,
                  backoff: {
                    initialDelayMs: params.initial_retry_delay_millis,
                    multiplier: params.retry_delay_multiplier,
                    maxDelayMs: params.max_retry_delay_millis,
                    jitter: 'full',
                  },
                  attemptTimeoutMs: {
                    initialMs: params.initial_rpc_timeout_millis,
                    multiplier: params.rpc_timeout_multiplier,
                    maxMs: params.max_rpc_timeout_millis,
                  },
                };
          expect(options, `${file} ${name}.${methodName}`).toMatchObject(expected);
          for (const code of Object.keys(GrpcStatus) as Array<keyof typeof GrpcStatus>) {
            if (code === 'OK') continue;
            expect(options.retryable(grpcError(code)), `${name}.${methodName} ${code}`).toBe(codes.includes(code));
          }
        }
      }
    }
    expect(methods).toBeGreaterThan(20);
  });
});

describe('fromGaxClientConfig under retry(), in virtual time', () => {
  const clock = useVirtualClock();

  /** The document's wait before retry n at the top of the jitter: min(1000 · 1.3^n, 10 000) ms. */
  const bound = (n: number): number => Math.min(1000 * 1.3 ** n, 10_000);

  it.each([0.25, 1])('GetPolicy failing with UNAVAILABLE: waits rng · min(1 s · 1.3^n, 10 s) until 600 s (rng %s)', async (r) => {
    const options = fromGaxClientConfig(POLICIES, 'google.iam.v2.Policies', 'GetPolicy');
    const starts: number[] = [];
    const call = track(
      retry(
        () => {
          starts.push(Date.now());
          throw grpcError('UNAVAILABLE');
        },
        { ...options, rng: () => r },
      ),
    );
    await clock.tickAsync(600_000);
    expect(call.state).toBe('rejected');
    expect(call.error).toBeInstanceOf(RetryError);
    expect((call.error as RetryError).reason).toBe('deadline');
    // What the document says, computed here from its numbers: each start one jittered wait after the last.
    const expected = [0];
    for (let n = 0; (expected.at(-1) as number) + r * bound(n) <= 600_000; n++) expected.push((expected.at(-1) as number) + r * bound(n));
    expect(starts.length).toBe(expected.length);
    for (const [i, start] of starts.entries()) expect(start).toBeCloseTo(expected[i] as number, -1);
    for (let i = 1; i < starts.length; i++) {
      const wait = (starts[i] as number) - (starts[i - 1] as number);
      expect(wait).toBeGreaterThanOrEqual(0);
      expect(wait).toBeLessThanOrEqual(bound(i - 1) + 1);
    }
  });

  it('GetPolicy attempts that hang are cut at the 60 s RPC timeout, and retried until the 600 s total', async () => {
    const options = fromGaxClientConfig(POLICIES, 'google.iam.v2.Policies', 'GetPolicy');
    const starts: number[] = [];
    const call = track(
      retry(
        ({ signal }) =>
          new Promise((_, reject) => {
            starts.push(Date.now());
            signal.addEventListener('abort', () => reject(signal.reason), { once: true });
          }),
        { ...options, rng: () => 0, retryable: () => true },
      ),
    );
    await clock.tickAsync(600_000);
    expect(call.state).toBe('rejected');
    // Ten attempts of 60 s each (a zero wait still passes through a timer: a millisecond each).
    expect(starts).toHaveLength(10);
    for (const [i, start] of starts.entries()) expect(start - i * 60_000).toBeGreaterThanOrEqual(0);
    for (const [i, start] of starts.entries()) expect(start - i * 60_000).toBeLessThanOrEqual(i);
  });

  it('GetPolicy stops at once, with the error itself, on a code it does not list', async () => {
    const options = fromGaxClientConfig(POLICIES, 'google.iam.v2.Policies', 'GetPolicy');
    const denied = grpcError('DEADLINE_EXCEEDED');
    const { fn, calls } = failing(denied);
    const call = track(retry(fn, options));
    await clock.tickAsync(0);
    expect(call.error).toBe(denied);
    expect(calls).toHaveLength(1);
  });

  it('an empty code list (v3 CreatePolicyBinding, "non_idempotent") sends once and passes the error on', async () => {
    const options = fromGaxClientConfig(BINDINGS, 'google.iam.v3.PolicyBindings', 'CreatePolicyBinding');
    expect(options).toMatchObject({ maxAttempts: 1, deadlineMs: 30_000, attemptTimeoutMs: 30_000 });
    expect(options.backoff).toBeUndefined();
    const unavailable = grpcError('UNAVAILABLE');
    const { fn, calls } = failing(unavailable);
    const call = track(retry(fn, options));
    await clock.tickAsync(0);
    expect(call.error).toBe(unavailable);
    expect(calls).toHaveLength(1);
  });
});

describe('fromGaxClientConfig: names and errors', () => {
  const read =
    (config: unknown, service = 'google.iam.v2.Policies', method = 'GetPolicy') =>
    () =>
      fromGaxClientConfig(config, service, method);
  const withParams = (change: Record<string, unknown>) => {
    const copy = structuredClone(POLICIES) as { interfaces: Record<string, Interface> };
    const service = copy.interfaces['google.iam.v2.Policies'] as Interface;
    Object.assign(service.retry_params.ce5b960a6ed052e690863808e4f0deff3dc7d49f as Params, change);
    return copy;
  };

  it('answers an unknown interface or method with the closest name', () => {
    expect(read(POLICIES, 'google.iam.v2.Polices')).toThrow(
      'fromGaxClientConfig: no interface "google.iam.v2.Polices" in interfaces (did you mean "google.iam.v2.Policies"?)',
    );
    expect(read(POLICIES, 'google.iam.v2.Policies', 'getPolicy')).toThrow(
      'fromGaxClientConfig: no method "getPolicy" in interfaces["google.iam.v2.Policies"].methods (did you mean "GetPolicy"?)',
    );
    expect(read(POLICIES, 'google.iam.v2.Policies', 'Frobnicate')).toThrow(/no method "Frobnicate" .*\(known: ListPolicies, GetPolicy,/);
  });

  it('takes timeout_millis as the first RPC timeout when the params give none, as google-gax does', () => {
    const config = withParams({ initial_rpc_timeout_millis: undefined, max_rpc_timeout_millis: 90_000 });
    expect(fromGaxClientConfig(config, 'google.iam.v2.Policies', 'GetPolicy').attemptTimeoutMs).toEqual({
      initialMs: 60_000,
      multiplier: 1,
      maxMs: 90_000,
    });
  });

  it('sends once a method that names no retry codes', () => {
    const copy = structuredClone(POLICIES) as { interfaces: Record<string, Interface> };
    const method = (copy.interfaces['google.iam.v2.Policies'] as Interface).methods.GetPolicy as Record<string, unknown>;
    delete method.retry_codes_name;
    expect(fromGaxClientConfig(copy, 'google.iam.v2.Policies', 'GetPolicy')).toMatchObject({ maxAttempts: 1, deadlineMs: 60_000 });
  });

  it('names the path of a bad value in the document', () => {
    expect(read(withParams({ max_rpc_timeout_millis: 1000 }))).toThrow(
      /\.max_rpc_timeout_millis must be a number of milliseconds >= the first RPC timeout \(60000\), got 1000/,
    );
    const noParams = structuredClone(POLICIES) as { interfaces: Record<string, Interface> };
    delete ((noParams.interfaces['google.iam.v2.Policies'] as Interface).methods.GetPolicy as Record<string, unknown>).retry_params_name;
    expect(read(noParams)).toThrow(
      'fromGaxClientConfig: interfaces["google.iam.v2.Policies"].methods["GetPolicy"].retry_params_name must be a string (a method with retry codes needs retry params), got undefined',
    );
    expect(read(withParams({ retry_delay_multiplier: 0.5 }))).toThrow(
      'fromGaxClientConfig: interfaces["google.iam.v2.Policies"].retry_params["ce5b960a6ed052e690863808e4f0deff3dc7d49f"].retry_delay_multiplier must be a number >= 1, got 0.5',
    );
    expect(read(withParams({ total_timeout_millis: '600s' }))).toThrow(
      /\.total_timeout_millis must be a number of milliseconds > 0 .*, got "600s"/,
    );
    expect(read(withParams({ max_retry_delay_millis: 10 }))).toThrow(
      /\.max_retry_delay_millis must be a number of milliseconds >= initial_retry_delay_millis \(1000\), got 10/,
    );
    expect(read(withParams({ initial_retry_delay_milis: 1 }))).toThrow(
      /unknown field "initial_retry_delay_milis" in .* \(did you mean "initial_retry_delay_millis"\?\)/,
    );
    const badCodes = structuredClone(POLICIES) as { interfaces: Record<string, Interface> };
    (badCodes.interfaces['google.iam.v2.Policies'] as Interface).retry_codes.unavailable = ['UNAVALABLE'];
    expect(read(badCodes)).toThrow(
      'fromGaxClientConfig: interfaces["google.iam.v2.Policies"].retry_codes["unavailable"][0] must be a gRPC status code name such as "UNAVAILABLE", got "UNAVALABLE" (did you mean "UNAVAILABLE"?)',
    );
    const badName = structuredClone(POLICIES) as { interfaces: Record<string, Interface> };
    (badName.interfaces['google.iam.v2.Policies'] as Interface).methods.GetPolicy!.retry_codes_name = 'unavailble';
    expect(read(badName)).toThrow(/no retry code list \(.*retry_codes_name\) "unavailble" .*\(did you mean "unavailable"\?\)/);
    expect(read('nope')).toThrow(/^fromGaxClientConfig: the client config is not JSON/);
    expect(read({ interface: {} })).toThrow(
      'fromGaxClientConfig: unknown field "interface" at the top of the document (did you mean "interfaces"?)',
    );
  });
});
