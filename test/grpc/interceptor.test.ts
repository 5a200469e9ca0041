// grpcRetryInterceptor on a real grpc-js client and server (127.0.0.1): the calls the server
// sees (one per attempt, gRFC A6's grpc-previous-rpc-attempts on the retries, the caller's
// metadata on each), what the caller is told (one message, one status, grpc-js's own
// ServiceError), one retry layer (the channel's retries left on multiply the requests), and
// the calls it leaves alone (client streams, a passed deadline, a method its policy skips).
import {
  type ClientOptions,
  type InterceptingCall,
  type Interceptor,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  connectivityState,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NO_CHANNEL_RETRIES, grpcRetryInterceptor } from '../../src/grpc/index.js';
import type { GrpcInterceptorPolicy } from '../../src/grpc/index.js';
import { isLoopback, watchConnections } from '../clients/loopback.js';
import { recipeRegionsOf } from '../clients/recipe-kit.js';
import { iam } from '../../src/google/index.js';
import { useVirtualClock } from '../helpers/clock.js';
import {
  type Answer,
  type LoopbackClient,
  type ScriptedServer,
  connect,
  echo,
  listening,
  scriptedServer,
  settled,
  until,
  withTrailers,
} from './server.js';

const clock = useVirtualClock();
let server: ScriptedServer | undefined;
let clients: LoopbackClient[] = [];
let connections: ReturnType<typeof watchConnections>;
beforeEach(() => {
  connections = watchConnections();
});
afterEach(() => {
  for (const client of clients) client.close();
  server?.close();
  clients = [];
  server = undefined;
  connections.restore();
  expect(connections.hosts.every(isLoopback)).toBe(true);
});

/** Small waits: these tests count calls; the waits are tested in deadline.test.ts. */
const fast = { backoff: { initialDelayMs: 1, maxDelayMs: 1, jitter: 'none' } } as const;

async function serve(script: readonly Answer[], after?: Answer): Promise<ScriptedServer> {
  server = await scriptedServer(script, after);
  return server;
}

function client(options: Parameters<typeof connect>[1]): LoopbackClient {
  const made = connect((server as ScriptedServer).address, options);
  clients.push(made);
  return made;
}

/** A client whose calls the interceptor retries under `policy`, the channel's retries off. */
function retrying(policy?: GrpcInterceptorPolicy, before: Interceptor[] = []): LoopbackClient {
  return client({ ...NO_CHANNEL_RETRIES, interceptors: [...before, grpcRetryInterceptor(policy)] });
}

/** Echo's outcome, the 1 ms waits between attempts run on the virtual clock. */
async function call(on: LoopbackClient, options: object = {}) {
  return settled(echo(on, options), clock);
}

describe('retries on a real channel', () => {
  it('UNAVAILABLE, UNAVAILABLE, OK: the value after three calls; the retries say how many came before', async () => {
    await serve(['UNAVAILABLE', 'UNAVAILABLE']);
    const outcome = await call(retrying(fast));
    expect(outcome).toMatchObject({ error: null, value: { ok: true }, statusEvents: 1 });
    expect(server?.calls.map((c) => [c.answer, c.previousAttempts, c.caller])).toEqual([
      ['UNAVAILABLE', undefined, 'me'],
      ['UNAVAILABLE', '1', 'me'],
      ['OK', '2', 'me'],
    ]);
  });

  it('gives up after maxAttempts with grpc-js’s own ServiceError of the last answer: code, details, trailers', async () => {
    await serve([], 'UNAVAILABLE');
    const outcome = await call(retrying({ ...fast, maxAttempts: 3 }));
    expect(server?.calls).toHaveLength(3);
    // What grpc-js reports for the same answer without the interceptor.
    const plain = await call(client(NO_CHANNEL_RETRIES));
    const error = outcome.error as ServiceError;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe('14 UNAVAILABLE: loopback says UNAVAILABLE');
    expect(error.message).toBe(plain.error?.message);
    expect({ code: error.code, details: error.details }).toEqual({ code: status.UNAVAILABLE, details: 'loopback says UNAVAILABLE' });
    expect(error.metadata.get('x-trailer')).toEqual(['said UNAVAILABLE']);
    expect(Object.keys(error).sort()).toEqual(Object.keys(plain.error as object).sort());
  });

  it.each(['PERMISSION_DENIED', 'INVALID_ARGUMENT', 'NOT_FOUND'] as const)(
    '%s: one call, its error as grpc-js reports it',
    async (code) => {
      await serve([code]);
      const outcome = await call(retrying(fast));
      expect(server?.calls).toHaveLength(1);
      expect(outcome.error).toMatchObject({
        code: status[code],
        details: `loopback says ${code}`,
        message: `${status[code]} ${code}: loopback says ${code}`,
      });
    },
  );

  it('tells the listener once: the answering attempt’s headers, one message, one status', async () => {
    await serve([
      { status: 'UNAVAILABLE', headers: true },
      { status: 'UNAVAILABLE', headers: true },
    ]);
    const told: string[] = [];
    const recorder = listening({
      onReceiveMetadata: () => told.push('metadata'),
      onReceiveMessage: (m) => told.push(`message ${JSON.stringify(m)}`),
      onReceiveStatus: (s) => told.push(`status ${s.code}`),
    });
    const outcome = await call(retrying(fast, [recorder]));
    expect(server?.calls).toHaveLength(3);
    // The third answer sent no headers of its own (grpc-js's server sends them with the message).
    expect(told).toEqual(['metadata', 'message {"ok":true}', 'status 0']);
    expect(outcome).toMatchObject({ value: { ok: true }, metadataEvents: 1, statusEvents: 1 });
  });

  it('a failed call tells the listener the null message grpc-js tells for no message, then the status', async () => {
    await serve(['PERMISSION_DENIED']);
    const told: unknown[] = [];
    const recorder = listening({ onReceiveMessage: (m) => told.push(m), onReceiveStatus: (s) => told.push(s.code) });
    await call(retrying(fast, [recorder]));
    expect(told).toEqual([null, status.PERMISSION_DENIED]);
  });

  it('getPeer is the attempt’s peer, getAuthContext the attempt’s', async () => {
    await serve(['OK']);
    const on = retrying(fast);
    let peerBefore = '';
    const metadata = new Metadata();
    const done = new Promise<unknown>((resolve) => {
      const unary = on.Echo({}, metadata, {}, () => resolve([unary.getPeer(), unary.getAuthContext()]));
      peerBefore = unary.getPeer();
    });
    // Before the channel connects, grpc-js names the target.
    expect(peerBefore).toBe(`dns:${server?.address}`);
    // An insecure channel's auth context is empty; no attempt would make it null.
    await expect(done).resolves.toEqual([server?.address, {}]);
  });
});

