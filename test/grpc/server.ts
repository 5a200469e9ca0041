// A real grpc-js server on 127.0.0.1 for the interceptor's proofs: the loopback test service
// (test/clients/grpc-service.ts) whose Echo answers each call as the test scripts it, and records
// what the server saw of each call (its metadata, its deadline, whether the client cancelled it).
// Two streaming methods beside it show that the interceptor leaves streams alone.
import {
  type ChannelOptions,
  InterceptingCall,
  type InterceptingListener,
  type Client,
  type ClientReadableStream,
  type ClientUnaryCall,
  type ClientWritableStream,
  type Interceptor,
  Metadata,
  Server,
  ServerCredentials,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceError,
  credentials,
  makeGenericClientConstructor,
  status,
} from '@grpc/grpc-js';
import { TEST_SERVICE } from '../clients/grpc-service.js';

type StatusName = keyof typeof status;

/** How the server answers one call: OK with `{ ok: true }`, a status, or nothing until cancelled. */
export type Answer =
  | 'OK'
  | StatusName
  | 'stall'
  | 'empty'
  | 'midway'
  | 'first-then-stall'
  | { readonly status: StatusName; readonly pushbackMs?: string; readonly headers?: boolean; readonly delayMs?: number };

/** What the server saw of one call. */
export interface SeenCall {
  readonly method: string;
  readonly answer: string;
  /** Its `grpc-previous-rpc-attempts` metadata; undefined when it had none. */
  readonly previousAttempts: string | undefined;
  /** Its `x-caller` metadata, which the tests set on the caller's side. */
  readonly caller: string | undefined;
  /** Milliseconds from the moment the call arrived to its deadline (Infinity without one). */
  readonly deadlineInMs: number;
  /** When it arrived (Date.now(), virtual under a fake clock). */
  readonly at: number;
  /** Whether the client cancelled it (recorded for stalled calls). */
  cancelled: boolean;
}

export interface ScriptedServer {
  readonly address: string;
  readonly calls: SeenCall[];
  /** Resolves when the server has seen `n` calls. */
  seen(n: number): Promise<void>;
  close(): void;
}

/** The loopback service, with a server stream (`Watch`) and a client stream (`Collect`). */
export const SERVICE = {
  ...TEST_SERVICE,
  Watch: { ...TEST_SERVICE.Echo, path: '/tenacious.test.Loopback/Watch', responseStream: true },
  Collect: { ...TEST_SERVICE.Echo, path: '/tenacious.test.Loopback/Collect', requestStream: true },
} as const;

/**
 * How Watch answers: OK is three messages `{ n }` then OK; `empty` is OK without a message;
 * `midway` is one message, then UNAVAILABLE; `first-then-stall` is one message, then nothing.
 */
function watch(answer: Answer, call: ServerWritableStream<unknown, unknown>): void {
  if (answer === 'stall') return;
  if (answer === 'empty') return void call.end();
  if (answer === 'OK') {
    for (const n of [1, 2, 3]) call.write({ n });
    return void call.end();
  }
  if (answer === 'midway' || answer === 'first-then-stall') call.write({ n: 1 });
  if (answer === 'first-then-stall') return;
  const name = answer === 'midway' ? 'UNAVAILABLE' : (answer as StatusName);
  call.emit('error', { code: status[name], details: `loopback says ${name}` });
}

