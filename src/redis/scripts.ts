/**
 * What the Redis gate asks of Redis: two fixed Lua scripts, each run on one key (so Redis Cluster
 * sends it to the key's node), and the checks on what comes back. A pause is kept as the moment it
 * ends, in milliseconds on Redis's clock (`TIME`), never on a host's: hosts disagree about the
 * time, and a script reads the one clock they all share in the same step as the key.
 */
import { mustError } from '../util/check.js';

// Lua numbers are doubles: milliseconds since 1970 (about 1.8e12) are exact in them. `TYPE` first,
// so that a key of another type (garbage someone wrote) is read as no pause instead of failing the
// script; SET replaces it whatever it is.
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = nil
if redis.call('TYPE', KEYS[1]).ok == 'string' then cur = tonumber(redis.call('GET', KEYS[1])) end
`;

/**
 * Extends the pause atomically: ARGV = the pause in ms (already cut to the writer's `maxHoldMs`),
 * the end the writer meant on Redis's clock, that `maxHoldMs`, the channel. The new end is
 * now + pause, but never past the end the writer meant: a command a client held in its offline
 * queue while Redis was down and sends on reconnection then adds only what is left of its pause,
 * not a fresh one counted from the reconnection. A current end further off than `maxHoldMs` is
 * garbage and is replaced. Publishes only an extension. Replies {now, the end in force}.
 */
export const HOLD_SCRIPT = `${NOW}local want = now + tonumber(ARGV[1])
local meant = tonumber(ARGV[2])
if meant < want then want = meant end
if cur ~= nil and cur >= want and cur <= now + tonumber(ARGV[3]) then return {now, cur} end
if want <= now then return {now, 0} end
redis.call('SET', KEYS[1], want, 'PX', want - now)
redis.call('PUBLISH', ARGV[4], now .. ' ' .. want)
return {now, want}
`;

/** Reads the pause in force: replies {now, the key's text or '' when there is none}. */
export const READ_SCRIPT = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then return {now, ''} end
if kind ~= 'string' then return {now, 'a ' .. kind} end
return {now, redis.call('GET', KEYS[1])}
`;

/** A pause as Redis gave it: the moment it ends and Redis's time when it said so, both in ms since 1970. */
export interface RedisPause {
  readonly now: number;
  /** 0 when no pause is in force. */
  readonly end: number;
}

/** Milliseconds since 1970 as Redis's TIME gives them: a safe integer > 0. */
const isMoment = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;

/** An integer as a reply or a message carries it (a number, a string of digits, a bigint). */
function integerOf(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && /^-?\d{1,16}$/.test(value)) return Number(value);
  // A Buffer (a client in buffer mode) reads as its text.
  if (value instanceof Uint8Array) return integerOf(new TextDecoder().decode(value));
  return Number.NaN;
}

/**
 * The {now, end} reply of either script: Redis's time, and the end as the key held it (checked by
 * {@link pauseEndOf}, after the time is taken for the clock offset). A TypeError naming the reply
 * when it is not one: no Redis that ran the script sends anything else, so another reply is a
 * proxy's or a client's fault.
 */
export function replyOf(where: string, reply: unknown): { readonly now: number; readonly end: unknown } {
  const at = Array.isArray(reply) && reply.length === 2 ? integerOf(reply[0]) : Number.NaN;
  if (!isMoment(at)) throw mustError(`${where}: the script's reply`, "be [Redis's TIME in ms, the pause's end]", reply);
  return { now: at, end: (reply as unknown[])[1] };
}

/** The end of a pause as the key held it: 0 for none ('' or 0), else a moment (a TypeError naming the value). */
export function pauseEndOf(where: string, end: unknown): number {
  return end === '' || end === 0 ? 0 : endOf(where, end);
}

/** A message on the gate's channel, `"<now> <end>"`; a TypeError naming it when it is not one. */
export function pauseOfMessage(where: string, text: string): RedisPause {
  const [now, end, ...rest] = text.split(' ');
  const at = integerOf(now);
  if (rest.length > 0 || !isMoment(at)) throw mustError(`${where}: a message`, 'be "<Redis time in ms> <end in ms>"', text);
  return { now: at, end: endOf(where, end) };
}

/** The end of a pause read from Redis: a moment, else a TypeError that names the value. */
function endOf(where: string, value: unknown): number {
  const end = integerOf(value);
  if (!isMoment(end)) throw mustError(`${where}: the pause read from Redis`, 'be the moment it ends, in ms since 1970', value);
  return end;
}

/**
 * How long the pause has left, at most `maxHoldMs`: what a value read from Redis may hold this
 * process for. `now` is Redis's time when it was read. A pause longer than `maxHoldMs` (another
 * process's longer cap, or garbage) is cut to it, and `report` is told.
 */
export function boundedLeft(where: string, pause: RedisPause, maxHoldMs: number, report: (error: Error) => void): number {
  if (pause.end === 0) return 0;
  const left = pause.end - pause.now;
  // One millisecond of slack: the writer rounds its pause up to a whole millisecond.
  if (left > maxHoldMs + 1) {
    report(
      mustError(`${where}: the pause read from Redis`, `end within maxHoldMs (${maxHoldMs} ms); it was cut to it`, `${left} ms`, true),
    );
    return maxHoldMs;
  }
  return left;
}
