import type { z } from 'zod';
/** A report API that could not be read: its status and what it said, never the key sent. */
export class ReportError extends Error {
  override name = 'ReportError';
}

/** The most pages a report is followed through: a year of days at 31 a page, many times over. */
const MAX_PAGES = 100;

/** Long enough for a report of a month grouped by model and key; a hung API fails the run, not the gateway. */
const TIMEOUT_MS = 30_000;

/**
 * One GET of a report API, its JSON body. What the API answers besides 200 (a wrong admin key, a
 * rate limit) is a ReportError naming the status and the API's own message; the key is in the
 * headers only, and no message carries the headers.
 */
export async function getJson(what: string, url: URL, headers: Record<string, string>): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json', ...headers }, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    throw new ReportError(`${what} at ${url.origin} could not be reached (${cause})`);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ReportError(`${what} answered ${res.status} with a body that is not JSON`);
  }
  if (!res.ok) {
    const error = (body as { error?: { message?: unknown } | string } | null)?.error;
    const message = typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : 'no message';
    throw new ReportError(`${what} answered ${res.status}: ${message.slice(0, 300)}`);
  }
  return body;
}

/** The buckets of every page, following next_page while has_more (at most MAX_PAGES). */
export async function* pages<B>(
  what: string,
  url: URL,
  headers: Record<string, string>,
  schema: z.ZodType<{ data: B[]; has_more: boolean; next_page?: string | null }>,
): AsyncGenerator<B> {
  for (let n = 0; n < MAX_PAGES; n++) {
    const parsed = schema.safeParse(await getJson(what, url, headers));
    if (!parsed.success) throw new ReportError(`${what} answered a page sluice cannot read: ${parsed.error.issues[0]?.message}`);
    yield* parsed.data.data;
    if (!parsed.data.has_more || !parsed.data.next_page) return;
    url.searchParams.set('page', parsed.data.next_page);
  }
  throw new ReportError(`${what} had more than ${MAX_PAGES} pages`);
}
