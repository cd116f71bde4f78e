import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface McpHttpServer {
  /** Its MCP endpoint, `http://127.0.0.1:{port}/mcp`. */
  url: string;
  close(): Promise<void>;
}

/**
 * An upstream MCP server over Streamable HTTP on 127.0.0.1, stateless: `build` makes the server
 * (its tools registered) that answers each POST.
 */
export async function startMcpHttpServer(build: () => McpServer): Promise<McpHttpServer> {
  const http: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        if (req.method !== 'POST') return void res.writeHead(405).end();
        const server = build();
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on('close', () => void transport.close().then(() => server.close()));
        await server.connect(transport);
        await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')));
      })();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => new Promise<void>((resolve) => http.close(() => resolve())) };
}
