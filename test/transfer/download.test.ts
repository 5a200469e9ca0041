// The integrity rule of a resumed download, as a pure state: what trackDownload accepts, asks
// for and refuses, with real Response objects and no network. retryFetch's own tests
// (test/fetch/resume.test.ts) drive it through real streams and a loopback server.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HttpStatusError, ResumeError } from '../../src/errors.js';
import { crc32c } from '../../src/transfer/crc32c.js';
import { trackDownload } from '../../src/transfer/download.js';
import { googHash } from './crc32c-reference.js';

const first = (headers: Record<string, string>, length = 20) =>
  new Response(new Uint8Array(length), { headers: { 'content-length': String(length), ...headers } });
const reply = (status: number, headers: Record<string, string>, body: BodyInit | null = 'x') => new Response(body, { status, headers });
const bytes = (n: number, fill = 0x61) => new Uint8Array(n).fill(fill);

function refusal(action: () => unknown): ResumeError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ResumeError);
    return error as ResumeError;
  }
  throw new Error('expected a ResumeError');
}

describe('trackDownload: what pins the version, and the request for the rest', () => {
  it('pins Cloud Storage downloads by generation, in the query only', () => {
    const d = trackDownload(first({ 'x-goog-generation': '7', etag: '"e"' }));
    d.take(bytes(5));
    expect(d.pinned).toBe(true);
    expect(d.rest()).toEqual({ headers: { range: 'bytes=5-' }, generation: '7' });
  });

  it('pins by the strong ETag (If-Match), else Last-Modified (If-Unmodified-Since)', () => {
    expect(trackDownload(first({ etag: '"e"', 'last-modified': 'L' })).rest()).toEqual({
      headers: { range: 'bytes=0-', 'if-match': '"e"' },
      generation: undefined,
    });
    expect(trackDownload(first({ etag: 'W/"e"', 'last-modified': 'L' })).rest().headers).toEqual({
      range: 'bytes=0-',
      'if-unmodified-since': 'L',
    });
  });

  it('is unpinned with a weak ETag alone, or nothing', () => {
    expect(trackDownload(first({ etag: 'W/"e"' })).pinned).toBe(false);
    const none = trackDownload(first({}));
    expect(none.pinned).toBe(false);
    expect(none.rest().headers).toEqual({ range: 'bytes=0-' });
  });
});

