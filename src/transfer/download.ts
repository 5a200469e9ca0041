/**
 * The integrity rule of a resumed download: the caller gets the bytes of one version of the
 * object, exactly, or an error. This module holds what a download has received and judges every
 * answer to a request for the rest against the first response, without touching a stream or a
 * clock: what pins the version (generation, strong ETag, Last-Modified), where each part must
 * start and end, the object's whole length, and (Cloud Storage) its CRC32C. The readers in
 * fetch/resume.ts feed it the bytes they hand over and do what it says.
 */
import { HttpStatusError, ResumeError } from '../errors.js';
import { crc32c, parseGoogHash } from './crc32c.js';

/** What a download has received, and what it may take next. */
export interface DownloadProgress {
  /** Bytes received of the current version, from its first byte. */
  readonly received: number;
  /**
   * True when something in the first response pins its version (generation, strong ETag or
   * Last-Modified). Without it, bytes already handed over cannot be continued: the rest might
   * be of another version.
   */
  readonly pinned: boolean;
  /** The headers of the request for the rest, and the generation to put in its query. */
  rest(): { headers: Record<string, string>; generation: string | undefined };
  /**
   * Judges the answer to {@link rest}: `'restart'` when it is the whole object again from byte 0
   * (allowed only when `restartable`), `'part'` when its body is the part that continues,
   * `'end'` when it says the object ends at the bytes received (a 416 to a download whose length
   * no answer stated: its body is not the object's, and nothing follows). Throws a ResumeError
   * for what asking again cannot fix, an HttpStatusError for an error status (for the retry
   * policy to judge). The caller cancels the answer's body when this throws or says `'end'`.
   */
  answer(res: Response, method: string, restartable: boolean): Answer;
  /** Counts bytes about to be handed over; throws before any byte past the part's end. */
  take(bytes: Uint8Array): void;
  /**
   * The current body ended cleanly. `'complete'`: the whole object was received (after a resume,
   * its CRC32C checked, when the first response gave one); `'more'`: the part ended where its
   * Content-Range said, short of the whole or of an object whose length is unknown (ask for the
   * rest); `'truncated'`: it ended before its own declared end (a break, to be resumed like one).
   */
  ended(): 'complete' | 'more' | 'truncated';
}

/** What an answer for the rest is: see {@link DownloadProgress.answer}. */
export type Answer = 'restart' | 'part' | 'end';

/** What pins a version: every validator the first response carried. */
interface Version {
  readonly etag: string | undefined;
  readonly lastModified: string | undefined;
  readonly generation: string | undefined;
}

const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+|\*)$/;
/** A 416's Content-Range: the object's length. */
const UNSATISFIED_RANGE = /^bytes \*\/(\d+)$/;

function lengthOf(res: Response): number | undefined {
  const length = res.headers.get('content-length');
  // An absent header reads as "null", which is no length either.
  return /^\d+$/.test(`${length}`) ? Number(length) : undefined;
}

function versionOf(res: Response): Version {
  return {
    etag: res.headers.get('etag') ?? undefined,
    lastModified: res.headers.get('last-modified') ?? undefined,
    generation: res.headers.get('x-goog-generation') ?? undefined,
  };
}

/** A weak ETag promises equivalent content, not the same bytes: it pins nothing for a range. */
const strongEtag = (v: Version): string | undefined => (v.etag !== undefined && !v.etag.startsWith('W/') ? v.etag : undefined);

/** Whether a content-coding header (absent: `null`) leaves the bytes as they are. */
export const identity = (encoding: string | null): boolean => encoding === null || /^\s*identity\s*$/i.test(encoding);

/**
 * The object's CRC32C from the first response's `x-goog-hash`, unless Cloud Storage decompressed
 * the object on the way (`x-goog-stored-content-encoding: gzip`): the hash is of the stored bytes.
 */
function expectedCrc(first: Response): number | undefined {
  if (!identity(first.headers.get('x-goog-stored-content-encoding'))) return undefined;
  return parseGoogHash(first.headers.get('x-goog-hash')).crc32c;
}