/** A server whose Echo (and streams) answer the n-th call with `script[n]`, then with `after`. */
export async function scriptedServer(script: readonly Answer[], after: Answer = 'OK'): Promise<ScriptedServer> {
  const server = new Server();
  const calls: SeenCall[] = [];
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const record = (method: string, call: ServerUnaryCall<unknown, unknown> | ServerReadableStream<unknown, unknown>): Answer => {
    const answer = script[calls.length] ?? after;
    const deadline = call.getDeadline();
    const seen: SeenCall = {
      method,
      answer: typeof answer === 'string' ? answer : answer.status,
      previousAttempts: call.metadata.get('grpc-previous-rpc-attempts')[0]?.toString(),
      caller: call.metadata.get('x-caller')[0]?.toString(),
      deadlineInMs: (typeof deadline === 'number' ? deadline : deadline.getTime()) - Date.now(),
      at: Date.now(),
      cancelled: false,
    };
    calls.push(seen);
    // grpc-js's server also says 'cancelled' when an answered call's stream closes: only a stalled call's counts.
    if (answer === 'stall' || answer === 'first-then-stall') call.on('cancelled', () => (seen.cancelled = true));
    for (const w of waiting.filter((w) => calls.length >= w.n)) w.resolve();
    return answer;
  };
  const reply = (
    answer: Answer,
    call: ServerUnaryCall<unknown, unknown>,
    callback: (e: Partial<ServiceError> | null, v?: unknown) => void,
  ) => {
    if (answer === 'stall') return;
    if (answer === 'OK') return callback(null, { ok: true });
    // Echo is scripted with statuses; the stream shapes are Watch's.
    const { status: name, pushbackMs, headers, delayMs = 0 } = typeof answer === 'string' ? { status: answer as StatusName } : answer;
    if (headers) call.sendMetadata(new Metadata({}));
    const trailers = new Metadata();
    trailers.set('x-trailer', `said ${name}`);
    if (pushbackMs !== undefined) trailers.set('grpc-retry-pushback-ms', pushbackMs);
    const answerNow = () => callback({ code: status[name], details: `loopback says ${name}`, metadata: trailers });
    // No timer for an answer at once: under a virtual clock it would wait for the test's tick.
    if (delayMs === 0) return answerNow();
    const timer = setTimeout(() => {
      timers.delete(timer);
      answerNow();
    }, delayMs);
    timers.add(timer);
  };
  server.addService(SERVICE, {
    Echo: (call: ServerUnaryCall<unknown, unknown>, callback: (e: Partial<ServiceError> | null, v?: unknown) => void) =>
      reply(record('Echo', call), call, callback),
    Watch(call: ServerWritableStream<unknown, unknown>) {
      const answer = record('Watch', call as unknown as ServerUnaryCall<unknown, unknown>);
      watch(answer, call);
    },
    Collect(call: ServerReadableStream<unknown, unknown>, callback: (e: Partial<ServiceError> | null, v?: unknown) => void) {
      const answer = record('Collect', call);
      call.on('data', () => {});
      call.on('end', () => reply(answer, call as unknown as ServerUnaryCall<unknown, unknown>, callback));
    },
    GetIamPolicy: () => {},
    SetIamPolicy: () => {},
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    address: `127.0.0.1:${port}`,
    calls,
    seen: (n) => new Promise<void>((resolve) => (calls.length >= n ? resolve() : waiting.push({ n, resolve }))),
    close: () => {
      for (const timer of timers) clearTimeout(timer);
      server.forceShutdown();
    },
  };
}

type Callback = (error: ServiceError | null, value?: unknown) => void;

/** A client of SERVICE, as generated clients are made: address, credentials, options. */
export interface LoopbackClient extends Client {
  Echo(request: unknown, metadata: Metadata, options: object, callback: Callback): ClientUnaryCall;
  Watch(request: unknown, metadata: Metadata, options?: object): ClientReadableStream<unknown>;
  Collect(metadata: Metadata, options: object, callback: Callback): ClientWritableStream<unknown>;
}

/**
 * A service config such as name resolution can hand a client unseen: grpc-js retries
 * UNAVAILABLE, up to 3 attempts a call, by itself (unless its retries are off).
 */
export const RETRYING_SERVICE_CONFIG = JSON.stringify({
  methodConfig: [
    {
      name: [{ service: 'tenacious.test.Loopback' }],
      retryPolicy: {
        maxAttempts: 3,
        initialBackoff: '0.001s',
        maxBackoff: '0.002s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
});

/** A client of `address` with `options` (`interceptors` included), its channel given RETRYING_SERVICE_CONFIG. */
export function connect(address: string, options: ChannelOptions & { interceptors?: Interceptor[] }): LoopbackClient {
  const Constructor = makeGenericClientConstructor(SERVICE, 'Loopback');
  return new Constructor(address, credentials.createInsecure(), {
    'grpc.service_config': RETRYING_SERVICE_CONFIG,
    ...options,
  }) as unknown as LoopbackClient;
}

/** The outcome of a unary Echo: the error or the value, with the call's metadata and status events. */
export interface Outcome {
  readonly error: ServiceError | null;
  readonly value: unknown;
  readonly metadataEvents: number;
  readonly statusEvents: number;
}

/** Calls Echo with metadata `x-caller: me` and `options`; resolves when the call's `status` event comes. */
export function echo(client: LoopbackClient, options: object = {}, onCall?: (call: ClientUnaryCall) => void): Promise<Outcome> {
  return new Promise((resolve) => {
    const metadata = new Metadata();
    metadata.set('x-caller', 'me');
    let metadataEvents = 0;
    let result: { error: ServiceError | null; value: unknown } | undefined;
    const call = client.Echo({}, metadata, options, (error, value) => {
      result = { error, value };
    });
    call.on('metadata', () => metadataEvents++);
    let statusEvents = 0;
    call.on('status', () => {
      statusEvents++;
      // The callback runs before the event; a second status would come later still.
      setImmediate(() => resolve({ ...(result as { error: ServiceError | null; value: unknown }), metadataEvents, statusEvents }));
    });
    onCall?.(call);
  });
}

/** An interceptor before the retrying one, telling `watch` what its listener is told, and passing it on. */
export function listening(watch: Partial<InterceptingListener>): Interceptor {
  return (options, next) =>
    new InterceptingCall(next(options), {
      start: (metadata, _listener, start) =>
        start(metadata, {
          onReceiveMetadata: (m, pass) => {
            watch.onReceiveMetadata?.(m);
            pass(m);
          },
          onReceiveMessage: (m, pass) => {
            watch.onReceiveMessage?.(m);
            pass(m);
          },
          onReceiveStatus: (s, pass) => {
            watch.onReceiveStatus?.(s);
            pass(s);
          },
        }),
    });
}

/**
 * An interceptor that hands each message on only with the call's status, as one that checks the
 * messages against the trailers would: grpc-js then tells the status right after the message.
 */
export const withTrailers: Interceptor = (options, next) =>
  new InterceptingCall(next(options), {
    start: (metadata, _listener, start) => {
      const held: Array<() => void> = [];
      start(metadata, {
        onReceiveMessage: (message, pass) => held.push(() => pass(message)),
        onReceiveStatus: (s, pass) => {
          pass(s);
          for (const release of held.splice(0)) release();
        },
      });
    },
  });

/** Resolves once `condition` holds, the sockets having had their turns; throws after 1000 turns. */
export async function until(condition: () => boolean, what = 'the condition'): Promise<void> {
  for (let turn = 0; !condition(); turn++) {
    if (turn === 1000) throw new Error(`${what} never came`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * `promise`, once settled, while the virtual clock moves on 1 ms at a time and the sockets have
 * their turns between the steps: for calls whose waits are short, however slow the machine.
 */
export async function settled<T>(promise: Promise<T>, clock: { tickAsync(ms: number): Promise<number> }): Promise<T> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let step = 0; !done && step < 2000; step++) {
    await new Promise((resolve) => setImmediate(resolve));
    await clock.tickAsync(1);
  }
  return promise;
}
