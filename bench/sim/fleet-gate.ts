// Scenario: a 429 storm on a fleet. `processes` processes of one service each receive calls at
// `callsPerSecond` (evenly spread, each process's offset at random) for `arrivalMs`, and send them
// to one API that admits `limitPerSecond` requests per one-second window and answers the rest 429
// with `Retry-After` = the seconds left in it. Each call is the real retry() with the defaults'
// full-jitter backoff. Compared:
// - each process with a gate of its own (`createRetryAfterGate()`): a process learns of the limit
//   only from a 429 of its own, so every process pays for it;
// - one gate shared by the fleet (tenacious/redis): each process still reads its own copy, and a
//   pause one process hears of reaches each of the others after a propagation delay, two network
//   hops (to Redis, then pub/sub to that process), each |Normal(10 ms, 2 ms)| as in the other
//   scenarios, and is held there for what is left of it.
// Measured: requests sent, 429 answers, time to drain.
import { type RetryGate, createRetryAfterGate, retry } from '../../src/index.js';
import { networkDelay, seededRandom, streamSeed } from './random.js';
import { type VirtualClock, installVirtualClock } from './virtual-time.js';

export interface FleetGateConfig {
  readonly processes: number;
  /** Calls each process receives per second. */
  readonly callsPerSecond: number;
  readonly arrivalMs: number;
  /** Requests the API admits per one-second window, from the whole fleet. */
  readonly limitPerSecond: number;
  readonly seed: number;
}

export interface FleetGateResult {
  readonly requests: number;
  readonly tooMany: number;
  /** When the last call succeeded, in ms since the first arrived. */
  readonly drainMs: number;
}

/**
 * One gate per process, each of which passes a hold on to the others' after a propagation delay:
 * what `createRedisGate()` does, with Redis and pub/sub as the delay.
 */
function sharedGates(clock: VirtualClock, count: number, seed: number): RetryGate[] {
  const locals = Array.from({ length: count }, (_, p) => createRetryAfterGate({ rng: seededRandom(streamSeed(seed, 100 + p)) }));
  const hops = seededRandom(streamSeed(seed, 3));
  return locals.map((local) => ({
    waitMs: local.waitMs,
    hold(ms: number): void {
      local.hold(ms);
      const pause = Math.min(ms, local.maxHoldMs);
      for (const other of locals) {
        if (other === local) continue;
        const delay = networkDelay(hops) + networkDelay(hops);
        void clock.sleep(delay).then(() => {
          if (pause > delay) other.hold(pause - delay);
        });
      }
    },
  }));
}

/** Runs the storm once, with a gate per process or one shared by the fleet. */
export async function fleetGateStorm(config: FleetGateConfig, shared: boolean): Promise<FleetGateResult> {
  const { processes, callsPerSecond, arrivalMs, limitPerSecond, seed } = config;
  const clock = installVirtualClock();
  try {
    const net = seededRandom(streamSeed(seed, 0));
    const starts = seededRandom(streamSeed(seed, 4));
    const gates: RetryGate[] = shared
      ? sharedGates(clock, processes, seed)
      : Array.from({ length: processes }, (_, p) => createRetryAfterGate({ rng: seededRandom(streamSeed(seed, 100 + p)) }));
    const admitted = new Map<number, number>(); // window → requests admitted in it
    let requests = 0;
    let tooMany = 0;
    let lastDone = 0;
    const send = async (): Promise<string> => {
      await clock.sleep(networkDelay(net));
      requests++;
      const now = clock.now();
      const window = Math.floor(now / 1000);
      const used = admitted.get(window) ?? 0;
      if (used < limitPerSecond) admitted.set(window, used + 1);
      else tooMany++;
      await clock.sleep(networkDelay(net)); // the answer's way back
      if (used < limitPerSecond) return 'ok';
      const seconds = Math.ceil((1000 * (window + 1) - now) / 1000);
      throw Object.assign(new Error('HTTP 429 Too Many Requests'), { status: 429, headers: { 'retry-after': String(seconds) } });
    };
    const perProcess = Math.round((callsPerSecond * arrivalMs) / 1000);
    const calls = processes * perProcess;
    let done = 0;
    gates.forEach((gate, p) => {
      const options = Object.freeze({
        rng: seededRandom(streamSeed(seed, 1000 + p)),
        deadlineMs: 600_000,
        backoff: { initialDelayMs: 100, maxDelayMs: 10_000 },
        gate,
      });
      const offset = Math.floor(starts() * (1000 / callsPerSecond));
      for (let c = 0; c < perProcess; c++) {
        void clock.sleep(offset + Math.floor((c * 1000) / callsPerSecond)).then(() =>
          retry(send, options).then(() => {
            done++;
            lastDone = clock.now();
          }),
        );
      }
    });
    await clock.runUntil(() => done === calls);
    return { requests, tooMany, drainMs: lastDone };
  } finally {
    clock.uninstall();
  }
}

/** Both runs, a gate per process first. */
export async function runFleetGate(config: FleetGateConfig): Promise<{ own: FleetGateResult; shared: FleetGateResult }> {
  return { own: await fleetGateStorm(config, false), shared: await fleetGateStorm(config, true) };
}

/** The line `npm run sim` prints and docs/fleet.md shows. */
export function fleetGateLine(config: FleetGateConfig, run: { own: FleetGateResult; shared: FleetGateResult }): string {
  const int = (n: number): string => n.toLocaleString('en-US');
  return `gate across ${config.processes} processes: 429s ${int(run.own.tooMany)} -> ${int(run.shared.tooMany)}, requests ${int(run.own.requests)} -> ${int(run.shared.requests)}`;
}
