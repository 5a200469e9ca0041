/**
 * One timer for every pending deadline and sleep of every retry() call.
 *
 * Arming a `setTimeout` per call costs several times a bare `await`, and most calls succeed
 * at once, so calls register here instead: a binary min-heap ordered by due time with a
 * single `setTimeout` armed for its head. When nothing is queued the timer is cleared, so the
 * library never keeps a process alive or leaves a timer behind.
 *
 * A first attempt is not put in the heap right away: it is parked in `fresh` and promoted one
 * microtask later only if it is still running. Attempts that settle at once (the common case)
 * thus never touch the heap, the clock or a timer.
 *
 * Timers and the clock are looked up on `globalThis` at each use, so virtual clocks
 * (`@sinonjs/fake-timers`) installed after import take effect.
 */

/** Something waiting for a moment in time; `retry()`'s per-call state implements it. */
export interface Timed {
  /** When it is due, on the `now()` clock. */
  dueAt: number;
  /** Position in the heap; `NOT_QUEUED`, `FRESH` (parked, see `watchFresh`) or an index. */
  slot: number;
  /** Called once when due, with the current time. */
  onDue(now: number): void;
  /** Called for a parked first attempt still running after a microtask: returns its due time. */
  onPromote(now: number): number;
}

/** `slot` of an item that is not waiting. */
export const NOT_QUEUED = -1;
/** `slot` of a first attempt parked by `watchFresh`. */
export const FRESH = -2;

/** setTimeout's largest delay; longer ones would overflow to 1 ms. */
const MAX_TIMER_DELAY = 2_147_483_647;

const heap: Timed[] = [];
const fresh: Timed[] = [];
let promotionQueued = false;
let timer: unknown;
let timerDueAt = Infinity;
let timerOwner: typeof setTimeout | undefined;

/** Monotonic milliseconds (faked by `@sinonjs/fake-timers`). */
export function now(): number {
  return globalThis.performance.now();
}

/** Queues `item` to have `onDue` called at `dueAt`. */
export function schedule(item: Timed, dueAt: number): void {
  item.dueAt = dueAt;
  if (dueAt === Number.POSITIVE_INFINITY) {
    item.slot = NOT_QUEUED; // no limit: nothing to wait for
    return;
  }
  item.slot = heap.length;
  heap.push(item);
  siftUp(item.slot);
  if (heap[0] === item) armTimer();
}

/** Removes `item` from the queue if it is queued or parked; harmless otherwise. */
export function unschedule(item: Timed): void {
  const slot = item.slot;
  item.slot = NOT_QUEUED;
  if (slot < 0) return; // parked items are skipped at promotion
  const last = heap.pop() as Timed;
  if (slot < heap.length) {
    heap[slot] = last;
    last.slot = slot;
    siftDown(slot);
    siftUp(last.slot);
  }
  if (heap.length === 0) disarmTimer();
  // A removed head leaves the timer armed early; it fires, finds nothing due, and re-arms.
}

/**
 * Parks a first attempt without reading the clock. One microtask later, every parked item
 * still parked is asked for its due time (`onPromote`) and scheduled.
 */
export function watchFresh(item: Timed): void {
  item.slot = FRESH;
  fresh.push(item);
  if (!promotionQueued) {
    promotionQueued = true;
    queueMicrotask(promoteFresh);
  }
}

function promoteFresh(): void {
  promotionQueued = false;
  let t: number | undefined;
  for (const item of fresh) {
    if (item.slot !== FRESH) continue;
    t ??= now();
    schedule(item, item.onPromote(t));
  }
  fresh.length = 0;
}

function onTimer(): void {
  timer = undefined;
  timerDueAt = Infinity;
  try {
    const t = now();
    // Take everything due first, then call it: an item that reschedules itself for "now"
    // (a zero delay) waits for the next timer turn instead of spinning here.
    const due: Timed[] = [];
    while (heap.length > 0 && (heap[0] as Timed).dueAt <= t) {
      const item = heap[0] as Timed;
      unschedule(item);
      due.push(item);
    }
    for (const item of due) item.onDue(t);
  } finally {
    armTimer();
  }
}

function armTimer(): void {
  const head = heap[0];
  if (head === undefined) return disarmTimer();
  const owner = globalThis.setTimeout;
  if (timer !== undefined && timerOwner === owner && timerDueAt <= head.dueAt) return;
  disarmTimer();
  const delay = Math.min(MAX_TIMER_DELAY, Math.max(0, Math.ceil(head.dueAt - now())));
  timerOwner = owner;
  timerDueAt = head.dueAt;
  timer = owner(onTimer, delay);
}

function disarmTimer(): void {
  if (timer === undefined) return;
  // Clear with the clock that armed it: a fake clock may have been uninstalled since.
  if (timerOwner === globalThis.setTimeout) globalThis.clearTimeout(timer as ReturnType<typeof setTimeout>);
  timer = undefined;
  timerDueAt = Infinity;
}

function siftUp(index: number): void {
  const item = heap[index] as Timed;
  while (index > 0) {
    const parentIndex = (index - 1) >> 1;
    const parent = heap[parentIndex] as Timed;
    if (parent.dueAt <= item.dueAt) break;
    heap[index] = parent;
    parent.slot = index;
    index = parentIndex;
  }
  heap[index] = item;
  item.slot = index;
}

function siftDown(index: number): void {
  const item = heap[index] as Timed;
  const length = heap.length;
  for (;;) {
    let child = 2 * index + 1;
    if (child >= length) break;
    const right = child + 1;
    if (right < length && (heap[right] as Timed).dueAt < (heap[child] as Timed).dueAt) child = right;
    const smaller = heap[child] as Timed;
    if (smaller.dueAt >= item.dueAt) break;
    heap[index] = smaller;
    smaller.slot = index;
    index = child;
  }
  heap[index] = item;
  item.slot = index;
}

/** For tests: how many items wait in the heap and whether a timer is armed. */
export function queueState(): { queued: number; timerArmed: boolean } {
  return { queued: heap.length, timerArmed: timer !== undefined };
}
