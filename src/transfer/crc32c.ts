/**
 * CRC32C (Castagnoli) and the `x-goog-hash` header that carries it. Google's clients check a
 * download against the object's checksum; a resumed or restarted download is where bytes can
 * go wrong without any error (a stitched range from another version, a proxy's truncation), so
 * the fetch layer checksums what it delivered and compares. No runtime dependency: the table-
 * driven function below is all CRC32C needs, and base64 goes through `atob`, which browsers,
 * Deno, Bun, workers and Node ≥ 16 all have (Node's `Buffer` would tie the core to Node).
 */

import { describe } from '../util/check.js';

/** CRC32C's polynomial 0x1EDC6F41, bit-reversed: the CRC is computed least significant bit first. */
const POLYNOMIAL = 0x82f63b78;

/*
 * Slicing-by-8: table k (k = 0…7) holds the CRC of a byte followed by k zero bytes, so eight
 * input bytes are folded with eight lookups instead of eight dependent shift-and-lookup steps.
 * 8 KiB of tables, built on first use so that importing the library costs nothing for those who
 * never download.
 */
let tables: Uint32Array | undefined;

function buildTables(): Uint32Array {
  const table = new Uint32Array(8 * 256);
  // Stryker disable next-line EqualityOperator: a 257th entry lands on table 1's first, which the loop below overwrites
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ POLYNOMIAL : crc >>> 1;
    table[byte] = crc;
  }
  // Stryker disable next-line EqualityOperator: a 257th byte is table 1's 0, whose CRCs are 0, the values already there
  for (let byte = 0; byte < 256; byte++) {
    let crc = table[byte]!;
    // Stryker disable next-line EqualityOperator: a ninth table would lie past the array's end, where writes are dropped
    for (let k = 1; k < 8; k++) {
      crc = table[crc & 0xff]! ^ (crc >>> 8);
      table[k * 256 + byte] = crc;
    }
  }
  return table;
}

/**
 * The CRC32C (Castagnoli, the checksum Cloud Storage keeps for every object) of `bytes`, as an
 * unsigned 32-bit number. Incremental: pass the CRC of everything before `bytes` as `previous`,
 * so a download is checksummed chunk by chunk as it streams, without holding it:
 * `crc32c(b, crc32c(a))` equals `crc32c(a + b)`. Throws a `RangeError` when `previous` is not an
 * unsigned 32-bit integer, since a wrong running value would make every comparison fail.
 *
 * @example
 * crc32c(new TextEncoder().encode('123456789')); // 0xe3069283
 *
 * let crc = 0;
 * for await (const chunk of response.body!) crc = crc32c(chunk, crc);
 */
export function crc32c(bytes: Uint8Array, previous = 0): number {
  if (!(Number.isInteger(previous) && previous >= 0 && previous <= 0xffffffff)) {
    throw new RangeError(`crc32c: previous must be an unsigned 32-bit integer (a crc32c result), got ${describe(previous)}`);
  }
  tables ??= buildTables();
  const t = tables;
  // The CRC is kept inverted while bytes are folded in (CRC32C's initial value and final XOR
  // are both 0xFFFFFFFF), which is what lets a finished CRC resume as `previous`.
  let crc = ~previous;
  let i = 0;
  const length = bytes.length;
  // Stryker disable next-line ArithmeticOperator,ConditionalExpression: the byte-at-a-time loop below finishes whatever this one leaves, so only the speed differs
  for (const whole = length - (length % 8); i < whole; i += 8) {
    const low = crc ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    crc =
      t[7 * 256 + (low & 0xff)]! ^
      t[6 * 256 + ((low >>> 8) & 0xff)]! ^
      t[5 * 256 + ((low >>> 16) & 0xff)]! ^
      t[4 * 256 + (low >>> 24)]! ^
      t[3 * 256 + bytes[i + 4]!]! ^
      t[2 * 256 + bytes[i + 5]!]! ^
      t[256 + bytes[i + 6]!]! ^
      t[bytes[i + 7]!]!;
  }
  for (; i < length; i++) crc = t[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

/** The checksums an `x-goog-hash` header carries; a field is absent when the header has no valid one. */
export interface GoogHash {
  /** The object's CRC32C as an unsigned 32-bit number, comparable with {@link crc32c}'s result. */
  crc32c?: number;
  /** The object's MD5 in base64, as the header has it (24 characters for 16 bytes). */
  md5?: string;
}

/*
 * Cloud Storage writes crc32c as the base64 of its 4 big-endian bytes and md5 as the base64 of
 * its 16 bytes, both padded (storage-testbench: `base64.b64encode(struct.pack(">I", crc32c))`).
 * Anything else is not a checksum we can trust to compare against.
 */
const CRC32C_BASE64 = /^[A-Za-z0-9+/]{6}==$/;
const MD5_BASE64 = /^[A-Za-z0-9+/]{22}==$/;

/**
 * Reads the checksums of an `x-goog-hash` header value, such as
 * `crc32c=yZRlqg==, md5=XrY7u+Ae7tCTyyK7j1rNww==` (those of an object holding `hello world`).
 * Cloud Storage sends one header per hash, which `Headers.get` joins with `", "`;
 * storage-testbench sends one value joined with `","`: both read the same. Never throws, since
 * the value comes from a server: a field that is missing, malformed, of the wrong length, or
 * given twice with different values is left out, so the caller skips that check rather than
 * failing a good download on a header it cannot read. Unknown hashes are ignored.
 *
 * @example
 * parseGoogHash('crc32c=yZRlqg==, md5=XrY7u+Ae7tCTyyK7j1rNww=='); // { crc32c: 0xc99465aa, md5: 'XrY7u+Ae7tCTyyK7j1rNww==' }
 * const { crc32c: expected } = parseGoogHash(response.headers.get('x-goog-hash'));
 * parseGoogHash(null); // {}
 */
export function parseGoogHash(header: string | null | undefined): GoogHash {
  const found: GoogHash = {};
  if (typeof header !== 'string') return found;
  const crcs = new Set<number | undefined>();
  const md5s = new Set<string | undefined>();
  for (const part of header.split(',')) {
    const equals = part.indexOf('=');
    // Stryker disable next-line EqualityOperator: a part that begins with "=" has an empty name, which no hash has
    if (equals < 0) continue;
    // Split at the first '=' only: base64 padding is '=' too.
    const name = part.slice(0, equals).trim().toLowerCase();
    const value = part.slice(equals + 1).trim();
    if (name === 'crc32c') crcs.add(CRC32C_BASE64.test(value) ? bigEndian(atob(value)) : undefined);
    else if (name === 'md5') md5s.add(MD5_BASE64.test(value) ? value : undefined);
  }
  // Two different values (or a bad one beside a good one) leave no way to know which is the
  // object's: checking against the wrong one would fail a good download.
  const crc = only(crcs);
  const md5 = only(md5s);
  if (crc !== undefined) found.crc32c = crc;
  if (md5 !== undefined) found.md5 = md5;
  return found;
}

function only<T>(values: ReadonlySet<T>): T | undefined {
  return values.size === 1 ? values.values().next().value : undefined;
}

/** The unsigned number of 4 bytes given as a binary string (what `atob` returns), most significant first. */
function bigEndian(binary: string): number {
  return ((binary.charCodeAt(0) << 24) | (binary.charCodeAt(1) << 16) | (binary.charCodeAt(2) << 8) | binary.charCodeAt(3)) >>> 0;
}
