/**
 * A command line that cannot be carried out; the entry point prints the message and
 * "see tenacious --help" to stderr and exits with status 2.
 *
 * @example
 * throw new UsageError('--deadline needs a value');
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
