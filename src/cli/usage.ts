/** The help text: printed to stdout by --help, and to stderr under a usage error. */
import { FLAG_TABLE, type FlagSpec } from './flags.js';

const HEAD = `Usage:
  tenacious [options] -- command [args...]
  tenacious schedule [--preset iam|gcs] [--max-attempts N] [backoff options]
  tenacious schedule --from-service-config FILE --method Service/Method
  tenacious --help

Runs the command (no shell; its output streams through) and, while it exits with a
failing code, runs it again after a truncated exponential backoff with jitter. Prints
each retry to stderr and exits with the command's last exit code (0 on success).
"schedule" prints the waits a policy would make, without running anything.

Options:
`;

const TAIL = `
DUR is a number with a unit: 250ms, 1.5s, 2m, 1h (a bare 0 is allowed). In
additive:AMOUNT, a bare number is milliseconds (additive:1000 = additive:1s).
A command killed by a signal counts as exit code 128 + the signal's number
(SIGKILL: 137) and is retried like any other failing code. A command that cannot
be started exits 127 (not found) or 126, without retrying. SIGINT, SIGTERM, SIGHUP
and SIGQUIT are passed to the running command and stop the retries.
`;

/** Where the help text of every flag starts. */
const HELP_COLUMN = 23;

/** One flag's lines: its forms and value on the left, its help aligned on the right. */
function flagLines(name: string, spec: FlagSpec<unknown>): string {
  const forms = `  ${spec.short === undefined ? '' : `-${spec.short}, `}--${name}${spec.value === undefined ? '' : ` ${spec.value}`}`;
  const [first, ...rest] = spec.help;
  const left = forms.length + 2 <= HELP_COLUMN ? forms.padEnd(HELP_COLUMN) : `${forms}  `;
  return [`${left}${first}`, ...rest.map((line) => `${' '.repeat(HELP_COLUMN)}${line}`)].join('\n');
}

/**
 * Usage of the `tenacious` command, its options generated from the flag table.
 *
 * @example
 * process.stdout.write(USAGE);
 */
export const USAGE = `${HEAD}${Object.entries(FLAG_TABLE as Readonly<Record<string, FlagSpec<unknown>>>)
  .map(([name, spec]) => flagLines(name, spec))
  .join('\n')}\n${TAIL}`;
