// How a retryFetch call resumes (src/fetch/resume-driver.ts): the resume mode (pure), and the
// driver whose runs are further runs of the call, here a recorded stand-in for the engine's
// reopen, with real signals, sends and Responses.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sender } from '../../src/fetch/attempt.js';
import { planRequest } from '../../src/fetch/request-plan.js';
import { type CallerSignals, resumeDriver, resumeMode } from '../../src/fetch/resume-driver.js';
import type { AttemptContext, AttemptMode } from '../../src/types.js';
import { rejection } from './loopback.js';

describe('the resume mode', () => {
  const get = planRequest('http://x.test/', undefined);
  const hedge: AttemptMode = { run: (fn, ctx) => Promise.resolve(fn(ctx)) };

  it('resumes a GET in the body the caller reads, unless resume is false', () => {
    expect(resumeMode(get, {})).toBe('stream');
    expect(resumeMode(get, { resume: true, hedge })).toBe('stream');
    expect(resumeMode(get, { resume: false })).toBe('none');
  });

  it('resumes inside the attempts (a buffer) with bufferBody, but not for hedged copies, which race to their own ends', () => {
    expect(resumeMode(get, { bufferBody: true })).toBe('buffer');
    expect(resumeMode(get, { bufferBody: true, hedge })).toBe('none');
    expect(resumeMode(get, { bufferBody: true, resume: false })).toBe('none');
  });

  it.each(['HEAD', 'POST', 'PUT'])('never resumes a %s', (method) => {
    expect(resumeMode(planRequest('http://x.test/', { method }), {})).toBe('none');
    expect(resumeMode(planRequest('http://x.test/', { method }), { bufferBody: true })).toBe('none');
  });

  it('never resumes a request that carries its own Range, from init or from a Request', () => {
    expect(resumeMode(planRequest('http://x.test/', { headers: { Range: 'bytes=0-99' } }), {})).toBe('none');
    expect(resumeMode(planRequest(new Request('http://x.test/', { headers: { range: 'bytes=5-' } }), undefined), {})).toBe('none');
  });
});

describe('the resume driver', () => {
  /** A stand-in for the engine's reopen: records its arguments and runs one attempt under the signal it got. */
  function recordedRun() {
    const runs: Array<{ broken: unknown; signal: AbortSignal | undefined; progressed: boolean }> = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const run = {
      reopen: async (
        fn: (ctx: AttemptContext) => Promise<Response>,
        broken: unknown,
        signal: AbortSignal | undefined,
        progressed: boolean,
      ) => {
        runs.push({ broken, signal, progressed });
        await gate;
        if (signal?.aborted) throw signal.reason;
        return fn({
          attempt: 2,
          copy: 1,
          invocationId: 'id',
          signal: signal ?? new AbortController().signal,
          elapsedMs: 0,
          remainingMs: 1000,
          progress() {},
        });
      },
    };
    return { run, runs, release };
  }

  /** The driver of a GET of http://x.test/o through a fetch that records what it got and answers `answer()`. */
  function driverOf(signals: CallerSignals, answer: () => Response = () => new Response(null, { status: 206 })) {
    const sent: Array<{ input: unknown; init: RequestInit }> = [];
    const fetchFn = async (input: string | URL | Request, init?: RequestInit) => {
      sent.push({ input, init: init as RequestInit });
      return answer();
    };
    const recorded = recordedRun();
    const send = sender('http://x.test/o', undefined, planRequest('http://x.test/o', undefined), fetchFn);
    return { ...recorded, sent, driver: resumeDriver(recorded.run, send, signals) };
  }

  const none: CallerSignals = { caller: undefined, user: undefined };

  it("runs a resume as a further run of the call: the break, the resumed attempt's answer, whether bytes came", async () => {
    const { driver, runs, release, sent } = driverOf(none);
    const broken = new TypeError('terminated');
    const answer = driver.run(broken, (ctx) => driver.send({ range: 'bytes=10-', 'if-match': '"v1"' }, '7', ctx), true);
    release();
    expect((await answer).status).toBe(206);
    expect(runs).toEqual([{ broken, signal: expect.any(AbortSignal), progressed: true }]);
    expect(String(sent[0]?.input)).toBe('http://x.test/o?generation=7');
    expect(sent[0]?.init.headers).toEqual({ range: 'bytes=10-', 'if-match': '"v1"' });
  });

  it('stops a resume under way when the reader cancels the body: its run rejects with the reason', async () => {
    const { driver, runs, release, sent } = driverOf(none);
    expect(driver.stopped()).toBe(false);
    const answer = driver.run(undefined, (ctx) => driver.send({ range: 'bytes=10-' }, undefined, ctx), false);
    const reason = new Error('reader cancelled');
    driver.stop(reason);
    expect(runs[0]?.signal?.aborted).toBe(true);
    release();
    expect(await rejection(answer)).toBe(reason);
    expect(driver.stopped()).toBe(true);
    expect(sent).toHaveLength(0);
  });

  it.each(['caller', 'user'] as const)(
    "stops on the %s's signal: its run's signal aborts with that reason, and a break is final",
    async (which) => {
      const controller = new AbortController();
      const { driver, runs, release } = driverOf({ ...none, [which]: controller.signal });
      const answer = driver.run(new TypeError('terminated'), (ctx) => driver.send({ range: 'bytes=1-' }, undefined, ctx), false);
      expect(driver.stopped()).toBe(false);
      const reason = new Error(`${which} left`);
      controller.abort(reason);
      expect(driver.stopped()).toBe(true);
      expect(runs[0]?.signal?.reason).toBe(reason);
      release();
      expect(await rejection(answer)).toBe(reason);
    },
  );

  it.each([
    ['both signals', true, true],
    ["the caller's alone", true, false],
    ['options.signal alone', false, true],
  ])("leaves no listener on the caller's signals once a run has settled (%s)", async (_name, withCaller, withUser) => {
    const caller = new AbortController();
    const user = new AbortController();
    const signals = { caller: withCaller ? caller.signal : undefined, user: withUser ? user.signal : undefined };
    const { driver, release } = driverOf(signals);
    const answer = driver.run(undefined, (ctx) => driver.send({ range: 'bytes=1-' }, undefined, ctx), false);
    const watched = withCaller ? caller.signal : user.signal;
    expect(getEventListeners(watched, 'abort')).toHaveLength(1);
    release();
    await answer;
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(user.signal, 'abort')).toHaveLength(0);
  });

  it("hands the resumed response over like the first: the caller's signal, aborted later, aborts its fetch", async () => {
    const caller = new AbortController();
    const { driver, release, sent } = driverOf({ caller: caller.signal, user: undefined }, () => new Response('rest', { status: 206 }));
    const answer = driver.run(undefined, (ctx) => driver.send({ range: 'bytes=1-' }, undefined, ctx), false);
    release();
    await answer;
    expect(sent[0]?.init.signal?.aborted).toBe(false);
    const reason = new Error('navigated away');
    caller.abort(reason);
    expect(sent[0]?.init.signal?.reason).toBe(reason);
  });
});
