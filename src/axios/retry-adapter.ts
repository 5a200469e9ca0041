/**
 * One axios request as one call of the engine: the adapter that `attachRetry` puts in each
 * request's config. Every attempt calls the adapter the request would have used, with the
 * attempt's signal; axios transforms the request once before, and the response once after.
 */
import type { AxiosAdapter, AxiosResponse, InternalAxiosRequestConfig, getAdapter } from 'axios';
import { hintExceeds } from '../classify/error-shape.js';
import { notSent } from '../classify/not-sent.js';
import { isTransient } from '../classify/predicates.js';
import { configOfChecked } from '../core/options.js';
import { startCall } from '../core/retry.js';
import { isRetryError } from '../errors.js';
import type { AttemptContext, RetryEvent, RetryPredicate } from '../types.js';
import { isBag } from '../util/cause-chain.js';
import { peerMissing } from '../util/peer.js';
import { type AxiosRetryOptions, requestOptions } from './axios-options.js';
import { type RequestFacts, callSignal, requestFacts } from './request-facts.js';

/** What a request's config may name as its adapter: a function, a name, or a list of them. */
export type AdapterSetting = InternalAxiosRequestConfig['adapter'];

/** axios's own default: the first of these the platform has. */
// Stryker disable next-line StringLiteral: 'fetch' is reached only where there is neither XMLHttpRequest nor Node's http, never under test
const AXIOS_DEFAULT_ADAPTERS: AdapterSetting = ['xhr', 'http', 'fetch'];

/**
 * axios's own adapter lookup (a name such as 'http' to its function), once loaded. axios is the
 * optional peer dependency of tenacious/axios; it is loaded at the first request, not with the
 * entry, so that importing tenacious/axios never fails, and a request made where axios cannot
 * be loaded fails with an error naming it and its install command (`peerMissing`).
 */
let lookUp: typeof getAdapter | undefined;
let loading: Promise<unknown> | undefined;

/** Loads axios's adapter lookup; a failed load is tried again at the next request. */
function loadLookUp(): Promise<unknown> {
  loading ??= import('axios').then(
    (axios) => {
      lookUp = axios.getAdapter;
    },
    // Stryker disable next-line BlockStatement: tested by test/axios/peer.test.ts, which the mutation run leaves out (it reloads modules with vi.doMock, vitest.mutation.config.ts)
    (error: unknown) => {
      loading = undefined;
      // Stryker disable next-line StringLiteral: tested by test/axios/peer.test.ts, which the mutation run leaves out (it reloads modules with vi.doMock, vitest.mutation.config.ts)
      throw peerMissing('tenacious/axios', 'axios', error);
    },
  );
  return loading;
}

/** The retrying adapters made here, and the setting each one replaced. */
const replaced = new WeakMap<object, AdapterSetting>();

/**
 * The adapter setting a retrying adapter replaced, or `setting` itself: a config that went
 * through an attached instance once (an `error.config` sent again) is wrapped once, not twice.
 */
export function unwrapped(setting: AdapterSetting): AdapterSetting {
  // A name or a list is no key of the WeakMap: has() and get() answer as for an unknown one.
  return replaced.get(setting as object) ?? setting;
}

/** An adapter that sends each request through `setting`'s adapter as one call of the engine. */
export function retryingAdapter(setting: AdapterSetting, attached: AxiosRetryOptions): AxiosAdapter {
  const configured = setting ?? AXIOS_DEFAULT_ADAPTERS;
  const adapter: AxiosAdapter = (config) => {
    // Only the first request of the process waits for axios's module; the rest run as they are.
    if (lookUp === undefined) return loadLookUp().then(() => adapter(config));
    // The request's config as the caller knows it: its own adapter setting, not this one.
    const own = { ...config, adapter: configured };
    try {
      const send = lookUp(configured, own);
      const options = requestOptions(attached, config.tenacious);
      return options === false ? send(own) : sendRetried(send, own, options);
    } catch (error) {
      return Promise.reject(error);
    }
  };
  replaced.set(adapter, configured);
  return adapter;
}

