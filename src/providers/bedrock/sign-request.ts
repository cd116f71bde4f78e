import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { SignatureV4 } from '@smithy/signature-v4';
import type { UpstreamRequest } from '../../upstream/http-client.ts';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** SigV4 with IAM credentials, or a Bedrock API key sent as a bearer token (no signature). */
export type BedrockAuth = { kind: 'sigv4'; credentials: AwsCredentials; region: string } | { kind: 'bearer'; token: string };

export type RequestSigner = (request: UpstreamRequest) => Promise<UpstreamRequest>;

type Bytes = string | ArrayBuffer | ArrayBufferView;

const toBuffer = (data: Bytes, encoding?: BufferEncoding): Buffer =>
  typeof data === 'string'
    ? Buffer.from(data, encoding ?? 'utf8')
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** The signer's hash: SHA-256, or HMAC-SHA-256 when given a key, from node:crypto. */
class NodeSha256 {
  private readonly hash: Hash | Hmac;

  constructor(secret?: Bytes) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }

  update(data: Bytes, encoding?: 'utf8' | 'ascii' | 'latin1'): void {
    this.hash.update(toBuffer(data, encoding));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

/**
 * Adds the credentials to a finished request. SigV4 signs the method, path, host, the other
 * headers and the body hash under the `bedrock` signing name; `now` is injectable so a signature
 * is reproducible in tests.
 */
export function createRequestSigner(auth: BedrockAuth, now: () => Date = () => new Date()): RequestSigner {
  if (auth.kind === 'bearer') {
    return async (request) => ({ ...request, headers: { ...request.headers, authorization: `Bearer ${auth.token}` } });
  }
  // @smithy/signature-v4 (and the @smithy/core it pulls in, ~1.9 MiB of heap with the codec in
  // decode-stream.ts) is loaded by the first signature: a gateway without Bedrock never holds it.
  let signer: Promise<SignatureV4> | undefined;
  return async (request) => {
    signer ??= import('@smithy/signature-v4').then(
      ({ SignatureV4 }) =>
        new SignatureV4({ service: 'bedrock', region: auth.region, credentials: auth.credentials, sha256: NodeSha256 }),
    );
    const url = new URL(request.url);
    const query: Record<string, string> = {};
    for (const [key, value] of url.searchParams) query[key] = value;
    const sigv4 = await signer;
    const signed = await sigv4.sign(
      {
        method: request.method ?? 'POST',
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port ? Number(url.port) : undefined,
        // Already percent-encoded (`%3A` in model ids); SigV4 encodes it once more, as AWS expects.
        path: url.pathname,
        query,
        headers: { ...request.headers, host: url.host },
        body: request.body,
      },
      { signingDate: now() },
    );
    return { ...request, headers: signed.headers as Record<string, string> };
  };
}
