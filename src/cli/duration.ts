/**
 * Durations on the command line: `250ms`, `1.5s`, `2m`, `1h`. A unit is required because a
 * bare `90` reads as seconds to some people (sleep, timeout) and as milliseconds to others
 * (this library's `*Ms` options); guessing wrong turns a 90 s deadline into 90 ms.
 */
import { describe } from '../util/check.js';

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Milliseconds in a duration such as `250ms`, `1.5s`, `2m` or `1h`. `0` alone is accepted (it
 * is zero in every unit); any other number needs a unit. Throws a `RangeError` describing
 * the text otherwise.
 *
 * @example
 * parseDuration('1.5s'); // 1500
 * parseDuration('90');   // throws: "90" has no unit: write 90s or 90ms
 */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h)?$/.exec(text.trim());
  if (match === null) {
    throw new RangeError(`expected a duration such as 250ms, 1.5s or 2m, got ${describe(text)}`);
  }
  const amount = Number(match[1]);
  const unit = match[2];
  if (unit === undefined) {
    if (amount === 0) return 0;
    throw new RangeError(`${describe(text)} has no unit: write ${match[1]}s or ${match[1]}ms`);
  }
  const ms = amount * (UNIT_MS[unit] as number);
  if (!Number.isFinite(ms)) throw new RangeError(`duration ${describe(text)} is too large`);
  // 1.1 * 1000 is 1100.0000000000002 in binary floating point; microseconds are plenty.
  return Math.round(ms * 1000) / 1000;
}

/**
 * A short human form of a duration in milliseconds: whole milliseconds below one second
 * (`250ms`), seconds with up to three decimals above (`1.5s`, `64s`).
 *
 * @example
 * formatDuration(250);   // '250ms'
 * formatDuration(1234.5); // '1.235s'
 */
export function formatDuration(ms: number): string {
  const wholeMs = Math.round(ms);
  if (wholeMs < 1000) return `${wholeMs}ms`;
  return `${Number((ms / 1000).toFixed(3))}s`;
}
