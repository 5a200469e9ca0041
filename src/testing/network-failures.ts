/**
 * What fetch throws on each runtime when the network fails, rebuilt for `scriptedFetch`. The
 * shapes are the ones the project's runtime suite recorded on loopback (test/runtimes/,
 * test/classify/runtime-errors.ts: Node 20, Deno 2.9, Bun 1.4, workerd, Chromium); Firefox's
 * and Safari's are their documented messages. `errno` values are Linux's.
 */

/**
 * A network failure a script can name: the connection refused (nothing listens: the request
 * provably never left), reset after the request arrived, closed by the server without an
 * answer (undici's `UND_ERR_SOCKET`), or a name that does not resolve.
 *
 * @example
 * const failures: NetworkFailure[] = ['ECONNREFUSED', 'ECONNRESET'];
 */
export type NetworkFailure = 'ECONNREFUSED' | 'ECONNRESET' | 'UND_ERR_SOCKET' | 'ENOTFOUND';

/** Every {@link NetworkFailure}, for messages and suggestions. */
export const NETWORK_FAILURES: readonly NetworkFailure[] = ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'ENOTFOUND'];

/**
 * A runtime whose fetch errors `scriptedFetch` imitates.
 *
 * @example
 * const fetch = scriptedFetch(['ECONNRESET', 200], { runtime: 'deno' satisfies FetchRuntime });
 */
export type FetchRuntime = 'node' | 'deno' | 'bun' | 'workerd' | 'chromium' | 'firefox' | 'safari';

/** Every {@link FetchRuntime}, for messages and suggestions. */
export const FETCH_RUNTIMES: readonly FetchRuntime[] = ['node', 'deno', 'bun', 'workerd', 'chromium', 'firefox', 'safari'];

/** One level of an error's cause chain. */
interface Level {
  readonly name: 'TypeError' | 'Error' | 'SocketError';
  readonly message: string;
  readonly fields?: Readonly<Record<string, unknown>>;
}

/** What is known of the request that failed, for the messages that name it. */
interface Target {
  readonly url: URL;
}

