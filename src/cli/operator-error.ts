/**
 * A mistake the operator can fix (a busy port, no gateway at the URL, a wrong key): the CLI
 * prints its one-line message, which says what to do, and exits 1 without a stack trace.
 */
export class OperatorError extends Error {
  override readonly name = 'OperatorError';
  /** 1, or 2 where 1 already says something else (`sluice check`: violations were found). */
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A command line the command does not take: printed with a pointer to `--help`, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