/** Starts tracking the download whose first answer is `first` (a 200 with a body). */
export function trackDownload(first: Response): DownloadProgress {
  let version = versionOf(first);
  let total = lengthOf(first);
  // Exclusive end of the part being read, when its length is declared.
  let partEnd = total;
  let received = 0;
  const expected = expectedCrc(first);
  let crc = 0;
  let resumed = false;

  const pinned = (): boolean => version.generation !== undefined || strongEtag(version) !== undefined || version.lastModified !== undefined;
  const badRange = (res: Response, why: string): ResumeError =>
    new ResumeError(
      'bad-range',
      received,
      `asked for bytes ${received}- of ${total ?? '?'}, got HTTP ${res.status} with Content-Range ${JSON.stringify(res.headers.get('content-range'))}: ${why}`,
    );

  /** Throws when `res` carries a validator that differs from the first response's. */
  const checkSameVersion = (res: Response): void => {
    const other = versionOf(res);
    const differs = (key: keyof Version): boolean => version[key] !== undefined && other[key] !== undefined && other[key] !== version[key];
    const changed = (['etag', 'generation', 'lastModified'] as const).filter(differs);
    if (changed.length > 0) {
      const names = { etag: 'ETag', generation: 'generation', lastModified: 'Last-Modified' };
      throw new ResumeError(
        'changed',
        received,
        `the object changed since the download began (${changed.map((key) => `${names[key]} ${version[key]} → ${other[key]}`).join(', ')})`,
      );
    }
  };

  /** A 200 to a range request: the whole object again, or not acceptable. */
  const restart = (res: Response, restartable: boolean): 'restart' => {
    if (!restartable) {
      throw new ResumeError(
        'range-ignored',
        received,
        `the server ignored "Range: bytes=${received}-" and sent the whole body again (HTTP 200), after part of it had been read`,
      );
    }
    const length = lengthOf(res);
    if (total !== undefined && length !== undefined && length !== total) {
      throw badRange(res, `a 200 of ${length} bytes is not the ${total}-byte object`);
    }
    if (!pinned()) version = versionOf(res);
    total ??= length;
    partEnd = total;
    received = 0;
    crc = 0;
    return 'restart';
  };

  /** A 206 (or a 200 naming its range): it must start at `received`, end within the object, and say the object's length. */
  const part = (res: Response): 'part' => {
    // Headers trims values; an absent one reads as "null", which matches nothing.
    const range = CONTENT_RANGE.exec(`${res.headers.get('content-range')}`);
    if (range === null) throw badRange(res, 'no valid Content-Range');
    const [start, end] = [Number(range[1]), Number(range[2])];
    const whole = range[3] === '*' ? total : Number(range[3]);
    if (start !== received) throw badRange(res, `it starts at ${start}`);
    if (end < start || end >= (whole ?? Infinity)) throw badRange(res, 'its end is not within the object');
    if (total !== undefined && whole !== total) throw badRange(res, `the object is ${whole} bytes, not ${total}`);
    const length = lengthOf(res);
    if (length !== undefined && length !== end - start + 1) throw badRange(res, `its Content-Length is ${length}`);
    total = whole;
    partEnd = end + 1;
    return 'part';
  };

  /**
   * A 416 to `Range: bytes=<received>-` of an object whose length no answer stated: the object
   * ends at `received`, when the 416 says so (`Content-Range: bytes *\/<received>`) or, saying
   * nothing, answers a request whose validator makes a changed object a 412 instead.
   */
  const end = (res: Response): 'end' => {
    const stated = res.headers.get('content-range');
    if (stated === null) {
      if (!pinned()) throw badRange(res, 'a 416 that names no length ends nothing when no validator pins the version');
    } else if (Number(UNSATISFIED_RANGE.exec(stated)?.[1]) !== received) {
      throw badRange(res, `a 416 ends the object only where the bytes received end, at ${received}`);
    }
    total = received;
    partEnd = received;
    return 'end';
  };

  return {
    get received() {
      return received;
    },
    get pinned() {
      return pinned();
    },
    rest() {
      const headers: Record<string, string> = { range: `bytes=${received}-` };
      const { generation, lastModified } = version;
      // Cloud Storage pins the version by its generation (in the query); elsewhere the strong
      // ETag, else the modification date, makes a changed resource answer 412 instead of bytes.
      const etag = strongEtag(version);
      if (generation === undefined) {
        if (etag !== undefined) headers['if-match'] = etag;
        else if (lastModified !== undefined) headers['if-unmodified-since'] = lastModified;
      }
      return { headers, generation };
    },
    answer(res, method, restartable) {
      if (res.status === 412) {
        throw new ResumeError('changed', received, 'the object changed since the download began (HTTP 412 to the resume request)');
      }
      // Every validator the answer carries is compared, since a cache may ignore the
      // precondition (RFC 9110 §13.1.4) and answer with bytes of another version.
      if (res.status === 416 && total === undefined) {
        checkSameVersion(res);
        resumed = true;
        return end(res);
      }
      if (res.status >= 400) throw new HttpStatusError(res, method);
      checkSameVersion(res);
      if (res.body === null || !identity(res.headers.get('content-encoding'))) throw badRange(res, 'no body of identity-encoded bytes');
      resumed = true;
      // A 200 that names its range is that range, not the whole object: Google's storage
      // testbench answers a ranged GET so after a broken stream. The range is held to a 206's rules.
      if (res.status === 200 && res.headers.has('content-range')) return part(res);
      if (res.status === 200) return restart(res, restartable);
      if (res.status !== 206) throw badRange(res, 'neither 206 nor 200');
      return part(res);
    },
    take(bytes) {
      const left = (partEnd ?? Infinity) - received;
      if (bytes.byteLength > left) {
        throw new ResumeError('bad-range', received, `the server sent more than the ${left} bytes left of its range`);
      }
      received += bytes.byteLength;
      // Stryker disable next-line ConditionalExpression: without an expected CRC none is compared; the guard only saves the time
      if (expected !== undefined) crc = crc32c(bytes, crc);
    },
    ended() {
      // An undeclared end is never short of.
      if (received < (partEnd ?? 0)) return 'truncated';
      if (received < (total ?? 0)) return 'more';
      // A part of an object of unknown length (`bytes N-M/*`) may have been cut short by the
      // server (RFC 9110 §15.3.7): only a 416 to the next range says the object ends here.
      if (total === undefined && partEnd !== undefined) return 'more';
      if (resumed && expected !== undefined && crc !== expected) {
        throw new ResumeError(
          'checksum',
          received,
          `the CRC32C of the bytes received (${crc.toString(16).padStart(8, '0')}) is not the object's (${expected.toString(16).padStart(8, '0')}, from x-goog-hash)`,
        );
      }
      return 'complete';
    },
  };
}
