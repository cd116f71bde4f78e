import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors } from '../errors/catalog.ts';
import type { GatewayContext } from './gateway-context.ts';

export interface RouteCall {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  ctx: GatewayContext;
  /** The decoded path parameter of a prefix route. */
  param: string;
  search: URLSearchParams;
}

export interface Route {
  method: 'GET' | 'POST';
  /** An exact path, or (with `param`) a prefix ending in `/` followed by one parameter. */
  path: string;
  /** Names the path parameter (in errors) of a prefix route. */
  param?: string;
  /**
   * `model`: a model request; its lifecycle authenticates it, so that a refusal is recorded like
   * any other. `key`: the caller's key is checked before the handler. `open`: no key needed.
   */
  auth: 'model' | 'key' | 'open';
  handle(call: RouteCall): Promise<void> | void;
}

export interface RouteMatch {
  route: Route;
  /** The raw (still percent-encoded) parameter of a prefix route, '' otherwise. */
  rawParam: string;
}

/**
 * Finds the route of a method and path: 404 when no route has the path, 405 when routes have it
 * but not with this method. Exact paths first, then the longest prefix.
 */
export function matchRoute(table: readonly Route[], method: string, path: string): RouteMatch {
  const onPath = table.filter((r) => (r.param ? path.startsWith(r.path) && path.length > r.path.length : r.path === path));
  if (onPath.length === 0) throw errors.routeNotFound(method, path);
  const route = onPath.find((r) => r.method === method || (method === 'HEAD' && r.method === 'GET'));
  if (!route) throw errors.methodNotAllowed(method, path);
  return { route, rawParam: route.param ? path.slice(route.path.length) : '' };
}

/** A percent-encoded path parameter, decoded; malformed encoding is the client's 400, naming it. */
export function decodePathParam(raw: string, name: string): string {
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    throw errors.invalidRequest(`The ${name} in the path is not valid percent-encoding.`, name);
  }
  // A NUL cannot be in any id sluice issues, and PostgreSQL refuses it in text.
  if (value.includes('\0')) throw errors.invalidRequest(`The ${name} in the path contains a NUL byte.`, name);
  return value;
}
