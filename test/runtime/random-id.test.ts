// randomId: a version 4 UUID from whatever randomness the runtime has.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { randomId } from '../../src/runtime/random-id.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('randomId', () => {
  it("uses the runtime's crypto.randomUUID where there is one", () => {
    expect(randomId()).toMatch(UUID);
    expect(randomId({ randomUUID: () => 'from-crypto' })).toBe('from-crypto');
  });

  it('makes a version 4 UUID of getRandomValues bytes otherwise (a page served over plain HTTP)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 31, maxLength: 31 }), (random) => {
        const fill = (bytes: Uint8Array): Uint8Array => {
          bytes.set(random);
          return bytes;
        };
        const id = randomId({ getRandomValues: fill });
        expect(id).toMatch(UUID);
        // Each random digit is its byte's low 4 bits, in order; the variant digit keeps 2 of them.
        const digits = id.replace(/-/g, '').slice(0, 12) + id.replace(/-/g, '').slice(13);
        const expected = Array.from(random, (byte, i) => (i === 15 ? (byte & 3) | 8 : byte & 15).toString(16)).join('');
        expect(digits).toBe(expected);
      }),
    );
  });

  it('falls back to Math.random without Web Crypto, still a version 4 UUID, each a new one', () => {
    const ids = new Set(Array.from({ length: 50 }, () => randomId({})));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(randomId(undefined)).toMatch(UUID);
  });
});
