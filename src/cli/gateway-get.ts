import { OperatorError } from './operator-error.ts';

/**
 * One GET of a running gateway's API (`sluice logs`, `sluice spend`), its body as text: what an
 * operator can fix (no gateway there, a wrong key, a refused parameter) is an OperatorError saying how.
 */
export async function gatewayGet(url: string, key: string | undefined, path: string, params: URLSearchParams): Promise<string> {
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new OperatorError(`--url (or SLUICE_URL) is not a URL: "${url}".`);
  }
  const where = base.href.replace(/\/+$/, '');
  let res: Response;
  try {
    res = await fetch(`${where}${path}?${params}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const code = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new OperatorError(
      `no sluice answering at ${where} (${code}): start one with \`sluice serve\`, or point --url (or SLUICE_URL) at it.`,
    );
  }
  const text = await res.text();
  if (res.status === 401) {
    throw new OperatorError(
      `${where} refused ${key ? 'the key in SLUICE_MASTER_KEY' : 'a request without a key'} (401): set SLUICE_MASTER_KEY to the gateway's master key.`,
    );
  }
  if (res.ok) return text;
  let message: string | undefined;
  try {
    message = (JSON.parse(text) as { error?: { message?: string } }).error?.message;
  } catch {
    throw new OperatorError(`${where} did not answer like sluice (HTTP ${res.status}): is --url (or SLUICE_URL) right?`);
  }
  throw new OperatorError(`${where} answered ${res.status}: ${message ?? 'no message'}`);
}
