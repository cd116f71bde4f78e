import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors } from '../errors/catalog.ts';
import type { Caller } from '../pipeline/admit.ts';
import type { GatewayContext } from './gateway-context.ts';

export interface RouteCall {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  ctx: GatewayContext;
  /** The decoded path parameter of a prefix route. */
  param: string;
  /** The decoded `{name}` segments of a template route. */
  params: Record<string, string>;
  search: URLSearchParams;
  /** Who called a `key` or `admin` route (authenticated before the handler); null on the others. */
  caller: Caller | null;
}

export interface Route {
  method: 'GET' | 'POST';
  /**
   * An exact path; (with `param`) a prefix ending in `/` followed by one parameter; or a template
   * whose `{name}` segments each match one non-empty segment (`/{project}/{endpoint}/v1/responses`).
   */
  path: string;
  /** Names the path parameter (in errors) of a prefix route. */
  param?: string;
  /**
   * `model`: a model request; its lifecycle authenticates it, so that a refusal is recorded like
   * any other. `key`: the caller's key is checked before the handler. `admin`: the same, and the
   * key must be the master key or an admin key (else 403). `open`: no key needed.
   */
  auth: 'model' | 'key' | 'admin' | 'open';
  handle(call: RouteCall): Promise<void> | void;
}

export interface RouteMatch {
  route: Route;
  /** The raw (still percent-encoded) parameter of a prefix route, '' otherwise. */
  rawParam: string;
  /** The raw segments of a template route by name, {} otherwise. */
  rawParams: Record<string, string>;
}

/**
 * Finds the route of a method and path: 404 when no route has the path, 405 when routes have it
 * but not with this method. Exact paths first, then templates, then prefixes.
 */
export function matchRoute(table: readonly Route[], method: string, path: string): RouteMatch {
  const onPath: { route: Route; rawParams: Record<string, string> | undefined }[] = [];
  for (const route of table) {
    const rawParams = route.path.includes('{') ? matchTemplate(route.path, path) : undefined;
    const matched = route.param
      ? path.startsWith(route.path) && path.length > route.path.length
      : (rawParams ?? route.path === path);
    if (matched) onPath.push({ route, rawParams });
  }
  if (onPath.length === 0) throw errors.routeNotFound(method, path);
  const rank = (r: Route) => (r.param ? 2 : r.path.includes('{') ? 1 : 0);
  onPath.sort((a, b) => rank(a.route) - rank(b.route));
  const found = onPath.find(({ route: r }) => r.method === method || (method === 'HEAD' && r.method === 'GET'));
  if (!found) throw errors.methodNotAllowed(method, path);
  const { route, rawParams } = found;
  return { route, rawParam: route.param ? path.slice(route.path.length) : '', rawParams: rawParams ?? {} };
}

/** The `{name}` segments of `path` when it has the template's shape; undefined otherwise. */
function matchTemplate(template: string, path: string): Record<string, string> | undefined {
  const want = template.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const segment = want[i];
    if (segment.startsWith('{') && segment.endsWith('}')) {
      if (!got[i]) return undefined;
      params[segment.slice(1, -1)] = got[i];
    } else if (segment !== got[i]) {
      return undefined;
    }
  }
  return params;
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
