// A further run of a succeeded call (docs/architecture.md, "Runs of a call"): what retryFetch's
// download resume does when a body breaks after the response was handed over. `reopen(fn,
// broken, signal, progressed)` judges `broken` like a failed attempt of the call (or sends at
// once when there is none), under a new signal, with the call's attempt numbers; with
// `progressed` the limits count afresh from the reopening.
import { describe, expect, it } from 'vitest';
import { type AttemptContext, type CallEvent, RetryError } from '../../src/index.js';
import { validateOptions } from '../../src/core/options.js';
import { startCall } from '../../src/core/retry.js';
import type { RetryOptions } from '../../src/types.js';
import { constant } from '../helpers/attempts.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();

/** A call of `async () => 'first'` that has succeeded, with the events it emitted. */
async function succeededCall(options: RetryOptions = {}) {
  const events: CallEvent[] = [];
  clock.tick(1000); // the call starts at 1000: its elapsed times are not the clock's readings
  const config = validateOptions({ backoff: constant(100), ...options, onEvent: (e) => void events.push(e) }, 'test');
  const call = startCall<string>(async () => 'first', config);
  expect(await call.settled).toBe('first');
  return { call: call.call, events };
}

/** A new fn for a further run that answers 'again', and the attempt numbers it was called with. */
function recording() {
  const seen: number[] = [];
  const fn = (ctx: AttemptContext) => {
    seen.push(ctx.attempt);
    return Promise.resolve('again');
  };
  return { seen, fn };
}

describe('reopen: a further run of a succeeded call', () => {
  it('with nothing broken, calls the new fn at once, as the next attempt of the call', async () => {
    const { call } = await succeededCall();
    const { seen, fn } = recording();
    const p = track(call.reopen(fn, undefined, undefined, false));
    expect(seen).toEqual([2]);
    await clock.tickAsync(0);
    expect(p).toMatchObject({ state: 'resolved', value: 'again' });
  });

  it('with a broken answer, judges it like a failed attempt: backs off, then calls the new fn', async () => {
    const { call, events } = await succeededCall();
    clock.tick(500);
    const broken = httpError(503);
    const { seen, fn } = recording();
    const p = track(call.reopen(fn, broken, undefined, false));
    expect(seen).toEqual([]);
    await clock.tickAsync(99);
    expect(seen).toEqual([]);
    await clock.tickAsync(1);
    expect(seen).toEqual([2]);
    expect(p).toMatchObject({ state: 'resolved', value: 'again' });
    expect(events.filter((e) => e.type === 'resume' || e.type === 'retry')).toEqual([
      { type: 'resume', attempt: 1, error: broken, elapsedMs: 500 },
      { type: 'retry', attempt: 1, error: broken, delayMs: 100, source: 'backoff', elapsedMs: 500 },
    ]);
  });

  it('under a signal aborted already: rejects with its reason and calls nothing', async () => {
    const { call } = await succeededCall();
    let calls = 0;
    const reason = new Error('gone');
    const p = track(
      call.reopen(
        () => {
          calls++;
          return Promise.resolve('again');
        },
        undefined,
        AbortSignal.abort(reason),
        false,
      ),
    );
    await clock.tickAsync(1000);
    expect(p.error).toBe(reason);
    expect(calls).toBe(0);
  });

  it('when the throttle throws on admitting the new attempt: rejects with that error, reason "not-retryable"', async () => {
    const broken = new Error('throttle down');
    let admitted = 0;
    const throttle = {
      admit: () => {
        if (++admitted > 1) throw broken;
        return true;
      },
      record: () => {},
      error: () => new Error('never'),
    };
    const { call, events } = await succeededCall({ throttle });
    const p = track(call.reopen(() => Promise.resolve('again'), undefined, undefined, false));
    await clock.tickAsync(0);
    expect(p.error).toBe(broken);
    expect(events.at(-1)).toMatchObject({ type: 'give-up', reason: 'not-retryable', error: broken });
  });

  it('progressed: maxAttempts counts afresh from the reopening; without progress the call is out of attempts', async () => {
    for (const progressed of [true, false]) {
      let first = true;
      const call = startCall<string>(
        async () => {
          if (first) {
            first = false;
            throw httpError(503);
          }
          return 'second';
        },
        validateOptions({ maxAttempts: 2, backoff: constant(100) }, 'test'),
      );
      await clock.tickAsync(100);
      expect(await call.settled).toBe('second');
      const p = track(call.call.reopen(() => Promise.resolve('third'), httpError(503), undefined, progressed));
      await clock.tickAsync(100);
      if (progressed) expect(p).toMatchObject({ state: 'resolved', value: 'third' });
      else expect(p.error).toMatchObject({ reason: 'attempts', attempts: 2 });
      if (!progressed) expect(p.error).toBeInstanceOf(RetryError);
    }
  });

  it('progressed with nothing broken: the new attempt is the first of the new run', async () => {
    const { call } = await succeededCall({ maxAttempts: 2 });
    const seen: number[] = [];
    const p = track(
      call.reopen(
        (ctx: AttemptContext) => {
          seen.push(ctx.attempt);
          return ctx.attempt === 2 ? Promise.reject(httpError(503)) : Promise.resolve('third');
        },
        undefined,
        undefined,
        true,
      ),
    );
    await clock.tickAsync(100);
    expect(seen).toEqual([2, 3]);
    expect(p).toMatchObject({ state: 'resolved', value: 'third' });
  });
});
