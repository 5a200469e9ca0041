/**
 * A random UUID (version 4) for a call's invocation id, from the platform's Web Crypto API:
 * `crypto.randomUUID` where it exists (Node, Deno, Bun, workers, browsers on secure pages),
 * else `crypto.getRandomValues` (a browser page served over plain HTTP), else `Math.random`
 * (a runtime without Web Crypto). The id tells a server one call's attempts from another's;
 * it is no secret, so the weaker source will do where no other exists.
 */

/** The Web Crypto members used here, as far as the runtime has them. */
interface WebCrypto {
  randomUUID?: () => string;
  getRandomValues?: (bytes: Uint8Array) => Uint8Array;
}

/** A new random UUID, such as `'3f0c9a4e-5b1d-4c2e-9a7f-0d6b8e2c1a54'`. */
export function randomId(crypto: WebCrypto | undefined = (globalThis as { crypto?: WebCrypto }).crypto): string {
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID();
  const bytes = new Uint8Array(31); // one per random hex digit
  if (typeof crypto?.getRandomValues === 'function') crypto.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.random() * 256;
  let i = 0;
  // RFC 9562, section 5.4: 4 is the version; y, the variant, is 8, 9, a or b.
  return 'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'.replace(/[xy]/g, (c) => {
    const nibble = (bytes[i++] as number) & 15;
    return (c === 'x' ? nibble : (nibble & 3) | 8).toString(16);
  });
}
