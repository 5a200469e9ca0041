// transfer/crc32c.ts: the table-driven CRC32C against published vectors and an independent
// bit-by-bit reference, its incremental form under any split, and parseGoogHash on headers
// shaped as Cloud Storage and storage-testbench send them.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32c, parseGoogHash } from '../../src/transfer/crc32c.js';
import { referenceCrc32c } from './crc32c-reference.js';

const text = (value: string): Uint8Array => new TextEncoder().encode(value);

/** How Cloud Storage writes a crc32c: base64 of the 4 big-endian bytes. */
function googCrc32c(value: number): string {
  const bytes = [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];
  return btoa(String.fromCharCode(...bytes));
}

const md5Base64 = (bytes: Uint8Array): string => createHash('md5').update(bytes).digest('base64');

describe('crc32c', () => {
  it('gives the published check values', () => {
    // RFC 3720 (iSCSI) B.4 and the CRC catalogue's CRC-32/ISCSI check value.
    expect(crc32c(text('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => 31 - i))).toBe(0x113fdb5c);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });

  it('returns an unsigned 32-bit integer', () => {
    const value = crc32c(text('123456789')); // 0xe3069283: the high bit is set, so a signed result would be negative
    expect(value).toBeGreaterThan(0x7fffffff);
    expect(Number.isInteger(value)).toBe(true);
  });

  it('leaves a running CRC unchanged over no bytes', () => {
    expect(crc32c(new Uint8Array(0), 0xe3069283)).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0), 0xffffffff)).toBe(0xffffffff);
  });

  it('agrees with the bit-by-bit reference on every length around the 8-byte blocks', () => {
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 151 + 17) & 0xff);
    for (let length = 0; length <= bytes.length; length++) {
      const part = bytes.subarray(0, length);
      expect(crc32c(part), `length ${length}`).toBe(referenceCrc32c(part));
    }
  });

  it('agrees with the reference on any bytes, at any offset into a larger buffer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), fc.nat(16), (bytes, offset) => {
        const view = bytes.subarray(Math.min(offset, bytes.length));
        expect(crc32c(view)).toBe(referenceCrc32c(view));
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with the reference on a megabyte of pseudo-random bytes', () => {
    let seed = 0x2545f491;
    const bytes = Uint8Array.from({ length: 1 << 20 }, () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed >>> 24;
    });
    expect(crc32c(bytes)).toBe(referenceCrc32c(bytes));
  });

  it('is incremental: any split of any bytes gives the CRC of the whole', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.array(fc.nat(600), { maxLength: 6 }), (bytes, cuts) => {
        const points = [0, ...cuts.map((cut) => Math.min(cut, bytes.length)).sort((a, b) => a - b), bytes.length];
        let crc = 0;
        for (let i = 1; i < points.length; i++) crc = crc32c(bytes.subarray(points[i - 1], points[i]), crc);
        expect(crc).toBe(crc32c(bytes));
      }),
      { numRuns: 500 },
    );
  });

  it('is incremental across two chunks as the issue states it: crc32c(b, crc32c(a)) = crc32c(a + b)', () => {
    const a = text('12345');
    const b = text('6789');
    expect(crc32c(b, crc32c(a))).toBe(0xe3069283);
  });

  it('refuses a previous value that is not an unsigned 32-bit integer, naming it', () => {
    const bytes = text('x');
    for (const previous of [-1, 2 ** 32, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => crc32c(bytes, previous), String(previous)).toThrow(RangeError);
    }
    expect(() => crc32c(bytes, -1)).toThrow('crc32c: previous must be an unsigned 32-bit integer (a crc32c result), got -1');
    expect(() => crc32c(bytes, '7' as unknown as number)).toThrow('got "7"');
    expect(crc32c(bytes, 0xffffffff)).toBe(crc32c(bytes, 0xffffffff)); // the top of the range is accepted
  });

  it('computes the same from a Node Buffer as from a plain Uint8Array', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });
});