describe('trackDownload: judging the answer', () => {
  const tracked = (received = 10, headers: Record<string, string> = { etag: '"e"' }) => {
    const d = trackDownload(first(headers));
    d.take(bytes(received));
    return d;
  };

  it('continues with a 206 that starts where the body broke, of the same object', () => {
    const d = tracked();
    expect(d.answer(reply(206, { etag: '"e"', 'content-range': 'bytes 10-19/20', 'content-length': '10' }), 'GET', false)).toBe('part');
    d.take(bytes(10));
    expect(d.ended()).toBe('complete');
  });

  it('takes a 206 of unknown total (`/*`) against the first response’s length', () => {
    const d = tracked();
    expect(d.answer(reply(206, { 'content-range': 'bytes 10-14/*' }), 'GET', false)).toBe('part');
    d.take(bytes(5));
    expect(d.ended()).toBe('more');
    expect(d.rest().headers.range).toBe('bytes=15-');
  });

  it('learns the total from the first 206 when the first response had no length', () => {
    const d = trackDownload(new Response(new Uint8Array(4), { headers: { etag: '"e"' } }));
    d.take(bytes(4));
    expect(d.ended()).toBe('complete');
    d.answer(reply(206, { 'content-range': 'bytes 4-7/12' }), 'GET', false);
    d.take(bytes(4));
    expect(d.ended()).toBe('more');
  });

  it.each([
    ['no Content-Range', {}, 'no valid Content-Range'],
    ['a malformed one', { 'content-range': 'bytes 10-/20' }, 'no valid Content-Range'],
    ['another start', { 'content-range': 'bytes 9-19/20' }, 'it starts at 9'],
    ['an end before its start', { 'content-range': 'bytes 10-9/20' }, 'its end is not within the object'],
    ['an end past the object', { 'content-range': 'bytes 10-20/20' }, 'its end is not within the object'],
    ['another total', { 'content-range': 'bytes 10-19/30' }, 'the object is 30 bytes, not 20'],
    ['a Content-Length that is not its range’s', { 'content-range': 'bytes 10-19/20', 'content-length': '9' }, 'its Content-Length is 9'],
    ['a content-encoded body', { 'content-range': 'bytes 10-19/20', 'content-encoding': 'gzip' }, 'no body of identity-encoded bytes'],
  ])('refuses a 206 with %s ("bad-range")', (_what, headers, why) => {
    const error = refusal(() => tracked().answer(reply(206, headers), 'GET', false));
    expect(error.reason).toBe('bad-range');
    expect(error.receivedBytes).toBe(10);
    expect(error.message).toContain(why);
    expect(error.message).toContain('asked for bytes 10- of 20, got HTTP 206');
  });

  it('refuses an answer without a body, or of another status', () => {
    expect(refusal(() => tracked().answer(reply(206, { 'content-range': 'bytes 10-19/20' }, null), 'GET', false)).reason).toBe('bad-range');
    expect(refusal(() => tracked().answer(reply(204, {}, null), 'GET', false)).message).toContain('no body');
    expect(refusal(() => tracked().answer(reply(203, {}), 'GET', false)).message).toContain('neither 206 nor 200');
  });

  it('says "changed" on a 412 and on any validator that differs, naming each', () => {
    expect(refusal(() => tracked().answer(reply(412, {}), 'GET', false)).message).toContain('HTTP 412');
    const all = { etag: '"e"', 'x-goog-generation': '1', 'last-modified': 'L1' };
    const error = refusal(() =>
      tracked(10, all).answer(reply(206, { etag: '"f"', 'x-goog-generation': '2', 'last-modified': 'L2' }), 'GET', false),
    );
    expect(error.reason).toBe('changed');
    expect(error.message).toContain('ETag "e" → "f", generation 1 → 2, Last-Modified L1 → L2');
    // A validator the answer does not carry is not a difference.
    expect(tracked(10, all).answer(reply(206, { 'content-range': 'bytes 10-19/20' }), 'GET', false)).toBe('part');
  });

  it('hands an error status to the retry policy as an HttpStatusError', () => {
    let error: unknown;
    try {
      tracked().answer(reply(503, {}), 'GET', false);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HttpStatusError);
    expect((error as HttpStatusError).status).toBe(503);
  });

  it('restarts on a 200 of the whole object only when restartable and of the same length', () => {
    const d = tracked(10);
    expect(d.answer(reply(200, { 'content-length': '20' }), 'GET', true)).toBe('restart');
    expect(d.received).toBe(0);
    expect(refusal(() => tracked().answer(reply(200, {}), 'GET', false)).reason).toBe('range-ignored');
    const other = refusal(() => tracked().answer(reply(200, { 'content-length': '16' }), 'GET', true));
    expect(other.reason).toBe('bad-range');
    expect(other.message).toContain('a 200 of 16 bytes is not the 20-byte object');
  });

  it('takes the validators of a restart when the first response had none', () => {
    const d = trackDownload(first({}));
    d.answer(reply(200, { etag: '"new"' }), 'GET', true);
    expect(d.pinned).toBe(true);
    expect(d.rest().headers['if-match']).toBe('"new"');
  });
});

