/**
 * `tenacious/testing`: test your own code that retries without waiting for it: `instant()`
 * options, a scripted fetch with real responses and real-shaped network errors, `settle()` for
 * fake clocks, and `scheduleOf()`, an options object's waits as data.
 */
export { instant } from './instant.js';
export { type ScriptedFetch, type ScriptedFetchOptions, type ScriptedRequest, scriptedFetch } from './scripted-fetch.js';
export type { ScriptStep, StatusStep } from './script.js';
export type { FetchRuntime, NetworkFailure } from './network-failures.js';
export { type FakeClock, type SettleOptions, settle } from './settle.js';
export { scheduleOf } from './schedule-of.js';
export type { ScheduleRow } from '../core/schedule-rows.js';
