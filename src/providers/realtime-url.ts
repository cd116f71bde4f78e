/**
 * The Realtime WebSocket's URL under an HTTP base URL: the same host and path with the scheme
 * `ws:` or `wss:` (OpenAI: `https://api.openai.com/v1` -> `wss://api.openai.com/v1/realtime`),
 * the upstream's model in the query.
 */
export function realtimeUrl(baseUrl: string, model: string): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/realtime`);
  url.protocol = url.protocol === 'http:' ? 'ws:' : 'wss:';
  url.searchParams.set('model', model);
  return url.toString();
}
