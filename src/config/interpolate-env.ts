import { ConfigError } from './config-error.ts';
import { formatKeyPath } from './key-path.ts';

/** `${NAME}` or `${NAME:-default}`; the default may be empty and contains no `}`. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces `${VAR}` in every string value of the parsed YAML with the environment variable.
 * An unset `${VAR}` is an error naming the variable, the key and the file (every unset one at
 * once, so that a check lists them all): silently reading it as empty turned a forgotten export
 * into, say, a provider with no key. `${VAR:-default}` takes the default when VAR is unset or
 * empty, and `${VAR:-}` says "empty is fine" (an optional key: the default applies, a provider
 * whose api_key is empty stays disabled). A variable set to the empty string counts as set, as
 * in the shell.
 */
export function interpolateEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  file: string,
  /** Filled with the key path of every string that held a reference (coerce-scalars.ts reads it). */
  interpolated: PropertyKey[][] = [],
): unknown {
  const unset: string[] = [];
  const out = substitute(value, env, [], interpolated, unset);
  if (unset.length > 0) {
    const problems = unset.map((problem) => `${file}: ${problem}`);
    throw new ConfigError(problems.join('; '), problems);
  }
  return out;
}

function substitute(
  value: unknown,
  env: NodeJS.ProcessEnv,
  path: PropertyKey[],
  interpolated: PropertyKey[][],
  unset: string[],
): unknown {
  if (typeof value === 'string') {
    if (value.includes('${')) interpolated.push(path);
    return value.replace(REFERENCE, (_, name: string, fallback: string | undefined) => {
      const set = env[name];
      if (fallback !== undefined) return set ? set : fallback;
      if (set === undefined) {
        unset.push(
          `${formatKeyPath(path)} uses \${${name}}, which is not set: export ${name}, ` +
            `or write \${${name}:-} to allow it empty (\${${name}:-value} for a default).`,
        );
        return '';
      }
      return set;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substitute(v, env, [...path, i], interpolated, unset));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, env, [...path, k], interpolated, unset)]));
  }
  return value;
}
