/**
 * An operator's mistake in the config file or the environment: the message is one line that
 * names the file and the key (or variable) and says what to do, so the CLI prints it without a
 * stack trace.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
