import { GatewayError } from './gateway-error.ts';

/** Text in, the same text with secrets replaced. */
export type Redact = (text: string) => string;

const REDACTED = '[redacted]';

/**
 * Configured secrets shorter than this are not looked for: no real key is that short, and
 * replacing a short word everywhere would mangle ordinary messages.
 */
const MIN_SECRET_LENGTH = 8;

/** A run of key characters that holds a digit (or a mask `*`): real keys do, ordinary words seldom. */
const withDigit = (chars: string, min: number) => `(?=${chars}*[0-9*])${chars}{${min},}`;

/**
 * Shapes of provider credentials, for keys sluice was not configured with (an upstream echoing
 * another key, a key in a proxy's error page). Each keeps its well-known prefix, so the message
 * still says what kind of credential was there. Ordered: specific shapes before the generic runs.
 */
const KEY_SHAPES: readonly [RegExp, string][] = [
  // `Authorization: Bearer <token>` echoed back.
  [new RegExp(`\\bBearer\\s+${withDigit('[A-Za-z0-9._~+/-]', 16)}=*`, 'g'), `Bearer ${REDACTED}`],
  // OpenAI (sk-, sk-proj-, masked echoes with *), Anthropic (sk-ant-), OpenRouter (sk-or-), DeepSeek.
  [new RegExp(`\\bsk-${withDigit('[A-Za-z0-9_*-]', 16)}`, 'g'), `sk-${REDACTED}`],
  // Google API keys: AIza + 35 characters.
  [/\bAIza[0-9A-Za-z_-]{30,}/g, `AIza${REDACTED}`],
  // AWS access key ids; Bedrock API keys (ABSK…).
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\bABSK[A-Za-z0-9+/=]{20,}/g, `ABSK${REDACTED}`],
  // Groq (gsk_), Hugging Face (hf_), xAI (xai-), GitHub tokens.
  [/\b(?:gsk_|hf_|xai-|gh[pousr]_)[A-Za-z0-9]{20,}/g, REDACTED],
  // JSON Web Tokens.
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, REDACTED],
  // Long hex runs standing alone (32+: API secrets, HMAC keys). Part of an identifier they stay
  // (`req_…` request ids in OpenAI's messages, `resp_…` ids), and so do UUIDs, which have dashes.
  [/(?<![0-9A-Za-z_-])[0-9A-Fa-f]{32,}(?![0-9A-Za-z_-])/g, REDACTED],
  // Long base64 runs (40+, mixing digits, lower and upper case: AWS secret keys and the like).
  [
    /(?<![A-Za-z0-9+/=_-])(?=[A-Za-z0-9+/_-]*[0-9])(?=[A-Za-z0-9+/_-]*[a-z])(?=[A-Za-z0-9+/_-]*[A-Z])[A-Za-z0-9+/_-]{40,}={0,2}(?![A-Za-z0-9+/=_-])/g,
    REDACTED,
  ],
];

/**
 * One redactor for upstream text on its way to a client, a log or the ledger: every configured
 * secret (provider keys, AWS secrets, bearer tokens, the master key), then anything shaped like a
 * credential. The secrets are given once, at startup, by whoever read the configuration.
 */
export function createRedactor(secrets: Iterable<string | undefined | null>): Redact {
  // Longest first, so a secret that contains another is replaced whole.
  const known = [
    ...new Set([...secrets].filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH)),
  ].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const secret of known) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    for (const [pattern, replacement] of KEY_SHAPES) out = out.replace(pattern, replacement);
    return out;
  };
}

/** The error with its message and param redacted: the same object when nothing needed it. */
export function redactError(err: GatewayError, redact: Redact): GatewayError {
  const message = redact(err.message);
  const param = err.param === null ? null : redact(err.param);
  // The upstream's own type and code are its text too: an echoed key may sit there as well.
  const upstreamType = err.upstreamType === undefined ? undefined : redact(err.upstreamType);
  const upstreamCode = err.upstreamCode === undefined ? undefined : redact(err.upstreamCode);
  if (message === err.message && param === err.param && upstreamType === err.upstreamType && upstreamCode === err.upstreamCode) {
    return err;
  }
  return new GatewayError({
    code: err.code,
    status: err.status,
    type: err.type,
    message,
    param,
    retryable: err.retryable,
    fallbackable: err.fallbackable,
    upstreamStatus: err.upstreamStatus,
    upstreamType,
    upstreamCode,
    headers: err.headers,
    provider: err.provider,
    cause: err.cause,
  });
}
