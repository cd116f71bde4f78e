import { ConfigError } from './config-error.ts';
import { formatKeyPath } from './key-path.ts';

/** `${NAME}` or `${NAME:-default}`; the default may be empty and contains no `}`. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces `${VAR}` in every string value of the parsed YAML with the environment variable.
 * An unset `${VAR}` is an error naming the variable, the key and the file: silently reading it
 * as empty turned a forgotten export into, say, a provider with no key. `${VAR:-default}` takes
 * the default when VAR is unset or empty, and `${VAR:-}` says "empty is fine" (an optional key:
 * the default applies, a provider whose api_key is empty stays disabled). A variable set to the
 * empty string counts as set, as in the shell.
 */
export function interpolateEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  file: string,
  path: PropertyKey[] = [],
  /** Filled with the key path of every string that held a reference (coerce-scalars.ts reads it). */
  interpolated: PropertyKey[][] = [],
): unknown {
  if (typeof value === 'string') {
    if (value.includes('${')) interpolated.push(path);
    return value.replace(REFERENCE, (_, name: string, fallback: string | undefined) => {
      const set = env[name];
      if (fallback !== undefined) return set ? set : fallback;
      if (set === undefined) {
        throw new ConfigError(
          `${file}: ${formatKeyPath(path)} uses \${${name}}, which is not set: export ${name}, ` +
            `or write \${${name}:-} to allow it empty (\${${name}:-value} for a default).`,
        );
      }
      return set;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolateEnv(v, env, file, [...path, i], interpolated));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, interpolateEnv(v, env, file, [...path, k], interpolated)]),
    );
  }
  return value;
}
