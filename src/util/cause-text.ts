/**
 * The text an error that wraps another quotes from it: the cause's message, and the root cause
 * under it, read down the same chain the classifiers walk (`cause-chain.ts`). What a log reader
 * needs from `fetch failed` is the socket error under it: `ECONNREFUSED 127.0.0.1:39999`.
 */
import { type Bag, firstInChain } from './cause-chain.js';

/**
 * The end of a message that wraps `cause`: `: ` and the cause's message, then its root cause in
 * parentheses when that says what the message does not (`: fetch failed (ECONNREFUSED
 * 127.0.0.1:39999)`); empty for a cause that is no error. The cause is whatever fn threw: a
 * throwing getter or a hostile Proxy ends the reading there, and never turns giving up into an
 * exception of its own.
 *
 * @example
 * causeText(new TypeError('fetch failed', { cause: socketError })); // ': fetch failed (ECONNREFUSED 127.0.0.1:39999)'
 */
export function causeText(cause: unknown): string {
  let text = '';
  try {
    text = messageOf(cause);
    let root = undefined as Bag | undefined;
    firstInChain(cause, (e) => {
      root = e;
      return undefined;
    });
    // The cause itself is its own root when nothing is under it: then only its code adds to
    // its message (`socket hang up (ECONNRESET)`), and a root already quoted adds nothing. A
    // cause that is no object has no root: rootOf throws on undefined, caught below.
    const more = rootOf(root as Bag);
    if (more && !text.includes(more)) text = text ? `${text} (${more})` : more;
  } catch {
    // What was read before the throw is kept.
  }
  return text && `: ${text}`;
}

/** The message of an error-like value: an object with a string `message`, else ''. */
function messageOf(value: unknown): string {
  // A primitive has no own `message`; null and undefined throw here, caught by causeText.
  const message = (value as Bag).message;
  return typeof message === 'string' ? message : '';
}

/**
 * What the deepest error says: each of an `AggregateError`'s errors (Node's connect reports one
 * per address it tried); a system error's code and address (`ECONNREFUSED 127.0.0.1:39999`,
 * which its message repeats), or its message when that names the code (`getaddrinfo ENOTFOUND
 * example.invalid`), else its code; any other error's message.
 */
function rootOf(root: Bag): string {
  const { errors, code, address, port } = root;
  // An element that is no object throws here, caught by causeText.
  if (Array.isArray(errors) && errors.length > 0) return errors.slice(0, 3).map(rootOf).join(', ');
  const message = messageOf(root);
  if (typeof code !== 'string') return message;
  if (typeof address === 'string') return `${code} ${address}${port === undefined ? '' : `:${port}`}`;
  return message.includes(code) ? message : code;
}
