import type { HttpSpec } from '../operations/operation.js';
import { HTTP_OPERATIONS, type HttpOperationName } from '../operations/table.js';
import { recentAlerts, testAlerts } from './api-alerts.js';
import type { ApiDeps } from './api-deps.js';
import {
  allLoops,
  eventList,
  fleetAnswer,
  healthAnswer,
  loopHistory,
  loopTunings,
  nodeInfo,
  oneLoop,
  openStream,
  writeMetrics,
} from './api-read.js';
import {
  applyTuning,
  commandProfile,
  login,
  requestAutotune,
  resetFault,
  selectPreset,
  setLoop,
} from './api-write.js';
import { AuthThrottle } from './guards.js';
import { openApiDocument } from './openapi.js';
import { HttpError } from './respond.js';
import type { RouteContext } from './router.js';
import type { Sessions } from './security.js';
import type { EventStream } from './sse.js';
import type { DashboardAssets } from './static.js';

/** A handler's JSON answer; `handled` when it wrote the response itself (a stream, a file). */
export type Answer = { status?: number; body: unknown; headers?: Record<string, string> } | 'handled';

/** How a route appears in the OpenAPI document (openapi.ts): its operation's HTTP declaration. */
export type RouteDoc = HttpSpec & { summary: string };

export interface ApiRoute {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  write: boolean;
  open?: boolean;
  doc?: RouteDoc;
  handle(context: RouteContext): Answer | Promise<Answer>;
}

type Handler = ApiRoute['handle'];

export interface RouteDeps {
  api: ApiDeps;
  stream: EventStream;
  assets: DashboardAssets;
  sessions: Sessions;
  token: string | undefined;
  /** Wrong tokens sent to POST /api/session count as guesses too (default: a throttle of its own). */
  throttle?: AuthThrottle;
}

/**
 * Every route of the server: the dashboard's files, then one route per operation of the table
 * (src/operations) with its handler. openapi.ts documents them, the router matches them.
 */
export function apiRoutes(deps: RouteDeps): ApiRoute[] {
  const handlers = operationHandlers(deps, () => routes);
  const routes: ApiRoute[] = [
    ...fileRoutes(deps.assets),
    ...HTTP_OPERATIONS.map(({ name, summary, http }) => ({
      method: http.method,
      path: http.path,
      write: http.write,
      ...(http.open ? { open: true } : {}),
      doc: { summary, ...http },
      handle: handlers[name],
    })),
  ];
  return routes;
}

/** The handler of each operation: the compiler refuses a table entry without one. */
function operationHandlers(deps: RouteDeps, routes: () => ApiRoute[]): Record<HttpOperationName, Handler> {
  const { api, stream, sessions, token, throttle = new AuthThrottle() } = deps;
  return {
    node: () => ({ body: nodeInfo(api) }),
    health: () => healthAnswer(api),
    loops: () => ({ body: allLoops(api) }),
    loop: ({ params }) => ({ body: oneLoop(api, params.loop!) }),
    loopHistory: ({ params, url }) => loopHistory(api, params.loop!, url),
    events: ({ url }) => ({ body: eventList(api, url) }),
    recentAlerts: ({ url }) => recentAlerts(api, url),
    fleet: () => fleetAnswer(api),
    tunings: ({ params }) => ({ body: loopTunings(api, params.loop!) }),
    stream: (context) => openStream(api, stream, context),
    metrics: ({ res }) => writeMetrics(api, res),
    openApi: () => ({ body: openApiDocument(routes()) }),
    setLoop: ({ params, body }) => setLoop(api, params.loop!, body),
    resetFault: ({ params, body }) => resetFault(api, params.loop!, body),
    autotune: ({ params, body }) => requestAutotune(api, params.loop!, body),
    applyTuning: ({ params, body }) => applyTuning(api, params.loop!, body),
    selectPreset: ({ params, body }) => selectPreset(api, params.loop!, body),
    commandProfile: ({ params, body }) => commandProfile(api, params.loop!, body),
    testAlerts: ({ body }) => testAlerts(api, body),
    login: ({ body, throttleKey }) => login({ sessions, token, throttle }, body, throttleKey),
    logout: ({ req }) => ({
      status: 204,
      body: undefined,
      headers: { 'Set-Cookie': sessions.close(req.headers.cookie) },
    }),
  };
}

/** The dashboard's pages and assets: open to anyone, never in the OpenAPI document. */
function fileRoutes(assets: DashboardAssets): ApiRoute[] {
  const file = (name: string, { req, res }: RouteContext): Answer => {
    if (!assets.serve(req, res, name)) throw new HttpError(404, `no such file: ${name.slice(0, 64)}`);
    return 'handled';
  };
  return [
    { method: 'GET', path: '/', write: false, open: true, handle: (c) => file('index.html', c) },
    { method: 'GET', path: '/fleet', write: false, open: true, handle: (c) => file('fleet.html', c) },
    {
      method: 'GET',
      path: '/assets/:name',
      write: false,
      open: true,
      handle: (c) => file(c.params.name!, c),
    },
  ];
}
