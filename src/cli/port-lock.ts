import { rmSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { explainListenError } from './explain-listen-error.ts';
import { OperatorError } from './operator-error.ts';

/**
 * The workers of `sluice serve --workers N` bind the port with SO_REUSEPORT, which lets any other
 * process of the same user bind it as well: the kernel then spreads the connections over both.
 * A second `sluice serve --workers` on a port in use joined the first that way (5 of 12 requests
 * went to it, with another config and no master key). So the supervisor holds this lock on the
 * port for as long as it serves, and a second one refuses to start.
 *
 * The lock is a local socket that only one process can listen on: on Linux in the abstract
 * namespace, which has no file to leave behind and is scoped to the network namespace, as ports
 * are (a container with its own network has its own of both); elsewhere a socket file in the
 * temporary directory, taken over when whoever made it is gone. The kernel releases it with the
 * process, however that ends. Keyed by the port alone: with SO_REUSEPORT, a second gateway on
 * 127.0.0.1 would take that address's connections from one on 0.0.0.0.
 */
export interface PortLock {
  release(): void;
}

function lockAddress(port: number): string {
  if (process.platform === 'linux') return `\0sluice-port-${port}`;
  if (process.platform === 'win32') return `\\\\.\\pipe\\sluice-port-${port}`;
  return join(tmpdir(), `sluice-port-${port}.sock`);
}

/**
 * Takes the lock of `port`, or throws an OperatorError naming the sluice (its pid) that holds
 * it. Whoever connects is told the holder's pid, and nothing else.
 */
export async function lockPort(port: number, address = lockAddress(port)): Promise<PortLock> {
  for (let attempt = 1; ; attempt++) {
    const server = createServer((socket) => socket.end(`${process.pid}\n`));
    const failure = await listen(server, address);
    if (!failure) {
      // The lock alone must not keep a supervisor alive whose workers are all gone.
      server.unref();
      return { release: () => server.close() };
    }
    if (failure.code !== 'EADDRINUSE') throw failure;
    const holder = await askHolder(address);
    // A socket file whose process is gone (not Linux: an abstract socket goes with its process).
    if (holder === undefined && attempt === 1 && !address.startsWith('\0') && process.platform !== 'win32') {
      rmSync(address, { force: true });
      continue;
    }
    throw new OperatorError(
      `port ${port} is already served by sluice${holder ? ` (pid ${holder})` : ''}: ` +
        'a second gateway would share its connections (SO_REUSEPORT). Stop that one first, or pick another port with --port (or PORT).',
    );
  }
}

/**
 * The port a supervisor's workers will share, locked for it: an explicit port is locked first
 * (a second sluice is named as such), then bound once without SO_REUSEPORT and let go, which
 * refuses it at once when any other program holds it (rather than in a worker, after loading the
 * whole gateway) and makes port 0 a free port, locked in turn.
 */
export async function claimPort(host: string, port: number): Promise<{ port: number; lock: PortLock }> {
  const early = port === 0 ? undefined : await lockPort(port);
  let bound: number;
  try {
    bound = await probe(host, port);
  } catch (err) {
    early?.release();
    throw err;
  }
  return { port: bound, lock: early ?? (await lockPort(bound)) };
}

/** Binds host:port alone for a moment: the port it got, or the explained reason it could not. */
async function probe(host: string, port: number): Promise<number> {
  const server = createServer();
  const failure = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    server.listen({ host, port, exclusive: true }, () => resolve(undefined));
  });
  if (failure) throw explainListenError(failure, host, port);
  const bound = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return bound;
}

function listen(server: Server, address: string): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    server.listen(address, () => resolve(undefined));
  });
}

/** The pid the lock's holder answers with, or undefined when nothing answers (within 2 s). */
function askHolder(address: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(address);
    socket.setTimeout(2_000, () => socket.destroy());
    socket.setEncoding('utf8').on('data', (d: string) => (text += d));
    socket.on('error', () => resolve(undefined));
    socket.on('close', () => {
      const pid = Number.parseInt(text, 10);
      resolve(Number.isSafeInteger(pid) && pid > 0 ? pid : undefined);
    });
  });
}
