/**
 * One timer for every pending deadline and sleep of every retry() call.
 *
 * Arming a `setTimeout` per call costs several times a bare `await`, and most calls succeed
 * at once, so calls register here instead: a binary min-heap ordered by due time with a
 * single `setTimeout` armed for its head. When nothing is queued the timer is cleared, so the
 * library never keeps a process alive or leaves a timer behind. While only `unref` items wait,
 * the timer is unref'd (Node, Bun, Deno) and does not keep the process alive either.
 *
 * There is one queue per clock (the `clock` option): the system clock's, which every call
 * without one shares, and one for each clock passed in. The system clock's timers are looked up
 * on `globalThis` when used, never at import, so virtual clocks (`@sinonjs/fake-timers`)
 * installed later take effect; its time never jumps when one clock replaces another (see
 * `steadyNow`), so waits in progress keep their remaining time.
 */
import type { RetryClock } from '../types.js';
import { hostSetTimeout, steadyNow, systemClock } from './clock.js';

/** Something waiting for a moment in time; `retry()`'s per-call state implements it. */
export interface Timed {
  /** Position in the heap, or `NOT_QUEUED`. */
  slot: number;
  /** Called once when due, with the current time. */
  onDue(now: number): void;
  /** True: waiting for this item alone does not keep the process alive. Fixed while queued. */
  readonly unref?: boolean;
}

/** `slot` of an item that is not waiting. */
export const NOT_QUEUED = -1;

/** setTimeout's largest delay; longer ones overflow to 1 ms, so longer waits are taken in steps. */
export const MAX_TIMER_DELAY = 2_147_483_647;

/** `slot` of an item taken off the heap by the running timer tick and not yet called. */
const DUE = -2;

/** The timers of one clock: every pending deadline and sleep of the calls that use it. */
export interface TimerQueue {
  readonly clock: RetryClock;
  /** The clock's time. */
  now(): number;
  /** Queues `item` to have `onDue` called at `dueAt`; `Infinity` means never (nothing is queued). */
  schedule(item: Timed, dueAt: number): void;
  /** Removes `item` from the queue if it is queued; harmless otherwise. */
  unschedule(item: Timed): void;
  /** For tests: how many items wait in the heap and whether a timer is armed. */
  state(): { queued: number; timerArmed: boolean };
}

/**
 * Makes the queue of `clock`. Its state lives in this closure, not in fields: the minifier
 * shortens local names, never a class's private ones, and the engine's bundle stays small.
 */
