/**
 * An operator's mistake in the config file or the environment: the message is one line that
 * names the file and the key (or variable) and says what to do, so the CLI prints it without a
 * stack trace. `problems` holds each mistake on its own (`sluice config check` prints one a
 * line, a refused reload lists them); the message is them joined.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly string[];

  constructor(message: string, problems: readonly string[] = [message]) {
    super(message);
    this.problems = problems;
  }
}
