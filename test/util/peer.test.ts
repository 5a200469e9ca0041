// util/peer.ts: the error an adapter entry throws when its optional peer dependency cannot be
// loaded. The entries themselves are checked from a project without the peers, through the
// packed tarball (test/package/tarball.test.ts, 'a project without the optional peers').
import { describe, expect, it } from 'vitest';
import { peerMissing } from '../../src/util/peer.js';

describe('peerMissing', () => {
  it('names the entry, the peer and the command that installs it, and keeps the loader’s error as its cause', () => {
    const cause = Object.assign(new Error("Cannot find package '@opentelemetry/api'"), { code: 'ERR_MODULE_NOT_FOUND' });
    const error = peerMissing('tenacious/otel', '@opentelemetry/api', cause);
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe(
      'tenacious/otel needs @opentelemetry/api, an optional peer dependency, and could not load it: npm install @opentelemetry/api',
    );
    expect(error.cause).toBe(cause);
  });
});
