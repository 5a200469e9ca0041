// Prototype pollution, as another package's bug would cause it, for tests of code that must read
// the caller's own fields only.

/** Runs `fn` with `fields` set on Object.prototype, then removes them, whatever `fn` does. */
export function polluted<T>(fields: Record<string, unknown>, fn: () => T): T {
  const proto = Object.prototype as Record<string, unknown>;
  for (const [key, value] of Object.entries(fields)) proto[key] = value;
  try {
    return fn();
  } finally {
    for (const key of Object.keys(fields)) delete proto[key];
  }
}
