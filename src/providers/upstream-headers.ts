/**
 * A provider's credentials and fixed headers for a batch or media call: the same object each
 * time, or one made per call (Azure's Entra ID token, renewed before it expires).
 */
export type UpstreamHeaders = () => Record<string, string> | Promise<Record<string, string>>;
