// The error a function throws, for tests that assert its class and exact message together.

/** What `fn` throws; fails the test when it returns instead. */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('did not throw');
}

/** What `promise` rejects with; fails the test when it resolves instead. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('did not reject');
}
