import { readFile } from 'node:fs/promises';
import { extname, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConsoleCall } from './console-call.ts';

/**
 * Where vite puts the console's bundle (`npm run build:console`, run by `npm install` through
 * `prepare` and by `npm run build`). The same place from src/console (a checkout) and from
 * dist/console (the package): the repository's or package's dist/console-ui.
 */
export const CONSOLE_ROOT = fileURLToPath(new URL('../../dist/console-ui/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/**
 * No script, style or connection from anywhere but sluice itself (the console works offline);
 * inline styles allowed because uPlot sizes its canvas through them. Never framed.
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/** GET /console and /console/{file}: the bundle's files; the page itself for anything without an extension. */
export async function serveConsoleFile({ res, param }: ConsoleCall): Promise<void> {
  const wanted = param === '' || extname(param) === '' ? 'index.html' : param;
  const path = normalize(CONSOLE_ROOT + wanted);
  // normalize() resolves `..`: a path that leaves the bundle's folder is not one of its files.
  if (!path.startsWith(CONSOLE_ROOT) || path.includes(`${sep}.`)) return notFound(res);
  let body: Buffer;
  try {
    body = await readFile(path);
  } catch {
    if (wanted === 'index.html') {
      res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('The console is not built: run `npm run build:console` (npm install does it through `prepare`).\n');
      return;
    }
    return notFound(res);
  }
  // Vite names assets by content hash: they never change under one name; the page must be fresh.
  const cache = wanted.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
  res.writeHead(200, {
    'Content-Type': TYPES[extname(path)] ?? 'application/octet-stream',
    'Content-Length': body.length,
    'Cache-Control': cache,
    ...SECURITY_HEADERS,
  });
  res.end(body);
}

function notFound(res: ConsoleCall['res']): void {
  res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end('Not found\n');
}
