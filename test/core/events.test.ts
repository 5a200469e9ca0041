// The engine's one event stream (`onEvent`): every way of making a call reports to it, in order.
import { describe, expect, it } from 'vitest';
import { type CallEvent, createHedger, hedging, retry } from '../../src/index.js';
import { httpError, track, useVirtualClock } from '../helpers/clock.js';

const clock = useVirtualClock();
const backoff = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 10_000, jitter: 'none' as const };

/** Events without their errors, for comparing in order. */
const shapes = (events: CallEvent[]) => events.map(({ ...e }) => ('error' in e ? { ...e, error: '…' } : e));

describe('onEvent', () => {
  it('reports each attempt, each retry with the source of its delay, and the success, in order', async () => {
    const events: CallEvent[] = [];
    let n = 0;
    const fn = () => {
      n++;
      if (n === 1) throw new Error('reset');
      if (n === 2) throw httpError(503, { headers: { 'retry-after': '1' } });
      return 'ok';
    };
    const call = track(retry(fn, { backoff, onEvent: (e) => events.push(e) }));
    await clock.tickAsync(2000);
    expect(call.state).toBe('resolved');
    expect(shapes(events)).toEqual([
      { type: 'attempt', attempt: 1, elapsedMs: 0 },
      { type: 'retry', attempt: 1, error: '…', delayMs: 100, source: 'backoff', elapsedMs: 0 },
      { type: 'attempt', attempt: 2, elapsedMs: 100 },
      { type: 'retry', attempt: 2, error: '…', delayMs: 1000, source: 'server', elapsedMs: 100 },
      { type: 'attempt', attempt: 3, elapsedMs: 1100 },
      { type: 'success', attempts: 3, elapsedMs: 1100 },
    ]);
  });

  it('reports the give-up with its reason and error, once', async () => {
    const events: CallEvent[] = [];
    const error = new Error('down');
    const call = track(
      retry(
        () => {
          throw error;
        },
        { backoff, maxAttempts: 2, onEvent: (e) => events.push(e) },
      ),
    );
    await clock.tickAsync(1000);
    expect(call.state).toBe('rejected');
    const last = events.at(-1);
    expect(last).toMatchObject({ type: 'give-up', reason: 'attempts', attempts: 2, elapsedMs: 100 });
    expect((last as { error: unknown }).error).toBe(call.error);
    expect(events.filter((e) => e.type === 'give-up')).toHaveLength(1);
  });

  it('reports the copies of a hedged attempt', async () => {
    const events: CallEvent[] = [];
    const fn = ({ copy, signal }: { copy: number; signal: AbortSignal }) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve(copy), copy === 1 ? 1000 : 10);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
    const call = track(retry(fn, { hedge: hedging({ delayMs: 50, hedger: createHedger() }), onEvent: (e) => events.push(e) }));
    await clock.tickAsync(100);
    expect(call).toMatchObject({ state: 'resolved', value: 2 });
    expect(events.map((e) => e.type)).toEqual(['attempt', 'hedge', 'success']);
    expect(events[1]).toEqual({ type: 'hedge', attempt: 1, copy: 2, reason: 'delay', elapsedMs: 50 });
  });

  it('reports progress, after which the limits count afresh', async () => {
    const events: CallEvent[] = [];
    const call = track(
      retry(
        async (ctx) => {
          await new Promise((resolve) => setTimeout(resolve, 300));
          ctx.progress();
          await new Promise((resolve) => setTimeout(resolve, 300));
          return 'done';
        },
        { deadlineMs: 500, onEvent: (e) => events.push(e) },
      ),
    );
    await clock.tickAsync(700);
    // 600 ms in all, past the 500 ms deadline: the progress at 300 ms moved it to 800 ms.
    expect(call).toMatchObject({ state: 'resolved', value: 'done' });
    expect(events).toEqual([
      { type: 'attempt', attempt: 1, elapsedMs: 0 },
      { type: 'progress', attempt: 1, elapsedMs: 300 },
      { type: 'success', attempts: 1, elapsedMs: 600 },
    ]);
  });

  it('ignores what a listener throws: the call goes on as without it', async () => {
    let n = 0;
    const call = track(
      retry(() => (++n < 3 ? Promise.reject(new Error('x')) : 'ok'), {
        backoff,
        onEvent: () => {
          throw new Error('listener broke');
        },
      }),
    );
    await clock.tickAsync(1000);
    expect(call).toMatchObject({ state: 'resolved', value: 'ok' });
    expect(n).toBe(3);
  });

  it('refuses a listener that is not a function, naming it', async () => {
    await expect(retry(() => 1, { onEvent: 5 as never })).rejects.toThrow('retry: options.onEvent must be a function, got 5');
  });
});
