// A generic gRPC service for the grpc-js proofs: no .proto files, JSON on the wire. The server
// answers with whatever status the test scripts, and keeps an IAM-style policy with etags for
// the read-modify-write proof.
import {
  type CallOptions,
  type Client,
  type ClientUnaryCall,
  Metadata,
  Server,
  ServerCredentials,
  type ServiceDefinition,
  type ServiceError,
  type UntypedServiceImplementation,
  credentials,
  makeGenericClientConstructor,
  status,
} from '@grpc/grpc-js';
import type { AttemptContext } from '../../src/index.js';

const json = {
  serialize: (value: unknown): Buffer => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer): unknown => JSON.parse(bytes.toString()),
};

function unaryMethod(path: string) {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  } as const;
}

/** `Echo` answers as scripted; `GetIamPolicy` / `SetIamPolicy` keep a policy guarded by its etag. */
export const TEST_SERVICE = {
  Echo: unaryMethod('/tenacious.test.Loopback/Echo'),
  GetIamPolicy: unaryMethod('/tenacious.test.Loopback/GetIamPolicy'),
  SetIamPolicy: unaryMethod('/tenacious.test.Loopback/SetIamPolicy'),
} satisfies ServiceDefinition;

/** A status the server answers a call with, or `'ok'`; `delayMs` stalls before answering. */
export interface EchoRequest {
  readonly code?: keyof typeof status | 'ok';
  readonly delayMs?: number;
  readonly pushbackMs?: number;
}

export interface Policy {
  etag: string;
  bindings: Array<{ role: string; members: string[] }>;
}

/** The running server, its policy and what it was asked. */
export interface GrpcLoopback {
  readonly address: string;
  readonly calls: string[];
  policy: Policy;
  /** Called after every GetIamPolicy; lets a test change the policy behind the reader's back. */
  afterRead?: (reads: number) => void;
  close(): void;
}

export async function startGrpcServer(): Promise<GrpcLoopback> {
  const server = new Server();
  const stalls = new Set<ReturnType<typeof setTimeout>>();
  let reads = 0;
  let version = 0;
  const state: GrpcLoopback = {
    address: '',
    calls: [],
    policy: { etag: 'v0', bindings: [] },
    close: () => {
      for (const timer of stalls) clearTimeout(timer);
      server.forceShutdown();
    },
  };
  const implementation: UntypedServiceImplementation = {
    Echo(call: { request: EchoRequest }, callback: (error: Partial<ServiceError> | null, value?: unknown) => void) {
      const { code = 'ok', delayMs = 0, pushbackMs } = call.request;
      state.calls.push(`Echo ${code}`);
      const timer = setTimeout(() => {
        stalls.delete(timer);
        if (code === 'ok') return callback(null, { ok: true });
        const metadata = new Metadata();
        if (pushbackMs !== undefined) metadata.set('grpc-retry-pushback-ms', String(pushbackMs));
        callback({ code: status[code], details: `loopback says ${code}`, metadata });
      }, delayMs);
      stalls.add(timer);
    },
    GetIamPolicy(_call: unknown, callback: (error: null, value: Policy) => void) {
      reads++;
      state.calls.push(`GetIamPolicy ${state.policy.etag}`);
      callback(null, structuredClone(state.policy));
      state.afterRead?.(reads);
    },
    SetIamPolicy(call: { request: { policy: Policy } }, callback: (error: Partial<ServiceError> | null, value?: Policy) => void) {
      const sent = call.request.policy;
      state.calls.push(`SetIamPolicy ${sent.etag}`);
      if (sent.etag !== state.policy.etag) {
        return callback({ code: status.ABORTED, details: 'There were concurrent policy changes. Retry the read-modify-write.' });
      }
      state.policy = { ...sent, etag: `v${++version}` };
      callback(null, structuredClone(state.policy));
    },
  };
  server.addService(TEST_SERVICE, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  Object.assign(state, { address: `127.0.0.1:${port}` });
  return state;
}

type UnaryMethod = (
  request: unknown,
  options: CallOptions,
  callback: (error: ServiceError | null, value?: unknown) => void,
) => ClientUnaryCall;

/** A client of TEST_SERVICE: one unary method per entry. */
export type LoopbackClient = Client & Record<keyof typeof TEST_SERVICE, UnaryMethod>;

/** A client for TEST_SERVICE, made by grpc-js from the definition alone. */
export function connect(address: string): LoopbackClient {
  const Constructor = makeGenericClientConstructor(TEST_SERVICE, 'Loopback');
  return new Constructor(address, credentials.createInsecure()) as unknown as LoopbackClient;
}

/**
 * One unary call, the way the README recipe makes it: the gRPC deadline is the attempt's
 * remaining time (capped by `timeoutMs`), and the attempt's signal cancels the call.
 */
export function unary<T>(
  client: LoopbackClient,
  method: keyof typeof TEST_SERVICE,
  request: unknown,
  ctx?: Pick<AttemptContext, 'signal' | 'remainingMs'>,
  timeoutMs = 10_000,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const deadline = Date.now() + Math.min(timeoutMs, ctx?.remainingMs ?? timeoutMs);
    const call = client[method](request, { deadline }, (error, value) => (error ? reject(error) : resolve(value as T)));
    ctx?.signal.addEventListener('abort', () => call.cancel(), { once: true });
  });
}
