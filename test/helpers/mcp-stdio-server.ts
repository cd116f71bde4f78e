/**
 * A local MCP server over stdio, written with the SDK's McpServer, for test/e2e/mcp.test.ts:
 * sluice starts it with the Node binary (process.execPath) and restarts it when it exits.
 * Tools: `echo`, `pid` (which process answered: a restart is a new one), `exit` (the process
 * exits at once, as a crash would); a prompt `greeting`; a resource `fixture://readme`.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'stdio-fixture', version: '1' });
server.registerTool('echo', { description: 'Says the text back.', inputSchema: { text: z.string() } }, ({ text }) => ({
  content: [{ type: 'text', text: `echo: ${text}` }],
}));
server.registerTool('pid', { description: 'The process id of the server.' }, () => ({
  content: [{ type: 'text', text: String(process.pid) }],
}));
server.registerTool('exit', { description: 'Exits the server process at once.' }, () => process.exit(3));
server.registerPrompt('greeting', { description: 'A greeting.', argsSchema: { name: z.string() } }, ({ name }) => ({
  messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${name}.` } }],
}));
server.registerResource('readme', 'fixture://readme', { mimeType: 'text/plain' }, (uri) => ({
  contents: [{ uri: uri.href, text: 'the stdio fixture readme' }],
}));

process.stderr.write(`stdio fixture started ${process.env.FIXTURE_GREETING ?? ''}\n`);
await server.connect(new StdioServerTransport());