describe('trackDownload: bytes and the end', () => {
  it('refuses bytes past the part before counting them', () => {
    const d = trackDownload(first({ etag: '"e"' }));
    d.take(bytes(15));
    const error = refusal(() => d.take(bytes(6)));
    expect(error.message).toContain('more than the 5 bytes left');
    expect(d.received).toBe(15);
    d.take(bytes(5));
    expect(d.ended()).toBe('complete');
  });

  it('calls a body that ended before its declared end truncated', () => {
    const d = trackDownload(first({ etag: '"e"' }));
    d.take(bytes(19));
    expect(d.ended()).toBe('truncated');
  });

  it('checks the CRC32C of a resumed download, and only of a resumed one', () => {
    const headers = { 'x-goog-generation': '1', 'x-goog-hash': googHash(bytes(20)) };
    const whole = trackDownload(first(headers));
    whole.take(bytes(20, 0x62));
    expect(whole.ended()).toBe('complete');
    const resumed = trackDownload(first(headers));
    resumed.take(bytes(10));
    resumed.answer(reply(206, { 'content-range': 'bytes 10-19/20' }), 'GET', false);
    resumed.take(bytes(10, 0x62));
    const error = refusal(() => resumed.ended());
    expect(error.reason).toBe('checksum');
    expect(error.message).toContain(`(${crc32c(bytes(20)).toString(16).padStart(8, '0')}, from x-goog-hash)`);
    const good = trackDownload(first(headers));
    good.take(bytes(10));
    good.answer(reply(206, { 'content-range': 'bytes 10-19/20' }), 'GET', false);
    good.take(bytes(10));
    expect(good.ended()).toBe('complete');
  });

  it('checks from byte 0 again after a restart', () => {
    const d = trackDownload(first({ 'x-goog-generation': '1', 'x-goog-hash': googHash(bytes(20)) }));
    d.take(bytes(7, 0x7a));
    d.answer(reply(200, { 'content-length': '20' }), 'GET', true);
    d.take(bytes(20));
    expect(d.ended()).toBe('complete');
  });

  it('takes no checksum when the object was decompressed on the way, and accepts an identity stored encoding', () => {
    const resume = (stored: string) => {
      const d = trackDownload(
        first({ 'x-goog-generation': '1', 'x-goog-hash': 'crc32c=AAAAAA==', 'x-goog-stored-content-encoding': stored }),
      );
      d.take(bytes(10));
      d.answer(reply(206, { 'content-range': 'bytes 10-19/20' }), 'GET', false);
      d.take(bytes(10));
      return () => d.ended();
    };
    expect(resume('gzip')()).toBe('complete');
    expect(refusal(resume('identity')).reason).toBe('checksum');
  });
});

