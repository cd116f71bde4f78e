import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { upstreamHttpError } from '../../errors/upstream-error.ts';

const PROVIDER = 'bedrock';

/**
 * The status an exception stands for, keyed by its name in lower case (HTTP errors say
 * `ValidationException`, stream exceptions `validationException`). Mostly Bedrock's own statuses;
 * the model's failures are 424 there, which would read as the client's fault, so they are 502.
 */
const exceptionStatus: Record<string, number> = {
  validationexception: 400,
  accessdeniedexception: 403,
  resourcenotfoundexception: 404,
  modeltimeoutexception: 408,
  throttlingexception: 429,
  modelnotreadyexception: 429,
  internalserverexception: 500,
  modelerrorexception: 502,
  modelstreamerrorexception: 502,
  serviceunavailableexception: 503,
};

interface ErrorBody {
  message?: unknown;
  Message?: unknown;
  __type?: unknown;
}

function statusOf(type: string | undefined): number | undefined {
  const key = type?.toLowerCase();
  return key !== undefined && Object.hasOwn(exceptionStatus, key) ? exceptionStatus[key] : undefined;
}

/** The body's message, whichever capitalization it came in; a non-string one is no message. */
function messageOf(body: ErrorBody): string | undefined {
  if (typeof body.message === 'string') return body.message;
  return typeof body.Message === 'string' ? body.Message : undefined;
}

/** An HTTP error from Converse: `{"message": …}` with the exception name in `x-amzn-errortype`. */
export function mapBedrockError(status: number, headers: IncomingHttpHeaders, text: string): GatewayError {
  let body: ErrorBody = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') body = parsed as ErrorBody;
  } catch {
    // Not JSON (a proxy's HTML page, say): the raw text is the message.
  }
  const header = headers['x-amzn-errortype'];
  // "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"; __type may carry a namespace.
  const raw = typeof header === 'string' ? header : typeof body.__type === 'string' ? body.__type : undefined;
  const type = raw?.split(':')[0].split('#').pop() || undefined;
  return upstreamHttpError({
    provider: PROVIDER,
    status: statusOf(type) ?? status,
    message: messageOf(body) ?? text.slice(0, 500),
    upstreamType: type,
    headers,
  });
}

/** An exception message inside a 200 ConverseStream body (`:exception-type` header, `{"message"}` payload). */
export function bedrockStreamException(type: string, payload: unknown): GatewayError {
  const body = payload && typeof payload === 'object' ? (payload as ErrorBody) : {};
  return upstreamHttpError({
    provider: PROVIDER,
    status: statusOf(type) ?? 502,
    // The exception came inside a 200 event stream.
    httpStatus: 200,
    message: messageOf(body),
    upstreamType: type,
  });
}
