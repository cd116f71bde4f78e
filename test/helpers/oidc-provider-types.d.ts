/**
 * What the tests use of `oidc-provider`, which ships no types (and DefinitelyTyped's lag its
 * major versions): the constructor with its configuration, and the request handler.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  interface Configuration {
    clients: Record<string, unknown>[];
    findAccount(ctx: unknown, id: string): Promise<Account | undefined>;
    claims: Record<string, string[]>;
    scopes: string[];
    cookies: { keys: string[] };
    jwks: { keys: Record<string, unknown>[] };
    features: Record<string, { enabled: boolean }>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
