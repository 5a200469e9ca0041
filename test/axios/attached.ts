// What the axios tests share: an instance with attachRetry, and waits short enough to count
// requests on loopback in real time (timing.test.ts tests the waits themselves, in virtual time).
import axios, { type AxiosInstance } from 'axios';
import { attachRetry } from '../../src/axios/index.js';

/** Tiny waits: these tests count requests. */
export const fast = { backoff: { initialDelayMs: 1, maxDelayMs: 5 } } as const;

/** A fresh axios instance with tenacious attached under `options`. */
export function attached(options: Parameters<typeof attachRetry>[1] = fast): AxiosInstance {
  const api = axios.create();
  attachRetry(api, options);
  return api;
}
