import { type AddressInfo, isIP } from 'node:net';
import { loadConfig } from '../config/load-config.ts';
import { createGateway, type Gateway } from '../server/app.ts';
import { OperatorError } from './operator-error.ts';

export interface ServeOptions {
  port?: number;
  host?: string;
  config?: string;
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

export async function serve(options: ServeOptions): Promise<void> {
  const config = loadConfig({ file: options.config, env: process.env, overrides: options });
  const { host } = config.server;
  if (!config.auth.master_key && !isLoopback(host)) {
    console.error(
      `Refusing to listen on ${host} without a key: set SLUICE_MASTER_KEY (or auth.master_key in the config), ` +
        'or bind to 127.0.0.1.',
    );
    process.exit(1);
  }
  const gateway = createGateway(config);
  const address = await listenOrExplain(gateway, host, config.server.port);
  let stopping: { signal: string; at: number } | undefined;
  const stop = (signal: string) => {
    if (stopping) {
      // Ctrl-C under `npm start` arrives twice within milliseconds: the terminal signals the whole
      // process group and npm forwards it to its child. Only a later signal means "stop now".
      if (signal === stopping.signal && Date.now() - stopping.at < 500) return;
      console.log(`${signal} again: stopping now, without draining`);
      process.exit(1);
    }
    stopping = { signal, at: Date.now() };
    console.log(`${signal}: draining open streams for up to ${config.server.drain_timeout_s}s`);
    gateway.shutdown().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  // Installed before the port is announced: a supervisor that signals as soon as it reads the line
  // must reach the drain, not node's default action (exit at once, the ledger unflushed).
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const where = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  console.log(`sluice listening on ${where}`);
  console.log(`providers: ${gateway.context.registry.providers().join(', ')}`);
  if (!config.auth.master_key) console.log('no SLUICE_MASTER_KEY set: serving without auth (loopback only)');
}

/** The port problems an operator fixes, as one line saying how; anything else keeps its stack. */
async function listenOrExplain(gateway: Gateway, host: string, port: number): Promise<AddressInfo> {
  try {
    return await gateway.listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const where = `${host}:${port}`;
    if (code === 'EADDRINUSE') {
      throw new OperatorError(
        `${where} is already in use: stop what is listening there, or pick another port with --port (or PORT).`,
      );
    }
    if (code === 'EACCES')
      throw new OperatorError(`no permission to listen on ${where}: use a port above 1023 (--port or PORT).`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw new OperatorError(`cannot listen on ${where}: ${host} is not an address of this machine (--host or HOST).`);
    }
    throw err;
  }
}
