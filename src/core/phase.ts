/**
 * The phases of a call's state machine (drawn in docs/architecture.md), as small integers: they are
 * read on every step of every call, and the two final ones are told from the others by one
 * comparison (`>= SUCCEEDED`).
 */
export const ATTEMPTING = 0;
export const SLEEPING = 1;
export const SUCCEEDED = 2;
export const FAILED = 3;
export type Phase = typeof ATTEMPTING | typeof SLEEPING | typeof SUCCEEDED | typeof FAILED;
