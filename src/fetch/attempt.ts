/**
 * One attempt of retryFetch, in three steps: send the request (the caller's, or a request for
 * the rest of a body), fill the response's body when the caller wants it whole inside the
 * attempt, and turn an error status into an {@link HttpStatusError}, the failure the engine
 * judges. Whatever an attempt leaves unread is cancelled: a response nobody will read holds its
 * connection.
 */
import { HttpStatusError } from '../errors.js';
import type { AttemptContext } from '../types.js';
import type { FetchFunction } from './fetch-options.js';
import type { HeldResponse } from './held-response.js';
import { invocationHeaders } from './invocation-headers.js';
import type { RequestPlan } from './request-plan.js';
import { discarded, followLate, readWholeBody, trackResponse } from './responses.js';
import { type BodyBuffer, canResume } from './resume.js';

/** What a request for the rest of a body adds: `Range` and validator headers, and the generation to pin. */
export interface RestRequest {
  readonly headers: Record<string, string>;
  readonly generation: string | undefined;
}

/** Sends the planned request once for the attempt `ctx`, or with `rest`, the request for the rest of a body. */
export type Send = (ctx: AttemptContext, rest?: RestRequest) => Promise<Response>;

/** How an attempt fills a response's body before it counts as a success. */
export interface FillRule {
  /** Reads a GET's body into this buffer across attempts: a break fails the attempt, the next asks for the rest. */
  readonly buffer: BodyBuffer | undefined;
  /** Reads every other body to its end inside the attempt (`bufferBody`), so that a break fails the attempt. */
  readonly readWhole: boolean;
}

/**
 * The send step: `plan`'s request, through `fetchFn`, for `input` and `init` as the caller gave
 * them; with `stamped`, each carrying the call's invocation headers (invocation-headers.ts). Each
 * fetch's signal follows the attempt's (followLate), at once when `callerAborted()` says the
 * abort is the caller's.
 */
export function sender(
  input: string | URL | Request,
  init: RequestInit | undefined,
  plan: RequestPlan,
  fetchFn: FetchFunction,
  stamped = false,
  callerAborted?: () => boolean,
): Send {
  return async (ctx, rest) => {
    const attemptSignal = ctx.signal;
    // The engine reads the clock for a first attempt one microtask after it began. Yielding before
    // fetch's (synchronous, not free) setup makes that setup count against the deadline, even
    // when a caller starts fifty calls in one go and the clock would otherwise start after all.
    await undefined;
    // Aborted meanwhile (the caller's signal, in the same tick): nothing is sent.
    if (attemptSignal.aborted) throw attemptSignal.reason;
    const fetchController = followLate(attemptSignal, callerAborted);
    // A Request of this realm is handed over itself: fetch reads a body-less one afresh on every
    // call, and one with a body is sent once (request-plan.ts), so no clone tees its stream. One of
    // another realm goes as its URL and its fields.
    let target: string | URL | Request = plan.request ?? (plan.fields === undefined ? input : plan.url);
    if (rest?.generation !== undefined) {
      // A relative URL (a browser page's fetch) is resolved as fetch resolves it: against the page.
      const url = new URL(plan.url, (globalThis as { location?: { href: string } }).location?.href);
      if (!url.searchParams.has('generation')) url.searchParams.set('generation', rest.generation);
      target = plan.request === undefined ? url : new Request(url, plan.request);
    }
    // Sent as init when fetch would not read them from the target: a foreign Request's, the rest's, the invocation's.
    const headers =
      rest === undefined && !stamped && plan.fields === undefined
        ? {}
        : {
            headers: { ...Object.fromEntries(plan.headers ?? []), ...rest?.headers, ...(stamped && invocationHeaders(plan.headers, ctx)) },
          };
    // The method is passed explicitly: fetch fills a missing one from its own dictionary, which
    // inherits from Object.prototype, and the method sent must be the one judged idempotent.
    const response = await fetchFn(target, {
      ...plan.fields,
      ...init,
      ...headers,
      method: plan.sentMethod,
      signal: fetchController.signal,
    });
    trackResponse(response, fetchController);
    // The engine has moved on (timeout, deadline, abort): nobody will read this response.
    if (attemptSignal.aborted) throw discarded(response, attemptSignal.reason);
    return response;
  };
}

/**
 * One attempt: releases the response held from the attempt before, sends (for the rest of a
 * buffered body when one broke), fills, and fails with an {@link HttpStatusError} for a status of
 * 400 or more, holding that response as the call's possible answer.
 */
export function attemptOf(send: Send, method: string, held: HeldResponse, rule: FillRule): (ctx: AttemptContext) => Promise<Response> {
  return async (ctx) => {
    held.release();
    const rest = rule.buffer?.next();
    const response = await fill(await send(ctx, rest), rest !== undefined, ctx, send, method, rule);
    return passStatus(response, method, held);
  };
}

/** The fill step: `response`, its body read whole when `rule` says so (see {@link FillRule}). */
async function fill(
  response: Response,
  resuming: boolean,
  ctx: AttemptContext,
  send: Send,
  method: string,
  rule: FillRule,
): Promise<Response> {
  const buffer = rule.buffer;
  if (buffer !== undefined && (resuming || canResume(response))) {
    // A break fails this attempt and leaves the bytes so far in the buffer, for the next one;
    // a part that ends short of the whole is continued within the attempt.
    for (let part = response; ; ) {
      const whole = await buffer.fill(part, method, ctx.signal).catch((error: unknown) => {
        throw discarded(part, error);
      });
      if (ctx.signal.aborted) throw ctx.signal.reason;
      if (whole !== undefined) return whole;
      part = await send(ctx, buffer.next() as RestRequest);
    }
  }
  if (rule.readWhole) {
    await readWholeBody(response);
    if (ctx.signal.aborted) throw discarded(response, ctx.signal.reason);
  }
  return response;
}

/** The status step: a success is the attempt's value; an error status its failure, held. */
function passStatus(response: Response, method: string, held: HeldResponse): Response {
  if (response.status < 400) return response;
  const failure = new HttpStatusError(response, method);
  // Hedged copies fail side by side: the one held before this one will never be returned.
  held.hold(failure);
  throw failure;
}
