/** The help text: printed to stdout by --help, and to stderr under a usage error. */

/**
 * Usage of the `tenacious` command.
 *
 * @example
 * process.stdout.write(USAGE);
 */
export const USAGE = `Usage:
  tenacious [options] -- command [args...]
  tenacious schedule [--preset iam|gcs] [--max-attempts N] [backoff options]
  tenacious --help

Runs the command (no shell; its output streams through) and, while it exits with a
failing code, runs it again after a truncated exponential backoff with jitter. Prints
each retry to stderr and exits with the command's last exit code (0 on success).
"schedule" prints the waits a policy would make, without running anything.

Options:
  --preset iam|gcs     Google Cloud's documented policies: wait 1s x2 up to 32s (iam)
                       or 64s (gcs), plus up to 1s at random; deadline 300s (iam) or
                       600s (gcs). The flags below override single parts.
  --max-attempts N     attempts in all, the first included (default: no limit;
                       schedule: 2 to 1000, default 10; --attempts is an old name)
  --deadline DUR       stop retrying this long after the first start (default 120s);
                       a command still running then is sent SIGTERM
  --attempt-timeout DUR  send SIGTERM to a run still going after DUR and retry it
                       (default: none)
  --initial-delay DUR  wait before the first retry, before jitter (default 1s)
  --max-delay DUR      cap on any one wait (default 32s)
  --jitter MODE        full | none | equal | additive:AMOUNT (default full)
  --retry-on CODES     retry only these exit codes, e.g. 1,75 (default: every non-zero)
  -q, --quiet          do not print retries and the final verdict
  -h, --help           print this help

DUR is a number with a unit: 250ms, 1.5s, 2m, 1h (a bare 0 is allowed). In
additive:AMOUNT, a bare number is milliseconds (additive:1000 = additive:1s).
A command killed by a signal counts as exit code 128 + the signal's number
(SIGKILL: 137) and is retried like any other failing code. A command that cannot
be started exits 127 (not found) or 126, without retrying. SIGINT and SIGTERM are
passed to the running command and stop the retries.
`;
