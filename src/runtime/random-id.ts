/**
 * A random UUID (version 4) for a call's invocation id: `crypto.randomUUID` where the runtime
 * has it (Node, Deno, Bun, workers, browsers on secure pages), else one made of `Math.random`
 * (a page served over plain HTTP, a runtime without Web Crypto). The id tells a server one
 * call's attempts from another's; it is no secret, so the weaker source will do there.
 */

/** A new random UUID, such as `'3f0c9a4e-5b1d-4c2e-9a7f-0d6b8e2c1a54'`. */
export function randomId(crypto: { randomUUID?: () => string } | undefined = globalThis.crypto): string {
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID();
  // RFC 9562, section 5.4: 4 is the version; y, the variant, is 8, 9, a or b.
  return 'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'.replace(/[xy]/g, (c) =>
    (c === 'x' ? Math.floor(Math.random() * 16) : 8 + Math.floor(Math.random() * 4)).toString(16),
  );
}