// recipe:begin
const options: ClientOptions = { ...NO_CHANNEL_RETRIES, interceptors: [grpcRetryInterceptor(iam())] };
// recipe:end

describe('the adapter as docs/recipes.md shows it', () => {
  it('is the code the recipes show', () => {
    expect(recipeRegionsOf(import.meta.url)).toEqual([
      { code: expect.stringContaining('grpcRetryInterceptor(iam())') as unknown, shown: true },
    ]);
  });

  it('retries an UNAVAILABLE under iam(): the second call, after IAM’s first wait (1 to 2 s), answers', async () => {
    await serve(['UNAVAILABLE']);
    // The recipe's options, and after its interceptor one that sees each attempt's answer arrive.
    let answers = 0;
    const seeing = listening({ onReceiveStatus: () => answers++ });
    const outcome = echo(client({ ...options, interceptors: [...(options.interceptors ?? []), seeing] }));
    await until(() => answers === 1, 'the first answer');
    await clock.tickAsync(999);
    expect(server?.calls).toHaveLength(1);
    // IAM's first wait is 1 s plus up to 1 s of jitter.
    await clock.tickAsync(1001);
    await until(() => answers === 2, 'the second answer');
    const retriedAt = server?.calls[1]?.at ?? Number.NaN;
    expect(retriedAt).toBeGreaterThanOrEqual(1000);
    expect(retriedAt).toBeLessThanOrEqual(2000);
    await expect(outcome).resolves.toMatchObject({ value: { ok: true } });
    expect(server?.calls.map((c) => c.previousAttempts)).toEqual([undefined, '1']);
  });
});

describe('one retry layer', () => {
  it('with the channel’s retries left on (a service config retryPolicy), the requests multiply: 3 attempts × 3 = 9', async () => {
    await serve([], 'UNAVAILABLE');
    const on = client({ interceptors: [grpcRetryInterceptor({ ...fast, maxAttempts: 3 })] });
    await settled(echo(on), clock);
    expect(server?.calls).toHaveLength(9);
  });

  it('with NO_CHANNEL_RETRIES, exactly tenacious’s count: 3', async () => {
    await serve([], 'UNAVAILABLE');
    await call(retrying({ ...fast, maxAttempts: 3 }));
    expect(server?.calls).toHaveLength(3);
    expect(NO_CHANNEL_RETRIES).toEqual({ 'grpc.enable_retries': 0 });
    expect(Object.isFrozen(NO_CHANNEL_RETRIES)).toBe(true);
  });
});

