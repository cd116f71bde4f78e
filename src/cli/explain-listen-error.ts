import { OperatorError } from './operator-error.ts';

/** A port problem an operator fixes, as an OperatorError saying how; anything else is returned as it is. */
export function explainListenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') {
    return new OperatorError(
      `${where} is already in use: stop what is listening there, or pick another port with --port (or PORT).`,
    );
  }
  if (code === 'EACCES') return new OperatorError(`no permission to listen on ${where}: use a port above 1023 (--port or PORT).`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new OperatorError(`cannot listen on ${where}: ${host} is not an address of this machine (--host or HOST).`);
  }
  return err;
}