describe('trackDownload: the edges of each rule', () => {
  it('sends only the Range when nothing pins the version, no validator header at all', () => {
    expect(trackDownload(first({})).rest()).toStrictEqual({ headers: { range: 'bytes=0-' }, generation: undefined });
    expect(Object.keys(trackDownload(first({ etag: 'W/"e"' })).rest().headers)).toEqual(['range']);
  });

  it.each(['20x', 'x20', '2 0', '-20', '20.0'])('takes no length from a Content-Length of %j', (length) => {
    const d = trackDownload(new Response(new Uint8Array(4), { headers: { etag: '"e"', 'content-length': length } }));
    d.take(bytes(25)); // no declared end, so no byte is past it
    expect(d.ended()).toBe('complete');
    // The first 206 tells the total, which a number read from the header would have contradicted.
    expect(d.answer(reply(206, { 'content-range': 'bytes 25-29/40' }), 'GET', false)).toBe('part');
  });

  it('says "of ?" in a refusal while the object’s length is unknown', () => {
    const d = trackDownload(new Response(new Uint8Array(4), { headers: { etag: '"e"' } }));
    d.take(bytes(4));
    const error = refusal(() => d.answer(reply(206, { 'content-range': 'bytes 5-9/10' }), 'GET', false));
    expect(error.message).toBe(
      'resume: cannot continue the download after 4 bytes: asked for bytes 4- of ?, got HTTP 206 with Content-Range "bytes 5-9/10": it starts at 5',
    );
  });

  it('takes a one-byte part (end equal to start)', () => {
    const d = trackDownload(first({ etag: '"e"' }));
    d.take(bytes(19));
    expect(d.answer(reply(206, { 'content-range': 'bytes 19-19/20', 'content-length': '1' }), 'GET', false)).toBe('part');
    d.take(bytes(1));
    expect(d.ended()).toBe('complete');
  });

  it('hands a 400 to the retry policy as an HttpStatusError, like any status from 400', () => {
    const d = trackDownload(first({ etag: '"e"' }));
    d.take(bytes(10));
    let error: unknown;
    try {
      d.answer(reply(400, { etag: '"e"', 'content-range': 'bytes 10-19/20' }), 'GET', false);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HttpStatusError);
    expect((error as HttpStatusError).status).toBe(400);
  });

  it('refuses a status other than 200 and 206 even when it names the right range', () => {
    const error = refusal(() => {
      const d = trackDownload(first({ etag: '"e"' }));
      d.take(bytes(10));
      d.answer(reply(203, { 'content-range': 'bytes 10-19/20' }), 'GET', false);
    });
    expect(error.reason).toBe('bad-range');
    expect(error.message).toContain('neither 206 nor 200');
  });

  it.each(['identity', 'IDENTITY'])('takes a part whose Content-Encoding is %j', (encoding) => {
    const d = trackDownload(first({ etag: '"e"' }));
    d.take(bytes(10));
    expect(d.answer(reply(206, { 'content-range': 'bytes 10-19/20', 'content-encoding': encoding }), 'GET', false)).toBe('part');
  });

  it.each(['xidentity', 'identityx', 'gzip, identity', 'identity, gzip'])('refuses a part whose Content-Encoding is %j', (encoding) => {
    const d = trackDownload(first({ etag: '"e"' }));
    d.take(bytes(10));
    const error = refusal(() => d.answer(reply(206, { 'content-range': 'bytes 10-19/20', 'content-encoding': encoding }), 'GET', false));
    expect(error.message).toContain('no body of identity-encoded bytes');
  });

  it('keeps the first response’s length across a restart that declares none', () => {
    const d = trackDownload(first({ etag: '"e"' }));
    d.answer(reply(200, { etag: '"e"' }), 'GET', true);
    d.take(bytes(10));
    expect(d.ended()).toBe('truncated');
  });

  it('learns the length from a restart when the first response had none', () => {
    const d = trackDownload(new Response(new Uint8Array(4), { headers: { etag: '"e"' } }));
    expect(d.answer(reply(200, { etag: '"e"', 'content-length': '20' }), 'GET', true)).toBe('restart');
    d.take(bytes(10));
    expect(d.ended()).toBe('truncated');
    expect(() => d.take(bytes(11))).toThrow('more than the 10 bytes left');
  });

  it('keeps the first response’s validators across a restart that carries none', () => {
    const d = trackDownload(first({ etag: '"e"' }));
    d.answer(reply(200, { 'content-length': '20' }), 'GET', true);
    expect(d.pinned).toBe(true);
    expect(d.rest().headers).toStrictEqual({ range: 'bytes=0-', 'if-match': '"e"' });
  });

  it('names both checksums in eight hex digits, leading zeros kept', () => {
    // Known answers of the bit-by-bit reference: 20 bytes of 0x02 → 0b1b20c3, of 0x05 → 0f8ccd33.
    const d = trackDownload(first({ 'x-goog-generation': '1', 'x-goog-hash': googHash(bytes(20, 0x02)) }));
    d.take(bytes(10, 0x05));
    d.answer(reply(206, { 'content-range': 'bytes 10-19/20' }), 'GET', false);
    d.take(bytes(10, 0x05));
    expect(refusal(() => d.ended()).message).toBe(
      "resume: cannot continue the download after 20 bytes: the CRC32C of the bytes received (0f8ccd33) is not the object's (0b1b20c3, from x-goog-hash)",
    );
  });
});

