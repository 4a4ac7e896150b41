import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a route's handler gets: the request, its parsed URL, path parameters and the body. */
export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Record<string, string>;
  /** Writes only: the body as received (at most MAX_BODY_BYTES). */
  body: Buffer;
  /** The remote address (lan-policy.ts peerAddress): streams are counted per address. */
  peer: string;
  /** Whose wrong tokens this request counts as (lan-policy.ts throttleKey). */
  throttleKey: string;
  /** Proved who it is (this machine, the token, a session); false for a public read or an open route. */
  trusted: boolean;
}

/** What the matcher needs of a route: its method, and its path in segments (`:name` matches one). */
export interface RouteShape {
  method: string;
  path: string;
}

export type Match<R extends RouteShape = RouteShape> =
  | { found: true; route: R; params: Record<string, string> }
  | { found: false; status: 404 | 405; allowed: string[] };

/** The route for a method and path (a table walk: a dozen routes, no framework needed). */
export function matchRoute<R extends RouteShape>(
  routes: readonly R[],
  method: string,
  pathname: string,
): Match<R> {
  const segments = pathname.split('/').filter((segment) => segment !== '');
  const allowed: string[] = [];
  for (const route of routes) {
    const params = matchPath(route.path, segments);
    if (!params) continue;
    if (route.method === method || (method === 'HEAD' && route.method === 'GET')) {
      return { found: true, route, params };
    }
    allowed.push(route.method);
  }
  return allowed.length > 0 ? { found: false, status: 405, allowed } : { found: false, status: 404, allowed };
}

function matchPath(path: string, segments: readonly string[]): Record<string, string> | undefined {
  const parts = path.split('/').filter((part) => part !== '');
  if (parts.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, part] of parts.entries()) {
    const segment = segments[index]!;
    if (part.startsWith(':')) {
      try {
        params[part.slice(1)] = decodeURIComponent(segment);
      } catch {
        return undefined;
      }
    } else if (part !== segment) {
      return undefined;
    }
  }
  return params;
}
