// randomId: a version 4 UUID from whatever randomness the runtime has.
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { randomId } from '../../src/runtime/random-id.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('randomId', () => {
  it("uses the runtime's crypto.randomUUID where there is one", () => {
    expect(randomId()).toMatch(UUID);
    expect(randomId({ randomUUID: () => 'from-crypto' })).toBe('from-crypto');
  });

  it('makes a version 4 UUID of Math.random otherwise (a page served over plain HTTP), each a new one', () => {
    const ids = new Set(Array.from({ length: 50 }, () => randomId({})));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(randomId(undefined)).toMatch(UUID);
  });

  it('works where the runtime has no crypto at all', () => {
    vi.stubGlobal('crypto', undefined);
    try {
      expect(randomId()).toMatch(UUID);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('spends Math.random on every digit, the edges of [0, 1) included', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 31, maxLength: 31 }), (draws) => {
        const queue = [...draws];
        vi.spyOn(Math, 'random').mockImplementation(() => queue.shift() as number);
        const id = randomId({});
        expect(queue).toEqual([]);
        expect(id).toMatch(UUID);
        const digits = id.replace(/-/g, '').slice(0, 12) + id.replace(/-/g, '').slice(13);
        const expected = draws.map((r, i) => (i === 15 ? 8 + Math.floor(r * 4) : Math.floor(r * 16)).toString(16)).join('');
        expect(digits).toBe(expected);
        vi.restoreAllMocks();
      }),
    );
  });
});
