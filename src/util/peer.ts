/**
 * The error of an entry point whose optional peer dependency could not be loaded. The module
 * system's own ("Cannot find module '@opentelemetry/api'") names neither tenacious nor the fix;
 * this one names the entry point, the package and the command that installs it, and keeps the
 * module system's error as its `cause`.
 *
 * @example
 * peerMissing('tenacious/otel', '@opentelemetry/api', cause).message;
 * // 'tenacious/otel needs @opentelemetry/api, an optional peer dependency, and could not load it: npm install @opentelemetry/api'
 */
export function peerMissing(entry: string, peer: string, cause: unknown): Error {
  return new Error(`${entry} needs ${peer}, an optional peer dependency, and could not load it: npm install ${peer}`, { cause });
}
