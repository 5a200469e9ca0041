/**
 * proto3 JSON durations (`google.protobuf.Duration` as JSON): seconds with up to nine decimals
 * and an `s`, such as `"0.1s"`, `".5s"` or `"1.000340012s"`. gRPC service configs write every
 * backoff and timeout this way. Pure.
 *
 * @internal
 */

/**
 * A duration split as protobuf keeps it: whole seconds and nanoseconds (0 to 999 999 999).
 *
 * @example
 * const d: ProtoDuration = { seconds: 1, nanos: 340_012 }; // "1.000340012s"
 */
export interface ProtoDuration {
  readonly seconds: number;
  readonly nanos: number;
}

/** The largest `seconds` protobuf allows: 10 000 years. */
const MAX_SECONDS = 315_576_000_000;

/**
 * Digits, then optionally a point and one to nine digits, then `s`; at least one digit in all.
 * A sign, an exponent, spaces or another unit are not proto3 JSON. Negative durations exist in
 * protobuf but mean nothing as a wait or a timeout, so no sign is read.
 */
const DURATION = /^(\d*)(?:\.(\d{1,9}))?s$/;

/**
 * Reads a proto3 JSON duration, or `undefined` when `text` is not one (or is past protobuf's
 * range of 315 576 000 000 s).
 *
 * @example
 * readProtoDuration('1.5s'); // { seconds: 1, nanos: 500_000_000 }
 * readProtoDuration('100ms'); // undefined
 */
export function readProtoDuration(text: unknown): ProtoDuration | undefined {
  if (typeof text !== 'string') return undefined;
  const match = DURATION.exec(text);
  if (match === null) return undefined;
  const [, whole, fraction] = match; // (\d*) always matches: whole is '' without digits
  if (whole === '' && fraction === undefined) return undefined; // a bare "s" or ".s"
  const seconds = Number(whole); // Number('') is 0
  if (seconds > MAX_SECONDS) return undefined;
  return { seconds, nanos: fraction === undefined ? 0 : Number(fraction.padEnd(9, '0')) };
}

/**
 * A duration in milliseconds, nanoseconds kept as a fraction (`"1.000340012s"` is 1000.340012).
 *
 * @example
 * durationMs({ seconds: 0, nanos: 100_000_000 }); // 100
 */
export function durationMs(duration: ProtoDuration): number {
  return duration.seconds * 1000 + duration.nanos / 1e6;
}

/**
 * The canonical proto3 JSON text of a duration: no fraction, or three, six or nine digits, as
 * protobuf itself prints them.
 *
 * @example
 * formatProtoDuration({ seconds: 1, nanos: 500_000_000 }); // "1.500s"
 */
export function formatProtoDuration(duration: ProtoDuration): string {
  const { seconds, nanos } = duration;
  if (nanos === 0) return `${seconds}s`;
  const digits = String(nanos).padStart(9, '0');
  const kept = nanos % 1_000_000 === 0 ? 3 : nanos % 1000 === 0 ? 6 : 9;
  return `${seconds}.${digits.slice(0, kept)}s`;
}