/** The request as one call of the engine; settles as axios's adapter contract asks (see handedOver). */
function sendRetried(send: AxiosAdapter, config: InternalAxiosRequestConfig, options: AxiosRetryOptions): Promise<AxiosResponse> {
  const { maxRetryAfterMs = Infinity, retryable, idempotent, onRetry, ...rest } = options;
  const signals = callSignal(config);
  let settled: Promise<AxiosResponse>;
  try {
    const { signal } = signals;
    ({ settled } = startCall(
      // Each attempt is the request with the attempt's signal, which aborts it at its timeout,
      // at the deadline, and when the caller's signal or cancelToken aborts.
      (ctx: AttemptContext) => send({ ...config, signal: ctx.signal, cancelToken: undefined }),
      // Checked by attachRetry and at the request (RULES holds RETRY_RULES); the rest is the adapter's own.
      configOfChecked(
        {
          ...rest,
          ...policyOf(requestFacts(config), retryable, idempotent, maxRetryAfterMs),
          onRetry: (event: RetryEvent) => {
            discardBody(event.error);
            // Stryker disable next-line OptionalChaining: equivalent (the engine's callHook swallows the TypeError of calling undefined, after the body was discarded)
            onRetry?.(event);
          },
          ...(signal && { signal }),
        },
        'attachRetry',
      ),
    ));
  } catch (error) {
    signals.dispose();
    throw error;
  }
  return settled.then(
    (response) => {
      signals.dispose();
      response.config = config;
      return response;
    },
    (error: unknown) => {
      signals.dispose();
      throw handedOver(error, config);
    },
  );
}

/**
 * The retry and idempotency policies of a request. Retried: what `retryable` (default: the
 * classification of `isTransient`) calls transient, unless its response asks for a longer wait
 * than `maxRetryAfterMs`. Resent: a replayable request that is idempotent by the caller's rule,
 * else by its method or `Idempotency-Key`, or whose failure proves it never left (`notSent`).
 */
function policyOf(
  facts: RequestFacts,
  retryable: RetryPredicate | undefined,
  idempotent: AxiosRetryOptions['idempotent'],
  maxRetryAfterMs: number,
): Pick<Required<AxiosRetryOptions>, 'retryable' | 'idempotent'> {
  const transient = retryable ?? isTransient;
  const rule = idempotent ?? facts.idempotent;
  return {
    retryable: (error, ctx) => !hintExceeds(error, maxRetryAfterMs) && transient(error, ctx),
    idempotent: (error, ctx) => facts.replayable && ((typeof rule === 'function' ? rule(error, ctx) : rule) || notSent(error)),
  };
}

/** The error a response stream was left in, freed: the next attempt does not need its connection. */
function discardBody(error: unknown): void {
  // Object() makes any value readable: an error with no response reads as one with no data.
  const data: unknown = Object(Object(error).response).data;
  if (isBag(data) && typeof data.destroy === 'function') (data.destroy as () => void)();
}

/**
 * What the caller's promise rejects with: the last `AxiosError` itself when the call gave up on
 * one (out of attempts, time or budget: axios code that checks `isAxiosError`, `status` or
 * `response` goes on working; `onGiveUp` tells why and after how many attempts), else what the
 * engine rejected with. An AxiosError carries the request's config, not the attempt's.
 */
function handedOver(error: unknown, config: InternalAxiosRequestConfig): unknown {
  const last = isRetryError(error) && isAxiosError(error.cause) ? error.cause : error;
  if (isAxiosError(last)) {
    last.config = config;
    if (isBag(last.response)) last.response.config = config;
  }
  return last;
}

/** axios's own test (`axios.isAxiosError`), without loading axios for it. */
function isAxiosError(error: unknown): error is Record<string, unknown> {
  return isBag(error) && error.isAxiosError === true;
}
