/**
 * A mistake the operator can fix (a busy port, no gateway at the URL, a wrong key): the CLI
 * prints its one-line message, which says what to do, and exits 1 without a stack trace.
 */
export class OperatorError extends Error {
  override readonly name = 'OperatorError';
}

/** A command line the command does not take: printed with a pointer to `--help`, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
