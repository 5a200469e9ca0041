// The invariants of retryFetch worlds: the promises of README "HTTP: retryFetch" and
// docs/retry-fetch.md, over what fetch-world.ts recorded, beside the call invariants they share
// with retry() (invariants.ts).
import { type Invariant, INVARIANTS } from './invariants.js';
import { type FetchWorldRecord, IDEMPOTENT } from './fetch-world.js';

type FetchInvariant = Omit<Invariant, 'check'> & { check(world: FetchWorldRecord): string[] };

/** The call invariants that hold for retryFetch as they do for retry(). */
// Not 'not-after-settle': a GET whose body breaks after it was handed over is resumed, by requests after the call resolved.
const SHARED = new Set(['settles-once', 'deadline', 'gate-pause', 'timer-range', 'no-unhandled-rejection', 'nothing-left', 'abort']);

export const FETCH_INVARIANTS: readonly FetchInvariant[] = [
  ...INVARIANTS.filter((inv) => SHARED.has(inv.name)),
  {
    name: 'request-identity',
    promise:
      '`retryFetch(input, init?, options?)` takes the same arguments as `fetch` … a `Request` input is cloned for each attempt (issue 34: never send a different request than the caller made)',
    where: 'README.md, "HTTP: retryFetch", Bodies',
    check: (world) =>
      world.fetchCalls.flatMap((call, i) =>
        call.seen.flatMap((seen, k) => {
          const out: string[] = [];
          if (seen.method !== call.expected.method)
            out.push(`request ${k + 1} went out as ${seen.method}, the caller made a ${call.expected.method}`);
          for (const [name, value] of Object.entries(call.expected.headers))
            if (seen.headers[name] !== value)
              out.push(`request ${k + 1}: header ${name} is ${seen.headers[name]}, the caller sent ${value}`);
          if (k === 0 && call.spec.body !== 'stream' && seen.body !== call.expected.body)
            out.push(`request ${k + 1}: body ${JSON.stringify(seen.body)}, the caller sent ${JSON.stringify(call.expected.body)}`);
          return out.map((o) => `fetch ${i}: ${o}`);
        }),
      ),
  },
  {
    name: 'stream-sent-once',
    promise:
      'Sent once: a `ReadableStream` body (and, in Node, an async iterable). The first attempt reads it up, so the request is never retried, not even after `ECONNREFUSED`. A `Request` is handed to fetch itself, never cloned, so its body (a stream) is sent once too.',
    where: 'docs/retry-fetch.md, "Bodies"; README.md, "HTTP: retryFetch", Bodies',
    check: (world) =>
      world.fetchCalls.flatMap((call, i) => {
        const once = call.spec.body === 'stream' || (call.spec.input !== 'url' && call.spec.body !== 'none');
        return once && call.seen.length > 1
          ? [`fetch ${i}: a ${call.spec.input}'s ${call.spec.body} body was sent ${call.seen.length} times`]
          : [];
      }),
  },
  {
    name: 'not-resent',
    promise:
      'Only GET, HEAD, OPTIONS, PUT, DELETE and TRACE (idempotent in RFC 9110), a request with a non-empty `Idempotency-Key` header, and any request whose failure proves it never left the client … A POST without a key is sent once otherwise.',
    where: 'README.md, "HTTP: retryFetch", What is sent again',
    check: (world) =>
      world.fetchCalls.flatMap((call, i) => {
        if (IDEMPOTENT.has(call.spec.method) || call.spec.idempotencyKey) return [];
        return call.seen.slice(1).some((_, k) => call.seen.slice(0, k + 1).some((s) => s.outcome !== 'refused'))
          ? [
              `fetch ${i}: a ${call.spec.method} without a key was sent ${call.seen.length} times (${call.seen.map((s) => s.outcome).join(', ')})`,
            ]
          : [];
      }),
  },
  {
    name: 'max-retry-after',
    promise:
      '`Retry-After` … lengthens the next wait, never shortens it. If it asks for a wait past the deadline or past `maxRetryAfterMs`, the response is returned at once. (README "Server hints": RateLimit reset is a hint too; issue 34 item 10: every hint is held to the same cap)',
    where: 'README.md, "HTTP: retryFetch", Retry-After; docs/retry-fetch.md, "Retry-After"',
    check: (world) =>
      world.fetchCalls.flatMap((call, i) => {
        const limits = world.calls[i]?.limits;
        const started = world.calls[i]?.startedAt ?? 0;
        const out: string[] = [];
        const judged = world.calls[i]?.events.filter((e) => ['retry', 'success', 'give-up'].includes(e.event.type)) ?? [];
        for (const s of call.seen) {
          if (s.hintMs === undefined || s.answeredSeq === undefined || !limits) continue;
          // Answered after its attempt was judged (abandoned at its timeout, say): the engine never read that hint.
          if (judged.some((e) => e.seq > s.seq && e.seq < (s.answeredSeq as number))) continue;
          const tooLong = s.hintMs > limits.maxRetryAfterMs || s.at + s.hintMs > started + limits.deadlineMs;
          const later = call.seen.find((t) => t.seq > (s.answeredSeq as number));
          if (tooLong && later)
            out.push(
              `fetch ${i}: a hint of ${s.hintMs} ms (cap ${limits.maxRetryAfterMs}, deadline ${limits.deadlineMs}) was followed by another request at ${later.at} ms`,
            );
          else if (later && later.at < s.at + s.hintMs - 1)
            out.push(`fetch ${i}: a hint of ${s.hintMs} ms at ${s.at} ms, the next request at ${later.at} ms`);
        }
        return out;
      }),
  },
  {
    name: 'bytes-exact',
    promise: 'What you read is the bytes of one version, exactly, or a `ResumeError`',
    where: 'src/fetch/fetch-options.ts, RetryFetchOptions.resume; docs/retry-fetch.md, "The integrity rule"',
    check: (world) =>
      world.fetchCalls.flatMap((call, i) => {
        const read = call.read;
        if (!read?.bytes || read.status !== 200 || call.spec.method !== 'GET' || call.spec.steps.some((s) => s.kind === 'ok' && s.endless))
          return [];
        const bytes = read.bytes;
        const same = world.versions.some((v) => v.bytes.length === bytes.length && v.bytes.every((b, k) => b === bytes[k]));
        return same
          ? []
          : [`fetch ${i}: read ${bytes.length} bytes that are no version of the object (size ${world.versions[0]?.bytes.length})`];
      }),
  },
];

/** Every violation of a fetch world. */
export function fetchViolations(world: FetchWorldRecord): { invariant: string; detail: string }[] {
  return [
    ...world.direct,
    ...FETCH_INVARIANTS.flatMap((inv) => {
      try {
        return inv.check(world).map((detail) => ({ invariant: inv.name, detail }));
      } catch (error) {
        return [{ invariant: inv.name, detail: `the check itself threw: ${String(error)}` }];
      }
    }),
  ];
}