const hostPort = ({ url }: Target): string => `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
const BUN_RESET =
  'ECONNRESET: The socket connection was closed unexpectedly. For more information, pass `verbose: true` in the second argument to fetch()';
const fetchFailed = (cause: Level): Level[] => [{ name: 'TypeError', message: 'fetch failed' }, cause];
const only = (name: Level['name'], message: string, fields?: Level['fields']): Level[] => [{ name, message, ...(fields && { fields }) }];

type Shapes = Record<NetworkFailure | 'cut', (target: Target) => Level[]>;

const SHAPES: Record<FetchRuntime, Shapes> = {
  node: {
    ECONNREFUSED: (t) => {
      const [address, port] = hostPort(t).split(':') as [string, string];
      const fields = { code: 'ECONNREFUSED', errno: -111, syscall: 'connect', address, port: Number(port) };
      return fetchFailed({ name: 'Error', message: `connect ECONNREFUSED ${hostPort(t)}`, fields });
    },
    ECONNRESET: () =>
      fetchFailed({ name: 'Error', message: 'read ECONNRESET', fields: { code: 'ECONNRESET', errno: -104, syscall: 'read' } }),
    UND_ERR_SOCKET: () => fetchFailed({ name: 'SocketError', message: 'other side closed', fields: { code: 'UND_ERR_SOCKET' } }),
    ENOTFOUND: ({ url }) =>
      fetchFailed({
        name: 'Error',
        message: `getaddrinfo ENOTFOUND ${url.hostname}`,
        fields: { code: 'ENOTFOUND', errno: -3008, syscall: 'getaddrinfo', hostname: url.hostname },
      }),
    cut: () => [
      { name: 'TypeError', message: 'terminated' },
      { name: 'Error', message: 'read ECONNRESET', fields: { code: 'ECONNRESET', errno: -104, syscall: 'read' } },
    ],
  },
  deno: {
    ECONNREFUSED: ({ url }) =>
      fetchFailed({
        name: 'Error',
        message: `error sending request for url (${url.href}): client error (Connect): tcp connect error: Connection refused (os error 111)`,
      }),
    ECONNRESET: () => fetchFailed({ name: 'Error', message: 'Connection reset by peer (os error 104)' }),
    UND_ERR_SOCKET: (t) =>
      fetchFailed({
        name: 'Error',
        message: `error sending request from ${hostPort(t)} for ${t.url.href} (${hostPort(t)}): client error (SendRequest): connection closed before message completed`,
      }),
    ENOTFOUND: ({ url }) =>
      fetchFailed({
        name: 'Error',
        message: `error sending request for url (${url.href}): client error (Connect): dns error: failed to lookup address information: Name or service not known`,
      }),
    cut: () => only('TypeError', 'error reading a body from connection'),
  },
  bun: {
    ECONNREFUSED: () =>
      only('TypeError', 'ECONNREFUSED: Unable to connect. Is the computer able to access the url?', { code: 'ECONNREFUSED' }),
    ECONNRESET: () => only('TypeError', BUN_RESET, { code: 'ECONNRESET' }),
    UND_ERR_SOCKET: () => only('TypeError', BUN_RESET, { code: 'ECONNRESET' }),
    ENOTFOUND: ({ url }) => only('TypeError', `getaddrinfo ENOTFOUND ${url.hostname}`, { code: 'ENOTFOUND', syscall: 'getaddrinfo' }),
    cut: () => only('TypeError', BUN_RESET, { code: 'ECONNRESET' }),
  },
  // workerd tells no failure from another, and calls a DNS failure an internal error.
  workerd: {
    ECONNREFUSED: () => only('Error', 'Network connection lost.'),
    ECONNRESET: () => only('Error', 'Network connection lost.'),
    UND_ERR_SOCKET: () => only('Error', 'Network connection lost.'),
    ENOTFOUND: () => only('Error', 'internal error; reference = 0123456789abcdef01234567'),
    cut: () => only('Error', 'Network connection lost.'),
  },
  chromium: browser('Failed to fetch'),
  firefox: browser('NetworkError when attempting to fetch resource.'),
  safari: browser('Load failed'),
};

/** A browser says the same for every failure: nothing about it reaches the page. */
function browser(message: string): Shapes {
  const same = (): Level[] => only('TypeError', message);
  return { ECONNREFUSED: same, ECONNRESET: same, UND_ERR_SOCKET: same, ENOTFOUND: same, cut: same };
}

/**
 * The error `runtime`'s fetch rejects with for `failure` of a request to `url` (`cut`: the body
 * broke after the headers, as reading it rejects), with its cause chain, codes and fields.
 */
export function networkError(runtime: FetchRuntime, failure: NetworkFailure | 'cut', url: URL): Error {
  return build(SHAPES[runtime][failure]({ url }));
}

function build([level, ...causes]: Level[]): Error {
  const { name, message, fields } = level as Level;
  const options = causes.length > 0 ? { cause: build(causes) } : undefined;
  const error = name === 'TypeError' ? new TypeError(message, options) : new Error(message, options);
  // undici's SocketError names itself (an own property); an Error or a TypeError has its class's name.
  if (error.name !== name) error.name = name;
  return Object.assign(error, fields);
}

/**
 * The runtime this code runs on, from what each defines (no Node built-in is imported): Deno and
 * Bun by their globals, Node by `process.versions.node`, workerd by its user agent, a browser by
 * its engine; anything else is taken for Chromium.
 */
export function detectRuntime(scope: Record<string, unknown> = globalThis as never): FetchRuntime {
  if (scope.Deno !== undefined) return 'deno';
  if (scope.Bun !== undefined) return 'bun';
  if ((scope.process as { versions?: { node?: string } } | undefined)?.versions?.node !== undefined) return 'node';
  // Stryker disable next-line StringLiteral: equivalent: any fallback without 'Firefox/' or 'Safari/' that is not workerd's agent reads as Chromium
  const agent = (scope.navigator as { userAgent?: string } | undefined)?.userAgent ?? '';
  if (agent === 'Cloudflare-Workers') return 'workerd';
  if (agent.includes('Firefox/')) return 'firefox';
  if (agent.includes('Safari/') && !agent.includes('Chrome/')) return 'safari';
  return 'chromium';
}
