// One attempt of retryFetch (src/fetch/attempt.ts): send, fill, status. An injected fetch that
// records what it was given and answers with real Response objects; the attempt's context is
// made here, so each step is seen without the engine around it.
import { Request as UndiciRequest } from 'undici';
import { describe, expect, it } from 'vitest';
import { HttpStatusError } from '../../src/errors.js';
import { type FillRule, type Send, attemptOf, sender } from '../../src/fetch/attempt.js';
import type { HeldResponse } from '../../src/fetch/held-response.js';
import { planRequest } from '../../src/fetch/request-plan.js';
import { bodyBuffer } from '../../src/fetch/resume.js';
import type { AttemptContext } from '../../src/types.js';
import { useVirtualClock } from '../helpers/clock.js';
import { rejection } from './loopback.js';

/** An attempt's context whose signal is `signal`. */
function contextOf(signal: AbortSignal = new AbortController().signal): AttemptContext {
  return { attempt: 1, copy: 1, invocationId: 'id', signal, elapsedMs: 0, remainingMs: 10_000, progress() {} };
}

/** A fetch that answers call n with answers[n]() (then 200 "ok") and records what it was given. */
function recordingFetch(answers: Array<() => Response | Promise<Response>> = []) {
  const calls: Array<{ input: string | URL | Request; init: RequestInit }> = [];
  const fn = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    calls.push({ input, init: init as RequestInit });
    return (answers[calls.length - 1] ?? (() => new Response('ok')))();
  };
  return { fn, calls };
}

