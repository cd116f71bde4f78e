/**
 * Writing SSE frames. Payloads here are JSON from JSON.stringify, which never contains a raw line
 * break, so a data frame is one `data:` line.
 */
export const DONE_FRAME = 'data: [DONE]\n\n';
export const HEARTBEAT_FRAME = ': heartbeat\n\n';

export function dataFrame(json: string): string {
  return `data: ${json}\n\n`;
}

export function namedFrame(event: string, json: string): string {
  if (/[\r\n]/.test(event)) throw new Error('SSE event names may not contain CR or LF');
  return `event: ${event}\ndata: ${json}\n\n`;
}