describe('trackDownload: an object whose length no answer states (`bytes N-M/*`)', () => {
  /** A download whose first answer declared no length and broke after 4 bytes, then a part of 4 more, "/*". */
  const unsized = (headers: Record<string, string> = { etag: '"e"' }) => {
    const d = trackDownload(new Response(new Uint8Array(4), { headers }));
    d.take(bytes(4));
    expect(d.answer(reply(206, { 'content-range': 'bytes 4-7/*' }), 'GET', false)).toBe('part');
    d.take(bytes(4));
    return d;
  };
  const unsatisfiable = (headers: Record<string, string>) => reply(416, headers, 'Range Not Satisfiable');

  it('takes no "/*" part for the end: it may be all the server would send of a longer object', () => {
    const d = unsized();
    expect(d.ended()).toBe('more');
    expect(d.rest().headers.range).toBe('bytes=8-');
    expect(d.answer(reply(206, { 'content-range': 'bytes 8-9/*' }), 'GET', false)).toBe('part');
    d.take(bytes(2));
    expect(d.ended()).toBe('more');
  });

  it('ends where a 416 to the next range names the bytes received as the length', () => {
    const d = unsized();
    expect(d.answer(unsatisfiable({ 'content-range': 'bytes */8' }), 'GET', false)).toBe('end');
    expect(d.ended()).toBe('complete');
    expect(() => d.take(bytes(1))).toThrow('more than the 0 bytes left');
  });

  it('ends at a 416 that names no length only when a validator pins the version (a changed object answers 412 first)', () => {
    expect(unsized().answer(unsatisfiable({}), 'GET', false)).toBe('end');
    const error = refusal(() => unsized({}).answer(unsatisfiable({}), 'GET', false));
    expect(error.reason).toBe('bad-range');
    expect(error.message).toBe(
      'resume: cannot continue the download after 8 bytes: asked for bytes 8- of ?, got HTTP 416 with Content-Range null: a 416 that names no length ends nothing when no validator pins the version',
    );
  });

  it.each(['bytes */9', 'bytes */7', 'bytes 0-7/8', 'bytes */'])('refuses a 416 whose Content-Range is %j ("bad-range")', (range) => {
    const error = refusal(() => unsized().answer(unsatisfiable({ 'content-range': range }), 'GET', false));
    expect(error.reason).toBe('bad-range');
    expect(error.message).toContain('a 416 ends the object only where the bytes received end, at 8');
  });

  it('says "changed" for a 416 of another version, and checks the CRC32C at the end it says', () => {
    expect(refusal(() => unsized().answer(unsatisfiable({ etag: '"f"', 'content-range': 'bytes */8' }), 'GET', false)).reason).toBe(
      'changed',
    );
    const d = trackDownload(
      new Response(new Uint8Array(4), { headers: { 'x-goog-generation': '1', 'x-goog-hash': googHash(bytes(8, 0x02)) } }),
    );
    d.take(bytes(4, 0x02));
    d.answer(reply(206, { 'content-range': 'bytes 4-7/*' }), 'GET', false);
    d.take(bytes(4, 0x05));
    d.answer(unsatisfiable({ 'content-range': 'bytes */8' }), 'GET', false);
    expect(refusal(() => d.ended()).reason).toBe('checksum');
    // Also when the 416 follows the first answer's break at once: the end is a resume's answer.
    const direct = trackDownload(
      new Response(new Uint8Array(8), { headers: { 'x-goog-generation': '1', 'x-goog-hash': googHash(bytes(8, 0x02)) } }),
    );
    direct.take(bytes(8, 0x05));
    expect(direct.answer(unsatisfiable({ 'content-range': 'bytes */8' }), 'GET', false)).toBe('end');
    expect(refusal(() => direct.ended()).reason).toBe('checksum');
  });

  it("property: whatever the length, the break and the cap on each part, the bytes end exactly at the object's end, and only there", () => {
    fc.assert(
      fc.property(fc.nat(300), fc.nat(300), fc.integer({ min: 1, max: 64 }), (length, at, cap) => {
        const broken = Math.min(at, length);
        const d = trackDownload(new Response(new Uint8Array(0), { headers: { etag: '"e"' } }));
        d.take(bytes(broken));
        // The first body broke; from here on, each answer is the server's to the request for the rest.
        for (;;) {
          const start = Number(/^bytes=(\d+)-$/.exec(`${d.rest().headers.range}`)?.[1]);
          expect(start).toBe(d.received);
          if (start >= length) {
            expect(d.answer(unsatisfiable({ 'content-range': `bytes */${length}` }), 'GET', false)).toBe('end');
            expect(d.ended()).toBe('complete');
            return d.received === length;
          }
          const end = Math.min(start + cap, length) - 1;
          expect(d.answer(reply(206, { 'content-range': `bytes ${start}-${end}/*` }), 'GET', start === 0)).toBe('part');
          d.take(bytes(end - start + 1));
          expect(d.ended()).toBe('more');
        }
      }),
    );
  });

  it('hands a 416 to the retry policy when the length is known: the range asked for is within it', () => {
    const d = trackDownload(first({ etag: '"e"' }));
    d.take(bytes(10));
    expect(() => d.answer(unsatisfiable({ 'content-range': 'bytes */10' }), 'GET', false)).toThrow(HttpStatusError);
  });
});