/** A body of `bytes` bytes of 'a' that then breaks (or ends, with no error), recording a cancel. */
function body(bytes: number, error?: Error) {
  const state = { cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => c.enqueue(new Uint8Array(bytes).fill(0x61)),
    // The break comes once the bytes were read: an error would drop queued chunks.
    pull: (c) => (error === undefined ? c.close() : c.error(error)),
    cancel: () => {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

/** A held response that records what the attempt did with it. */
function recordingHeld() {
  const events: unknown[] = [];
  const held: HeldResponse = {
    hold: (failure) => events.push(failure),
    release: () => events.push('release'),
    settle: () => {
      throw new Error('an attempt never settles the call');
    },
  };
  return { held, events };
}

const asIs: FillRule = { buffer: undefined, readWhole: false };

describe('the send step', () => {
  it('sends the input with init, the method as the caller spelled it, and a signal of its own', async () => {
    const { fn, calls } = recordingFetch();
    const init = { method: 'patch', body: 'x', headers: { 'x-a': '1' } };
    const ctx = contextOf();
    const res = await sender('http://x.test/a', init, planRequest('http://x.test/a', init), fn)(ctx);
    expect(await res.text()).toBe('ok');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.input).toBe('http://x.test/a');
    expect(calls[0]?.init).toMatchObject({ method: 'patch', body: 'x', headers: { 'x-a': '1' } });
    expect(calls[0]?.init.signal).toBeInstanceOf(AbortSignal);
    expect(calls[0]?.init.signal).not.toBe(ctx.signal);
  });

  // Issue 34, defect 11: a clone per attempt teed the Request's body, holding all of a stream in memory.
  it('sends a Request of this realm itself, never a clone: no tee holds its body', async () => {
    const { fn, calls } = recordingFetch();
    const request = new Request('http://x.test/r', { method: 'PUT', body: 'payload' });
    await sender(request, undefined, planRequest(request, undefined), fn)(contextOf());
    expect(calls[0]?.input).toBe(request);
    expect(calls[0]?.init).toMatchObject({ method: 'PUT' });
    expect(calls[0]?.init).not.toHaveProperty('headers');
    expect(calls[0]?.init).not.toHaveProperty('body');
  });

  // Issue 34, defect 9: a Request of undici's package went out as `fetch(request, { method: 'GET' })`.
  it('sends a Request of another realm as its URL, its fields and headers under init, its method kept', async () => {
    const { fn, calls } = recordingFetch();
    const stream = new ReadableStream<Uint8Array>();
    const request = new UndiciRequest('http://x.test/u', {
      method: 'POST',
      headers: { authorization: 'Bearer t' },
      body: stream,
      duplex: 'half',
      redirect: 'manual',
      credentials: 'omit',
    } as never) as unknown as Request;
    const init = { headers: { authorization: 'Bearer mine' }, keepalive: false };
    const ctx = contextOf();
    await sender(request, init, planRequest(request, init), fn)(ctx);
    expect(calls[0]?.input).toBe('http://x.test/u');
    expect(calls[0]?.init).toMatchObject({
      method: 'POST',
      headers: { authorization: 'Bearer mine' },
      body: stream,
      duplex: 'half',
      redirect: 'manual',
      credentials: 'omit',
      mode: 'cors',
      cache: 'default',
      keepalive: false,
    });
    expect(calls[0]?.init.signal).not.toBe(request.signal);
    await sender(request, undefined, planRequest(request, undefined), fn)(ctx, { headers: { range: 'bytes=5-' }, generation: '9' });
    expect(String(calls[1]?.input)).toBe('http://x.test/u?generation=9');
    expect(calls[1]?.init.headers).toEqual({ authorization: 'Bearer t', range: 'bytes=5-' });
  });

  it('asks for the rest of a Request input with a new Request to the pinned URL, its method and headers kept', async () => {
    const { fn, calls } = recordingFetch();
    const request = new Request('http://x.test/o', { headers: { 'x-goog-user-project': 'p' } });
    await sender(request, undefined, planRequest(request, undefined), fn)(contextOf(), { headers: { range: 'bytes=5-' }, generation: '9' });
    const sent = calls[0]?.input as Request;
    expect(sent.url).toBe('http://x.test/o?generation=9');
    expect(sent.method).toBe('GET');
    expect(sent.headers.get('x-goog-user-project')).toBe('p');
    expect(calls[0]?.init.headers).toEqual({ 'x-goog-user-project': 'p', range: 'bytes=5-' });
  });

  it("sends nothing when the attempt's signal has aborted, and rejects with its reason", async () => {
    const { fn, calls } = recordingFetch();
    const reason = new Error('the caller left');
    const send = sender('http://x.test/', undefined, planRequest('http://x.test/', undefined), fn);
    expect(await rejection(send(contextOf(AbortSignal.abort(reason))))).toBe(reason);
    expect(calls).toHaveLength(0);
  });

  it('cancels a response that arrives after the attempt was abandoned, and rejects with the reason', async () => {
    const late = body(3);
    const controller = new AbortController();
    const reason = new Error('timed out');
    const { fn } = recordingFetch([
      () => {
        controller.abort(reason);
        return new Response(late.stream);
      },
    ]);
    const send = sender('http://x.test/', undefined, planRequest('http://x.test/', undefined), fn);
    expect(await rejection(send(contextOf(controller.signal)))).toBe(reason);
    expect(late.state.cancelled).toBe(true);
  });

  describe('in virtual time', () => {
    const clock = useVirtualClock();

    it("aborts fetch's signal one timer turn after the attempt's, with its reason", async () => {
      const controller = new AbortController();
      const { fn, calls } = recordingFetch();
      await sender('http://x.test/', undefined, planRequest('http://x.test/', undefined), fn)(contextOf(controller.signal));
      const reason = new Error('deadline');
      controller.abort(reason);
      expect(calls[0]?.init.signal?.aborted).toBe(false);
      await clock.tickAsync(1);
      expect(calls[0]?.init.signal?.aborted).toBe(true);
      expect(calls[0]?.init.signal?.reason).toBe(reason);
    });
  });
});

describe('the fill and status steps', () => {
  /** One attempt over `answers`, with `rule`; returns it and what it sent and held. */
  function attemptOver(answers: Array<() => Response>, rule: FillRule = asIs) {
    const { fn, calls } = recordingFetch(answers);
    const { held, events } = recordingHeld();
    const send: Send = sender('http://x.test/', undefined, planRequest('http://x.test/', undefined), fn);
    return { attempt: attemptOf(send, 'GET', held, rule), calls, events };
  }

  it('releases the response held from the attempt before, first, and resolves with a success as it came', async () => {
    const { attempt, events } = attemptOver([() => new Response('fine', { status: 201 })]);
    const res = await attempt(contextOf());
    expect(res.status).toBe(201);
    expect(await res.text()).toBe('fine');
    expect(events).toEqual(['release']);
  });

  it.each([400, 404, 503])('fails on %i with an HttpStatusError it holds, the body unread', async (status) => {
    const { attempt, events } = attemptOver([() => new Response('why', { status })]);
    const error = (await rejection(attempt(contextOf()))) as HttpStatusError;
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ status, method: 'GET' });
    expect(events).toEqual(['release', error]);
    expect(await error.response.text()).toBe('why');
  });

  it('passes a 3xx that fetch did not follow as a success', async () => {
    const { attempt, events } = attemptOver([() => new Response(null, { status: 304 })]);
    expect((await attempt(contextOf())).status).toBe(304);
    expect(events).toEqual(['release']);
  });

  it('reads the whole body inside the attempt with readWhole: the response keeps every byte', async () => {
    const { attempt } = attemptOver([() => new Response('all of it')], { buffer: undefined, readWhole: true });
    expect(await (await attempt(contextOf())).text()).toBe('all of it');
  });

  it('fails the attempt with the break when a body read whole breaks (the engine judges it, nothing is held)', async () => {
    const broken = body(4, new TypeError('terminated'));
    const { attempt, events } = attemptOver([() => new Response(broken.stream)], { buffer: undefined, readWhole: true });
    const error = (await rejection(attempt(contextOf()))) as Error;
    expect(error.message).toBe('terminated');
    expect(events).toEqual(['release']);
  });

  it("without readWhole, hands the response over before its body is read: a later break is the reader's", async () => {
    const broken = body(4, new TypeError('terminated'));
    const { attempt } = attemptOver([() => new Response(broken.stream)]);
    const res = await attempt(contextOf());
    expect(res.status).toBe(200);
    expect(((await rejection(res.arrayBuffer())) as Error).message).toBe('terminated');
  });

  it('with a buffer, a break fails the attempt and the next attempt asks only for the rest', async () => {
    const first = body(4, new TypeError('terminated'));
    const rest = body(6);
    const { attempt, calls } = attemptOver(
      [
        () => new Response(first.stream, { headers: { etag: '"v1"', 'content-length': '10' } }),
        () => new Response(rest.stream, { status: 206, headers: { etag: '"v1"', 'content-range': 'bytes 4-9/10' } }),
      ],
      { buffer: bodyBuffer(), readWhole: true },
    );
    expect(((await rejection(attempt(contextOf()))) as Error).message).toBe('terminated');
    const res = await attempt(contextOf());
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('a'.repeat(10));
    expect(calls.map((c) => c.init.headers)).toEqual([undefined, { range: 'bytes=4-', 'if-match': '"v1"' }]);
  });

  it('with a buffer, continues a part that ends short of the whole within the same attempt', async () => {
    const { attempt, calls } = attemptOver(
      [
        () => new Response(body(4, new TypeError('terminated')).stream, { headers: { etag: '"v1"', 'content-length': '10' } }),
        () => new Response(body(3).stream, { status: 206, headers: { etag: '"v1"', 'content-range': 'bytes 4-6/10' } }),
        () => new Response(body(3).stream, { status: 206, headers: { etag: '"v1"', 'content-range': 'bytes 7-9/10' } }),
      ],
      { buffer: bodyBuffer(), readWhole: true },
    );
    await rejection(attempt(contextOf()));
    const res = await attempt(contextOf());
    expect((await res.arrayBuffer()).byteLength).toBe(10);
    expect(calls.map((c) => (c.init.headers as Record<string, string> | undefined)?.range)).toEqual([undefined, 'bytes=4-', 'bytes=7-']);
  });

  it('with a buffer, leaves an error status out of it: the attempt fails with its HttpStatusError, body kept', async () => {
    const { attempt, events } = attemptOver([() => new Response('busy', { status: 503, headers: { etag: '"v1"' } })], {
      buffer: bodyBuffer(),
      readWhole: true,
    });
    const error = (await rejection(attempt(contextOf()))) as HttpStatusError;
    expect(error.status).toBe(503);
    expect(events).toEqual(['release', error]);
    expect(await error.response.text()).toBe('busy');
  });
});

