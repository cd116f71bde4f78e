/**
 * The parts of `node:http` sluice calls, taken from the CommonJS module object. An ESM value import
 * from 'node:http' builds the module's namespace, which reads every export, and Node's http has
 * lazy ones (WebSocket, CloseEvent, MessageEvent) that load its bundled undici: measured on Node
 * 24.21, `import { createServer } from 'node:http'` alone takes a process from 45 to 58 MiB of RSS,
 * `process.getBuiltinModule('node:http')` leaves it at 45 (nodejs/node#59686 is the cost in time).
 * sluice calls upstreams with the undici package, never the bundled copy; in `sluice serve --workers
 * 1` idle, which loads much of what the bundle needs anyway, it was 35.0 -> 33.4-34.1 MiB of heap
 * used (six starts each). `import type` from 'node:http' is erased and stays as it is.
 * node-http.test.ts keeps the server's module graph from loading the bundled undici again.
 */
const http = process.getBuiltinModule('node:http');

export const { createServer, STATUS_CODES } = http;
