// configOfChecked(): the config of options an adapter's own rules checked already (retryFetch,
// axios, gRPC, the upload): no rule asked again, and only the options' own fields read.
import { describe, expect, it } from 'vitest';
import { configOfChecked } from '../../src/core/options.js';
import { polluted } from '../helpers/pollution.js';

describe('configOfChecked', () => {
  it('reads own fields only: a polluted Object.prototype sets nothing', () => {
    const config = polluted({ maxAttempts: 1, idempotent: false }, () => configOfChecked({ deadlineMs: 5000 }, 'retryFetch'));
    expect(config).toMatchObject({ maxAttempts: Infinity, idempotent: true, deadlineMs: 5000, where: 'retryFetch' });
  });

  it('takes the values as given, the backoff read as any options read it', () => {
    const retryable = () => true;
    const config = configOfChecked({ maxAttempts: 3, retryable, backoff: { initialDelayMs: 10, jitter: 'none' } }, 'attachRetry');
    expect(config).toMatchObject({ maxAttempts: 3, retryable, initialDelayMs: 10, jitter: 'none', multiplier: 2 });
    expect(() => configOfChecked({ backoff: { initialDelayMs: -1 } }, 'attachRetry')).toThrow(
      /^attachRetry: options\.backoff\.initialDelayMs must be a finite number >= 0, got -1$/,
    );
  });
});