function createTimerQueue(clock: RetryClock): TimerQueue {
  const heap: Timed[] = [];
  // The due times, on the clock's time, beside the heap (`dueTimes[i]` is `heap[i]`'s): an
  // array of numbers holds them unboxed, where a field of each item would box each in 16 bytes.
  const dueTimes: number[] = [];
  let timer: unknown;
  let timerDueAt = Infinity;
  /** Queued items that keep the process alive (not `unref`), and whether the armed timer does. */
  let refCount = 0;
  let timerRefd = false;
  // Which setTimeout armed the timer, and the clearTimeout that goes with it: the system clock's
  // globals may be replaced meanwhile. A clock passed in is its own owner.
  let timerOwner: unknown;
  let timerClear: ((handle: unknown) => void) | undefined;
  let backstop: ReturnType<typeof setTimeout> | undefined;
  /** Whether this is the system clock's queue, which follows the globals a test swaps. */
  const followsGlobals = clock === systemClock;
  // The system clock's own function, called directly: the success path reads it once.
  const now = followsGlobals ? steadyNow : (): number => clock.now();

  function schedule(item: Timed, dueAt: number): void {
    // Queued already: move it rather than queue it twice (a heap holding one item in two slots
    // would call it twice and lose track of its position). Harmless when it is not queued.
    unschedule(item);
    if (dueAt === Infinity) return;
    if (item.unref !== true) refCount++;
    place(heap.length, item, dueAt);
    armTimer();
    syncRef();
  }

  function unschedule(item: Timed): void {
    const slot = item.slot;
    item.slot = NOT_QUEUED;
    // Not queued, or due in the running tick but not called yet: it will not be (see onTimer).
    if (slot < 0) return;
    if (item.unref !== true) refCount--;
    const last = heap.pop() as Timed;
    const lastDueAt = dueTimes.pop() as number;
    if (slot < heap.length) place(slot, last, lastDueAt);
    if (heap.length === 0) disarmTimer();
    else syncRef();
    // A removed head leaves the timer armed early; it fires, finds nothing due, and re-arms.
  }

  function onTimer(): void {
    timer = undefined;
    timerDueAt = Infinity;
    clearBackstop();
    let failure: { error: unknown } | undefined;
    try {
      const t = now();
      // Take everything due first, then call it: an item that reschedules itself for "now"
      // (a zero delay) waits for the next timer turn, so a zero-delay loop yields to the event loop.
      // Stryker disable next-line ArrayDeclaration: an element that is no Timed has no slot, so the DUE check below skips it
      const due: Timed[] = [];
      while ((dueTimes[0] ?? Infinity) <= t) {
        const item = heap[0] as Timed;
        unschedule(item);
        item.slot = DUE;
        due.push(item);
      }
      for (const item of due) {
        // An earlier call of this tick may have settled this item (an abort it raised) or moved
        // it: its turn is gone, and calling it now would act on a settled call.
        if (item.slot !== DUE) continue;
        item.slot = NOT_QUEUED;
        // Each item is isolated: one that throws must not keep the others of this tick waiting.
        try {
          item.onDue(t);
        } catch (error) {
          failure ??= { error };
        }
      }
    } finally {
      armTimer();
    }
    // retry()'s items never throw; anything else that did is reported, after the others ran.
    if (failure !== undefined) throw failure.error;
  }

  function armTimer(): void {
    if (heap.length === 0) return disarmTimer();
    const headDueAt = dueTimes[0] as number;
    const owner = followsGlobals ? globalThis.setTimeout : clock;
    // Keep a timer that fires in time, unless another clock armed it: that one may never fire
    // (a virtual clock removed). No timer armed means timerDueAt is Infinity.
    if (timerOwner === owner && timerDueAt <= headDueAt) return;
    disarmTimer();
    const delay = Math.min(MAX_TIMER_DELAY, Math.max(0, Math.ceil(headDueAt - now())));
    timerOwner = owner;
    timerDueAt = headDueAt;
    if (owner === clock) {
      timerClear = (handle) => clock.clearTimeout(handle);
      timer = clock.setTimeout(onTimer, delay);
    } else {
      timerClear = globalThis.clearTimeout as (handle: unknown) => void;
      timer = (owner as typeof setTimeout)(onTimer, delay);
      if (owner !== hostSetTimeout) armBackstop(delay);
    }
    timerRefd = true;
    syncRef();
  }

  /**
   * Makes the armed timer keep the process alive exactly while a queued item that is not
   * `unref` waits: Node's and Bun's timers have `ref`/`unref`, Deno's are numbers handed to
   * `Deno.refTimer`/`Deno.unrefTimer`; elsewhere (browsers, workers) there is nothing to do.
   */
  function syncRef(): void {
    const keep = refCount > 0;
    if (timer === undefined || keep === timerRefd) return;
    timerRefd = keep;
    const handle = timer as { ref?: () => void; unref?: () => void };
    if (typeof handle === 'object') {
      (keep ? handle.ref : handle.unref)?.call(handle);
      return;
    }
    const deno = (globalThis as { Deno?: { refTimer?: (id: unknown) => void; unrefTimer?: (id: unknown) => void } }).Deno;
    (keep ? deno?.refTimer : deno?.unrefTimer)?.(timer);
  }

  function disarmTimer(): void {
    clearBackstop();
    if (timer === undefined) return;
    // Clear with the clock that armed it: the global one may belong to another clock by now.
    (timerClear as (handle: unknown) => void)(timer);
    timer = undefined;
    timerDueAt = Infinity;
  }

  /*
   * A timer armed on a virtual clock the system clock followed (@sinonjs/fake-timers installed)
   * fires only when that clock is ticked; once the clock is uninstalled it never fires, and a
   * call waiting on it would wait for ever (until some other retry() re-armed the queue). So
   * while the timer belongs to another clock than the host's, a backstop on the host's own
   * timers (the ones found when this module loaded) looks again now and then, and re-arms the
   * queue on whatever clock is current. It is unref'd where the host allows, so it never keeps a
   * process alive, and it goes with the timer. A clock passed in needs none: its owner ticks it.
   */
  function armBackstop(delay: number): void {
    if (typeof hostSetTimeout !== 'function') return;
    backstop = hostSetTimeout(onBackstop, Math.min(Math.max(delay, 1), BACKSTOP_MS));
    (backstop as { unref?: () => void }).unref?.();
  }

  function clearBackstop(): void {
    if (backstop === undefined) return;
    (hostClearTimeout as typeof clearTimeout)(backstop);
    backstop = undefined;
  }

  function onBackstop(): void {
    backstop = undefined;
    if (globalThis.setTimeout === timerOwner) {
      // Its clock is still installed: look again later.
      armBackstop(BACKSTOP_MS);
      return;
    }
    // The clock that armed the timer is gone: arm on the current one (which may be due now);
    // armTimer clears the old timer, since another clock armed it.
    armTimer();
  }

  /**
   * Puts `item`, due at `dueAt`, in the heap from slot `index` (the free slot past the end, or
   * one an item left): up past the items due after it, else down past those due before it. At
   * most one of the two moves it: an item due before the parent of `index` is due before
   * everything below it too. The slot's own entries are never read (they are stale or absent).
   */
  function place(index: number, item: Timed, dueAt: number): void {
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parentDueAt = dueTimes[parentIndex] as number;
      if (parentDueAt <= dueAt) break;
      moveTo(index, heap[parentIndex] as Timed, parentDueAt);
      index = parentIndex;
    }
    for (;;) {
      let child = 2 * index + 1;
      if (child >= heap.length) break;
      // Past the end there is no right child: it is due never.
      if ((dueTimes[child + 1] ?? Infinity) < (dueTimes[child] as number)) child++;
      const childDueAt = dueTimes[child] as number;
      if (childDueAt >= dueAt) break;
      moveTo(index, heap[child] as Timed, childDueAt);
      index = child;
    }
    moveTo(index, item, dueAt);
  }

  /** Puts `item`, due at `dueAt`, in heap slot `index`. */
  function moveTo(index: number, item: Timed, dueAt: number): void {
    heap[index] = item;
    dueTimes[index] = dueAt;
    item.slot = index;
  }

  return { clock, now, schedule, unschedule, state: () => ({ queued: heap.length, timerArmed: timer !== undefined }) };
}

const hostClearTimeout: typeof clearTimeout | undefined = globalThis.clearTimeout;
/** How often, at most, the backstop looks whether the clock that armed the timer is gone. */
const BACKSTOP_MS = 1000;

/** The queue of the system clock, shared by every call without a `clock` option. */
export const SYSTEM_TIMERS: TimerQueue = /* @__PURE__ */ createTimerQueue(systemClock);
const queues = /* @__PURE__ */ new WeakMap<RetryClock, TimerQueue>();

/** The queue of `clock`: one per clock, made at its first use, gone with the clock. */
export function timersOf(clock: RetryClock): TimerQueue {
  if (clock === systemClock) return SYSTEM_TIMERS;
  let queue = queues.get(clock);
  if (queue === undefined) {
    queue = createTimerQueue(clock);
    queues.set(clock, queue);
  }
  return queue;
}

/** For tests: how many items wait in `clock`'s queue (the system clock's by default) and whether a timer is armed. */
export function queueState(clock: RetryClock = systemClock): { queued: number; timerArmed: boolean } {
  return timersOf(clock).state();
}