describe('the fill step: what a buffer is given, and an abort while filling', () => {
  it('with a buffer, keeps an error status out of it, so the next attempt asks for the whole body again', async () => {
    const { fn, calls } = recordingFetch([
      () => new Response('busy', { status: 503, headers: { etag: '"v1"', 'content-length': '4' } }),
      () => new Response('whole', { headers: { etag: '"v1"' } }),
    ]);
    const send: Send = sender('http://x.test/', undefined, planRequest('http://x.test/', undefined), fn);
    const attempt = attemptOf(send, 'GET', recordingHeld().held, { buffer: bodyBuffer(), readWhole: true });
    expect(((await rejection(attempt(contextOf()))) as HttpStatusError).status).toBe(503);
    expect(await (await attempt(contextOf())).text()).toBe('whole');
    expect(calls.map((c) => c.init.headers)).toEqual([undefined, undefined]);
  });

  /** A send that answers with `response` whatever the attempt's signal says (a fetch that ignores it). */
  const sendOf =
    (response: Response): Send =>
    async () =>
      response;

  it('with a buffer, fails with the abort’s reason when the attempt was abandoned while the buffer filled', async () => {
    const controller = new AbortController();
    const reason = new Error('attempt timed out');
    const buffer = {
      next: () => undefined,
      fill: async (res: Response) => {
        controller.abort(reason);
        return res;
      },
    };
    const attempt = attemptOf(sendOf(new Response('whole')), 'GET', recordingHeld().held, { buffer, readWhole: true });
    expect(await rejection(attempt(contextOf(controller.signal)))).toBe(reason);
  });

  it('with readWhole, fails with the abort’s reason when the attempt was abandoned while the body was read', async () => {
    const controller = new AbortController();
    const reason = new Error('attempt timed out');
    const stream = new ReadableStream<Uint8Array>({
      pull: (c) => {
        c.enqueue(new Uint8Array(3));
        controller.abort(reason);
        c.close();
      },
    });
    const attempt = attemptOf(sendOf(new Response(stream)), 'GET', recordingHeld().held, { buffer: undefined, readWhole: true });
    expect(await rejection(attempt(contextOf(controller.signal)))).toBe(reason);
  });
});