describe('parseGoogHash', () => {
  const hello = text('hello world');
  const helloCrc = googCrc32c(crc32c(hello)); // computed, not copied from a page
  const helloMd5 = md5Base64(hello);

  it('reads what Cloud Storage sends for an object, which is the checksum of its bytes', () => {
    expect(helloCrc).toBe('yZRlqg==');
    expect(helloMd5).toBe('XrY7u+Ae7tCTyyK7j1rNww==');
    // Two x-goog-hash headers, as fetch's Headers.get joins them.
    const headers = new Headers();
    headers.append('x-goog-hash', `crc32c=${helloCrc}`);
    headers.append('x-goog-hash', `md5=${helloMd5}`);
    expect(parseGoogHash(headers.get('x-goog-hash'))).toEqual({ crc32c: crc32c(hello), md5: helloMd5 });
    expect(parseGoogHash(headers.get('x-goog-hash')).crc32c).toBe(0xc99465aa);
  });

  it("reads storage-testbench's one value joined with a bare comma (gcs/object.py, x_goog_hash_header)", () => {
    expect(parseGoogHash(`crc32c=${helloCrc},md5=${helloMd5}`)).toEqual({ crc32c: 0xc99465aa, md5: helloMd5 });
  });

  it("decodes the documentation's crc32c=n03x6A==, which is not the CRC of 'hello world' despite its md5 beside it", () => {
    const { crc32c: documented } = parseGoogHash('crc32c=n03x6A==, md5=XrY7u+Ae7tCTyyK7j1rNww==');
    expect(documented).toBe(0x9f4df1e8);
    expect(documented).not.toBe(crc32c(hello));
  });

  it('reads either hash alone', () => {
    expect(parseGoogHash(`crc32c=${helloCrc}`)).toEqual({ crc32c: 0xc99465aa });
    expect(parseGoogHash(`md5=${helloMd5}`)).toEqual({ md5: helloMd5 });
  });

  it('reads every 32-bit value back from its base64', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (value) => {
        expect(parseGoogHash(`md5=${helloMd5}, crc32c=${googCrc32c(value)}`).crc32c).toBe(value);
      }),
    );
    expect(parseGoogHash('crc32c=AAAAAA==').crc32c).toBe(0);
    expect(parseGoogHash('crc32c=/////w==').crc32c).toBe(0xffffffff);
  });

  it('tolerates spaces around names, values and commas, and upper-case names', () => {
    expect(parseGoogHash(`  crc32c = ${helloCrc} ,   md5=${helloMd5}  `)).toEqual({ crc32c: 0xc99465aa, md5: helloMd5 });
    expect(parseGoogHash(`CRC32C=${helloCrc}, MD5=${helloMd5}`)).toEqual({ crc32c: 0xc99465aa, md5: helloMd5 });
  });

  it('gives nothing for an absent or empty header', () => {
    expect(parseGoogHash(null)).toEqual({});
    expect(parseGoogHash(undefined)).toEqual({});
    expect(parseGoogHash('')).toEqual({});
    expect(parseGoogHash(' , ,')).toEqual({});
  });

  it('leaves out a malformed crc32c and keeps the good md5 beside it', () => {
    const malformed = [
      'crc32c=',
      'crc32c=yZRl!g==', // not base64
      'crc32c=yZRl-g==', // base64url is not what Cloud Storage sends
      'crc32c=yZRlqg', // unpadded
      'crc32c=yZRlqg=', // short padding
      'crc32c=yZRlqg===',
      'crc32c=yZRl qg==', // a space inside
      'crc32c=yZRlqgAA', // 6 bytes
      'crc32c=yZRl', // 3 bytes
      'crc32c=AAAAAAAAAAAAAAAAAAAAAA==', // 16 bytes: an md5 under the wrong name
      'crc32c=3381752234', // the decimal number instead of base64
      'crc32c',
    ];
    for (const bad of malformed) expect(parseGoogHash(`${bad}, md5=${helloMd5}`), bad).toEqual({ md5: helloMd5 });
  });

  it('leaves out a malformed md5 and keeps the good crc32c beside it', () => {
    const malformed = [
      'md5=',
      'md5=XrY7u+Ae7tCTyyK7j1rNww',
      'md5=XrY7u+Ae7tCTyyK7j1rN==',
      'md5=XrY7u+Ae7tCTyyK7j1r*ww==',
      `md5=${helloCrc}`,
    ];
    for (const bad of malformed) expect(parseGoogHash(`crc32c=${helloCrc}, ${bad}`), bad).toEqual({ crc32c: 0xc99465aa });
  });

  it('ignores hashes it does not know and parts without a name', () => {
    expect(parseGoogHash(`sha256=abc=, crc32c=${helloCrc}, junk`)).toEqual({ crc32c: 0xc99465aa });
  });

  it('keeps a hash repeated with the same value, and drops one given two values or a bad one beside it', () => {
    const other = googCrc32c(crc32c(text('hello world\n')));
    expect(parseGoogHash(`crc32c=${helloCrc}, crc32c=${helloCrc}`)).toEqual({ crc32c: 0xc99465aa });
    expect(parseGoogHash(`crc32c=${helloCrc}, crc32c=${other}, md5=${helloMd5}`)).toEqual({ md5: helloMd5 });
    expect(parseGoogHash(`crc32c=${helloCrc}, crc32c=junk`)).toEqual({});
    expect(parseGoogHash(`md5=${helloMd5}, md5=${md5Base64(text('x'))}`)).toEqual({});
  });

  it('has no field at all for a hash the header lacks', () => {
    expect(Object.keys(parseGoogHash(`md5=${helloMd5}`))).toEqual(['md5']);
    expect(Object.keys(parseGoogHash(`crc32c=${helloCrc}`))).toEqual(['crc32c']);
    expect(Object.keys(parseGoogHash('crc32c=junk, md5=junk'))).toEqual([]);
  });

  it('keeps the md5 beside a hash it does not know', () => {
    expect(parseGoogHash(`md5=${helloMd5}, sha256=abc=`)).toEqual({ md5: helloMd5 });
    expect(parseGoogHash(`sha256=abc=, md5=${helloMd5}`)).toEqual({ md5: helloMd5 });
  });

  it('skips a part without "=" even when it begins with a hash name', () => {
    expect(parseGoogHash(`crc32c=${helloCrc}, crc32cx, md5=${helloMd5}, md5x`)).toEqual({ crc32c: 0xc99465aa, md5: helloMd5 });
  });

  it('never throws, whatever the server sends', () => {
    const pieces = fc.constantFrom('crc32c', 'md5', '=', '==', ',', ' ', 'yZRlqg', 'AAAA', '/', '+', '!', '\u00e9', '\u{1f600}');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.array(pieces).map((parts) => parts.join('')),
        ),
        (header) => {
          const parsed = parseGoogHash(header);
          if (parsed.crc32c !== undefined) expect(parsed.crc32c >>> 0).toBe(parsed.crc32c);
          if (parsed.md5 !== undefined) expect(parsed.md5).toHaveLength(24);
        },
      ),
      { numRuns: 500 },
    );
  });
});
