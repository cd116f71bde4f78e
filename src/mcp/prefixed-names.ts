import { createHash } from 'node:crypto';

/** MCP's rule for tool names: letters, digits, `_`, `-`, `.`, at most 128 characters. */
const MAX_NAME = 128;
const INVALID = /[^A-Za-z0-9_.-]/g;

/**
 * The names a server's tools (or prompts) are offered under: `server__name`, with every character
 * a client would refuse replaced by `_`, and cut to 128 characters. When that changed the name (or
 * two names of the server meet), a short digest of the original keeps it unique: the same name
 * gets the same prefixed name on every listing, so a client's cached list stays right.
 */
export function prefixNames(server: string, names: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const taken = new Set<string>();
  for (const name of names) {
    const plain = `${server}__${name}`;
    let prefixed = plain.replace(INVALID, '_');
    if (prefixed !== plain || prefixed.length > MAX_NAME || taken.has(prefixed)) {
      const digest = createHash('sha256').update(name).digest('hex').slice(0, 8);
      prefixed = `${prefixed.slice(0, MAX_NAME - 9)}-${digest}`;
    }
    taken.add(prefixed);
    out.set(name, prefixed);
  }
  return out;
}
