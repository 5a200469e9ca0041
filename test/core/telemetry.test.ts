// The `telemetry` option: the engine's one seam for traces and metrics (core/telemetry.ts). A
// call with it tells the telemetry every event and runs every send inside its `attempt`; a call
// without it is untouched.
import { describe, expect, it } from 'vitest';
import { observed } from '../../src/core/telemetry.js';
import { DEFAULT_CONFIG, validateOptions } from '../../src/core/options.js';
import {
  type AttemptContext,
  type CallEvent,
  type CallTelemetry,
  type Telemetry,
  type TelemetryCall,
  hedge,
  hedging,
  retry,
  withRetry,
} from '../../src/index.js';
import { track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();
const backoff = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 10_000, jitter: 'none' as const };

/** A telemetry that writes down what it is told, and which sends ran inside its `attempt`. */
function recorder() {
  const calls: { call: TelemetryCall; events: CallEvent[]; sends: string[] }[] = [];
  let inside: string | undefined;
  const telemetry: Telemetry = (call) => {
    const record = { call: { ...call }, events: [] as CallEvent[], sends: [] as string[] };
    calls.push(record);
    const tracker: CallTelemetry = {
      event: (e) => record.events.push(e),
      attempt: (ctx, run) => {
        const outer = inside;
        inside = `${calls.length}:${ctx.attempt}.${ctx.copy}`;
        record.sends.push(inside);
        try {
          return run();
        } finally {
          inside = outer;
        }
      },
    };
    return tracker;
  };
  return { telemetry, calls, current: () => inside };
}

describe('the telemetry option', () => {
  it('starts one call telemetry per call with its name and service, tells it every event, and runs each attempt inside it', async () => {
    const { telemetry, calls, current } = recorder();
    const seen: (string | undefined)[] = [];
    let n = 0;
    const fn = () => {
      seen.push(current());
      if (++n < 3) throw new Error('reset');
      return 'ok';
    };
    const call = track(retry(fn, { backoff, telemetry, name: 'load', service: 'storage' }));
    await clock.tickAsync(300);
    expect(call.value).toBe('ok');
    expect(seen).toEqual(['1:1.1', '1:2.1', '1:3.1']);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.call).toMatchObject({ name: 'load', service: 'storage' });
    expect(calls[0]?.events.map((e) => e.type)).toEqual(['attempt', 'retry', 'attempt', 'retry', 'attempt', 'success']);
  });

  it("still tells the caller's own onEvent everything, and a throwing one keeps nothing from the telemetry", async () => {
    const { telemetry, calls } = recorder();
    const mine: string[] = [];
    const onEvent = (e: CallEvent) => {
      mine.push(e.type);
      throw new Error('a buggy listener');
    };
    await expect(retry(() => 7, { telemetry, onEvent })).resolves.toBe(7);
    expect(mine).toEqual(['attempt', 'success']);
    expect(calls[0]?.events.map((e) => e.type)).toEqual(['attempt', 'success']);
  });

  it('keeps a synchronous throw and a rejection of fn what they are: failed attempts, judged as without telemetry', async () => {
    const { telemetry, calls } = recorder();
    const permanent = new TypeError('a bug');
    await expect(
      retry(
        () => {
          throw permanent;
        },
        { telemetry },
      ),
    ).rejects.toBe(permanent);
    const down = Object.assign(new Error('down'), { status: 503 });
    const call = track(retry(() => Promise.reject(down), { backoff, maxAttempts: 2, telemetry }));
    await clock.tickAsync(100);
    expect(call.state).toBe('rejected');
    expect(calls[0]?.events.at(-1)).toMatchObject({ type: 'give-up', reason: 'not-retryable', error: permanent });
    expect(calls[1]?.events.at(-1)).toMatchObject({ type: 'give-up', reason: 'attempts', attempts: 2 });
  });

  it("runs each hedged copy inside the telemetry's attempt, as a send of its own", async () => {
    const { telemetry, calls, current } = recorder();
    const seen: (string | undefined)[] = [];
    const fn = (ctx: AttemptContext) => {
      seen.push(current());
      return new Promise((resolve) => setTimeout(resolve, ctx.copy === 1 ? 500 : 10, `copy ${ctx.copy}`));
    };
    const call = track(hedge(fn, { delayMs: 50, telemetry, name: 'get' }));
    await clock.tickAsync(600);
    expect(call.value).toBe('copy 2');
    expect(seen).toEqual(['1:1.1', '1:1.2']);
    expect(calls[0]?.call.name).toBe('get');
    expect(calls[0]?.events.map((e) => e.type)).toEqual(['attempt', 'hedge', 'success']);

    const viaRetry = recorder();
    const both = track(retry(fn, { hedge: hedging({ delayMs: 50 }), telemetry: viaRetry.telemetry }));
    await clock.tickAsync(600);
    expect(both.value).toBe('copy 2');
    expect(viaRetry.calls[0]?.sends).toEqual(['1:1.1', '1:1.2']);
  });

  it("gives each call of a withRetry function its own call telemetry, with the caller's this and arguments", async () => {
    const { telemetry, calls, current } = recorder();
    const wrapped = withRetry(
      function (this: { base: number }, x: number) {
        return `${current()} ${this.base + x}`;
      },
      { telemetry, name: 'add' },
    );
    const self = { base: 40, wrapped };
    await expect(self.wrapped(2)).resolves.toBe('1:1.1 42');
    await expect(self.wrapped(3)).resolves.toBe('2:1.1 43');
    expect(calls.map((c) => c.call.name)).toEqual(['add', 'add']);
  });

  it('hands a call without the option its configuration unchanged: nothing made per call', () => {
    expect(observed(DEFAULT_CONFIG)).toBe(DEFAULT_CONFIG);
    const config = validateOptions({ maxAttempts: 3, name: 'unused' }, 'retry');
    expect(observed(config)).toBe(config);
    expect(config.telemetry).toBeUndefined();
  });

  it('runs a call its telemetry declines (undefined) as one without: its own config, its hooks and hedging as given', async () => {
    const asked: TelemetryCall[] = [];
    const declining: Telemetry = ({ name, service }) => {
      asked.push({ name, service });
      return undefined;
    };
    const config = validateOptions({ telemetry: declining, name: 'quiet' }, 'retry');
    expect(observed(config)).toBe(config);
    asked.length = 0;
    const events: string[] = [];
    let sends = 0;
    const call = track(
      retry(
        () => {
          sends++;
          return new Promise((resolve) => setTimeout(() => resolve('ok'), 50));
        },
        { telemetry: declining, name: 'quiet', onEvent: (e) => events.push(e.type), hedge: hedging({ delayMs: 10, maxCopies: 2 }) },
      ),
    );
    await clock.tickAsync(60);
    expect(call.value).toBe('ok');
    expect(asked).toEqual([{ name: 'quiet', service: undefined }]);
    expect(sends).toBe(2);
    expect(events).toEqual(['attempt', 'hedge', 'success']);
  });

  it('refuses a telemetry that is not a function, and a name or service that is not a string, naming them', async () => {
    await expect(retry(() => 1, { telemetry: {} as unknown as Telemetry })).rejects.toThrow(
      'retry: options.telemetry must be a function, got {}',
    );
    await expect(retry(() => 1, { name: 42 as unknown as string })).rejects.toThrow('retry: options.name must be a string, got 42');
    expect(() => withRetry(() => 1, { service: null as unknown as string })).toThrow(
      'withRetry: options.service must be a string, got null',
    );
  });
});