describe('calls it leaves alone', () => {
  it('a client stream: one call, no retry', async () => {
    await serve([], 'UNAVAILABLE');
    const error = await new Promise<ServiceError | null>((resolve) => {
      const stream = retrying(fast).Collect(new Metadata(), {}, resolve);
      stream.write({});
      stream.end();
    });
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(server?.calls.map((c) => c.method)).toEqual(['Collect']);
  });

  it('a call whose deadline has passed: grpc-js’s own DEADLINE_EXCEEDED, no call sent', async () => {
    await serve([], 'UNAVAILABLE');
    const on = retrying(fast);
    const outcome = await call(on, { deadline: Date.now() });
    expect(outcome.error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(server?.calls).toEqual([]);
    // The channel began to connect for that call: let it finish, or closing it leaves grpc-js's connect timers behind.
    await until(() => on.getChannel().getConnectivityState(false) === connectivityState.READY, 'the connection');
  });

  it('a method the policy function returns undefined for; the others get its options', async () => {
    await serve([], 'UNAVAILABLE');
    const asked: string[] = [];
    const policy = (path: string) => {
      asked.push(path);
      return path.endsWith('/Echo') ? { ...fast, maxAttempts: 2 } : undefined;
    };
    await call(retrying(policy));
    expect(server?.calls).toHaveLength(2);
    const skip = await call(
      retrying((path) => {
        asked.push(path);
        return undefined;
      }),
    );
    expect(skip.error?.code).toBe(status.UNAVAILABLE);
    expect(server?.calls).toHaveLength(3);
    expect(asked).toEqual(['/tenacious.test.Loopback/Echo', '/tenacious.test.Loopback/Echo']);
  });
});

describe('the call it returns, driven by hand: a listener may leave out methods, as grpc-js’s call interface allows', () => {
  /** The options and next of a real call of `method`, through `under`, taken as it passes. */
  async function nextOf(method: 'Echo' | 'Watch', under: Interceptor[] = []): Promise<{ options: InterceptorOptions; next: NextCall }> {
    let made: { options: InterceptorOptions; next: NextCall } | undefined;
    const take: Interceptor = (options, next) => {
      made = { options, next };
      return next(options) as InterceptingCall;
    };
    const plain = client({ ...NO_CHANNEL_RETRIES, interceptors: [take, ...under] });
    if (method === 'Echo') await call(plain);
    else {
      const stream = plain.Watch({}, new Metadata());
      stream.on('data', () => {});
      stream.on('error', () => {}); // its status says it
      await new Promise((resolve) => stream.on('status', resolve));
    }
    return made as { options: InterceptorOptions; next: NextCall };
  }

  /** Starts the interceptor's call on `next` with `listener`, its request sent. */
  function send(taken: { options: InterceptorOptions; next: NextCall }, listener: object) {
    const made = grpcRetryInterceptor(fast)(taken.options, taken.next);
    made.start(new Metadata(), listener);
    made.sendMessage({});
    made.halfClose();
    return made;
  }

  /** A few turns of the sockets, for anything still to come. */
  const turns = async () => {
    for (let n = 0; n < 20; n++) await new Promise((resolve) => setImmediate(resolve));
  };

  it('unary: only onReceiveStatus is told the status; only onReceiveMessage, the message', async () => {
    await serve([]);
    const taken = await nextOf('Echo');
    const statuses: number[] = [];
    const messages: unknown[] = [];
    send(taken, { onReceiveStatus: (s: { code: number }) => statuses.push(s.code) });
    send(taken, { onReceiveMessage: (m: unknown) => messages.push(m) });
    await until(() => statuses.length === 1 && messages.length === 1, 'both answers');
    await turns();
    expect([statuses, messages]).toEqual([[status.OK], [{ ok: true }]]);
  });

  it('a server stream: a listener without onReceiveMessage reads to the status; one without onReceiveStatus, every message', async () => {
    await serve([]);
    const taken = await nextOf('Watch');
    let headers = 0;
    const statuses: number[] = [];
    const noMessages = send(taken, { onReceiveMetadata: () => headers++, onReceiveStatus: (s: { code: number }) => statuses.push(s.code) });
    await until(() => headers === 1, 'the headers');
    // Handed over with the first message: each read asks for the next one.
    await until(() => {
      noMessages.startRead();
      return statuses.length === 1;
    }, 'the status');
    const messages: unknown[] = [];
    const noStatus = send(taken, { onReceiveMessage: (m: unknown) => messages.push(m) });
    await until(() => {
      noStatus.startRead();
      return messages.length === 3;
    }, 'three messages');
    noStatus.startRead();
    await turns();
    expect([statuses, messages]).toEqual([[status.OK], [{ n: 1 }, { n: 2 }, { n: 3 }]]);
  });

  it('a server stream whose status came before the hand-over: a listener without onReceiveStatus has the message', async () => {
    // The call that passes on next ends without a message: withTrailers would hold an OK stream's for ever.
    await serve(['UNAVAILABLE', 'midway']);
    const taken = await nextOf('Watch', [withTrailers]);
    const messages: unknown[] = [];
    send(taken, { onReceiveMessage: (m: unknown) => messages.push(m) });
    await until(() => messages.length === 1, 'the message');
    await turns();
    expect(messages).toEqual([{ n: 1 }]);
    expect(server?.calls.map((c) => c.answer)).toEqual(['UNAVAILABLE', 'midway']);
  });
});
