import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, it } from 'node:test';
import { PARTIAL_STREAM_HEADER, tapStreams } from './stream-tap.ts';

/**
 * Run by stream-tap.test.ts in a child `node --test`: a tapped server sends the streams named in
 * TAP_SAMPLE_STREAMS (comma-separated), and the child's exit code and output show what the tap did.
 */
const STREAMS: Record<string, string> = {
  whole:
    'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
  cut: 'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n',
};

const server = createServer((req, res) => {
  const name = req.url?.slice(1) ?? '';
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  if (name === 'abandoned') return void res.write(STREAMS.cut); // and never ends: the client leaves
  if (name === 'dropped') {
    res.write(STREAMS.cut);
    return void setTimeout(() => res.destroy(), 50); // the server drops the connection mid-stream
  }
  res.end(STREAMS[name === 'partial' ? 'cut' : name]);
});
tapStreams(server);
after(() => server.close());

function get(port: number, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const headers = name === 'partial' ? { [PARTIAL_STREAM_HEADER]: 'the sample cuts this stream on purpose' } : {};
    const req = request({ port, host: '127.0.0.1', path: `/${name}`, headers }, (res) => {
      res.on('data', () => {
        if (name !== 'abandoned') return;
        req.destroy();
        // The server sees the close on its next turn.
        setTimeout(resolve, 100);
      });
      res.on('end', resolve);
      res.on('error', () => resolve()); // the dropped stream
    });
    req.on('error', (err) => (name === 'dropped' ? resolve() : reject(err)));
    req.end();
  });
}

it('sends the sample streams', async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  for (const name of (process.env.TAP_SAMPLE_STREAMS ?? '').split(',')) await get(port, name);
});
