import type { z } from 'zod';
import type { ApiDeps } from './api-deps.js';
import { allLoops, eventList, loopHistory, loopTunings, nodeInfo, oneLoop } from './api-read.js';
import {
  applyTuning,
  commandProfile,
  presetRequest,
  profileRequest,
  requestAutotune,
  resetFault,
  selectPreset,
  setLoop,
} from './api-write.js';
import { fleetResponse } from './fleet.js';
import { AuthThrottle } from './guards.js';
import { openApiDocument } from './openapi.js';
import { historyResponse } from './recorded-schemas.js';
import { HttpError } from './respond.js';
import type { RouteContext } from './router.js';
import {
  autotuneRequest,
  commandResult,
  eventsResponse,
  healthView,
  loopsResponse,
  loopView,
  nodeResponse,
  sessionRequest,
  setRequest,
  tuningRequest,
  tuningsResponse,
} from './schemas.js';
import { lockedOutMessage, type Sessions, tokenMatches } from './security.js';
import type { EventStream } from './sse.js';
import type { DashboardAssets } from './static.js';

/** A handler's JSON answer; `handled` when it wrote the response itself (a stream, a file). */
export type Answer = { status?: number; body: unknown; headers?: Record<string, string> } | 'handled';

/** How a route appears in the OpenAPI document (openapi.ts), and what its 200 answer must parse as. */
export interface RouteDoc {
  summary: string;
  /** Query parameters: name → description. */
  query?: Record<string, string>;
  request?: z.ZodType;
  response?: z.ZodType;
  /** Non-JSON answers: their content type. */
  produces?: string;
  /** The success status when not 200 (204: no body). */
  status?: number;
}

export interface ApiRoute {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  write: boolean;
  open?: boolean;
  doc?: RouteDoc;
  handle(context: RouteContext): Answer | Promise<Answer>;
}

export interface RouteDeps {
  api: ApiDeps;
  stream: EventStream;
  assets: DashboardAssets;
  sessions: Sessions;
  token: string | undefined;
  /** Wrong tokens sent to POST /api/session count as guesses too (default: a throttle of its own). */
  throttle?: AuthThrottle;
}

/** Every route of the server: the table openapi.ts documents and the router matches. */
export function apiRoutes(deps: RouteDeps): ApiRoute[] {
  const { api, stream, assets, sessions, token, throttle = new AuthThrottle() } = deps;
  const file = (name: string, { req, res }: RouteContext): Answer => {
    if (!assets.serve(req, res, name)) throw new HttpError(404, `no such file: ${name.slice(0, 64)}`);
    return 'handled';
  };
  const routes: ApiRoute[] = [
    { method: 'GET', path: '/', write: false, open: true, handle: (c) => file('index.html', c) },
    { method: 'GET', path: '/fleet', write: false, open: true, handle: (c) => file('fleet.html', c) },
    {
      method: 'GET',
      path: '/assets/:name',
      write: false,
      open: true,
      handle: (c) => file(c.params.name!, c),
    },
    {
      method: 'GET',
      path: '/api/node',
      write: false,
      doc: { summary: 'Node identity, version and health', response: nodeResponse },
      handle: () => ({ body: nodeInfo(api) }),
    },
    {
      method: 'GET',
      path: '/api/health',
      write: false,
      doc: {
        summary: 'Whether every loop cycled recently (the watchdog rule): 200 when ok, 503 when not',
        response: healthView,
      },
      handle: () => {
        const health = api.health();
        return { status: health.ok ? 200 : 503, body: health };
      },
    },
    {
      method: 'GET',
      path: '/api/loops',
      write: false,
      doc: { summary: 'Every loop with its live status', response: loopsResponse },
      handle: () => ({ body: allLoops(api) }),
    },
    {
      method: 'GET',
      path: '/api/loops/:loop',
      write: false,
      doc: { summary: 'One loop with its live status', response: loopView },
      handle: ({ params }) => ({ body: oneLoop(api, params.loop!) }),
    },
    {
      method: 'GET',
      path: '/api/loops/:loop/history',
      write: false,
      doc: {
        summary:
          "A loop's measured value, setpoint, output and action over a time range, downsampled, with its recorded sensors",
        query: {
          since: 'Start: ISO time or a duration back from now (6h, 90m, 7d). Default 6 h before until.',
          until: 'End: ISO time or a duration back from now. Default now.',
          maxPoints: 'At most this many points (bucket averages beyond). Default 500, at most 5000.',
        },
        response: historyResponse,
      },
      handle: ({ params, url }) => loopHistory(api, params.loop!, url),
    },
    {
      method: 'GET',
      path: '/api/fleet',
      write: false,
      doc: {
        summary:
          "Every node's loops on this node's MQTT broker, from their retained states (404 when this node has no broker)",
        response: fleetResponse,
      },
      handle: () => {
        if (!api.fleet) {
          throw new HttpError(
            404,
            'no fleet view: this node has no MQTT broker (the view reads the nodes on it)',
          );
        }
        return { body: api.fleet() };
      },
    },
    {
      method: 'GET',
      path: '/api/events',
      write: false,
      doc: {
        summary: 'Recorded events, oldest first (the newest `limit` that match)',
        query: {
          loop: 'Only this loop',
          kind: 'Only this kind (setpoint-changed, fault-raised, actuator…)',
          since: 'ISO time or duration back from now',
          until: 'ISO time or duration back from now',
          limit: 'At most this many (default 100, at most 1000)',
        },
        response: eventsResponse,
      },
      handle: ({ url }) => ({ body: eventList(api, url) }),
    },
    {
      method: 'POST',
      path: '/api/loops/:loop',
      write: true,
      doc: {
        summary:
          'Change the setpoint and/or mode (the rules of the MQTT set command; stored before the answer)',
        request: setRequest,
        response: commandResult,
      },
      handle: ({ params, body }) => setLoop(api, params.loop!, body),
    },
    {
      method: 'POST',
      path: '/api/loops/:loop/fault-reset',
      write: true,
      doc: { summary: 'Reset a latched fault (empty body or {})', response: commandResult },
      handle: ({ params, body }) => resetFault(api, params.loop!, body),
    },
    {
      method: 'POST',
      path: '/api/loops/:loop/autotune',
      write: true,
      doc: {
        summary:
          'Start ({} or {"action":"start",…}) or cancel ({"action":"cancel"}) the relay autotune (the rules of MQTT autotune/set; stored before the answer)',
        request: autotuneRequest,
        response: commandResult,
      },
      handle: ({ params, body }) => requestAutotune(api, params.loop!, body),
    },
    {
      method: 'POST',
      path: '/api/loops/:loop/tuning',
      write: true,
      doc: {
        summary:
          'Put a stored tuning in force: a version, "latest" (accept the newest) or "config" (the file’s gains); the answer says whether it changed',
        request: tuningRequest,
        response: commandResult,
      },
      handle: ({ params, body }) => applyTuning(api, params.loop!, body),
    },
    {
      method: 'POST',
      path: '/api/loops/:loop/preset',
      write: true,
      doc: {
        summary:
          'Select one of the loop’s presets ({"preset":"eco"}), or none ({"preset":null}) (the rules of MQTT preset/set; stored before the answer); the answer says whether it changed',
        request: presetRequest,
        response: commandResult,
      },
      handle: ({ params, body }) => selectPreset(api, params.loop!, body),
    },
    {
      method: 'POST',
      path: '/api/loops/:loop/profile',
      write: true,
      doc: {
        summary:
          'Start ({"action":"start","name":"ale"}), pause, resume or stop the loop’s profile (the rules of MQTT profile/set; stored before the answer); the answer says whether it changed',
        request: profileRequest,
        response: commandResult,
      },
      handle: ({ params, body }) => commandProfile(api, params.loop!, body),
    },
    {
      method: 'GET',
      path: '/api/loops/:loop/tunings',
      write: false,
      doc: {
        summary: "A loop's stored tunings, newest first, and the one in force",
        response: tuningsResponse,
      },
      handle: ({ params }) => ({ body: loopTunings(api, params.loop!) }),
    },
    {
      method: 'GET',
      path: '/api/stream',
      write: false,
      doc: {
        summary: 'Server-Sent Events: `status` (a Loop) after each change, `event` (an Event) as recorded',
        query: { loop: 'Only this loop' },
        produces: 'text/event-stream',
      },
      handle: ({ req, res, url, peer, trusted }) => {
        // HEAD takes no slot: its writes are dropped, so it would hold one and never be drained.
        if (req.method === 'HEAD') {
          return {
            status: 200,
            body: undefined,
            headers: { 'Content-Type': 'text/event-stream; charset=utf-8' },
          };
        }
        const loop = url.searchParams.get('loop') ?? undefined;
        if (!stream.open(res, loop, allLoops(api).loops, peer, trusted ? 'trusted' : 'public')) {
          throw new HttpError(503, 'too many open streams; close another page or try again later');
        }
        return 'handled';
      },
    },
    {
      method: 'GET',
      path: '/metrics',
      write: false,
      doc: { summary: 'Prometheus metrics (text format)', produces: 'text/plain; version=0.0.4' },
      handle: async ({ res }): Promise<Answer> => {
        if (!api.metrics) throw new HttpError(404, 'metrics are off');
        const text = await api.metrics.render();
        res.writeHead(200, { 'Content-Type': api.metrics.contentType, 'Cache-Control': 'no-store' });
        res.end(text);
        return 'handled';
      },
    },
    {
      method: 'GET',
      path: '/api/openapi.json',
      write: false,
      open: true,
      doc: { summary: 'This document (OpenAPI 3.1)' },
      handle: () => ({ body: openApiDocument(routes) }),
    },
    {
      method: 'POST',
      path: '/api/session',
      write: true,
      open: true,
      doc: {
        summary: 'Log the dashboard in with the API token (sets an HttpOnly cookie; 204)',
        request: sessionRequest,
        status: 204,
      },
      handle: ({ body, throttleKey }) => {
        const lockedMs = throttle.lockedForMs(throttleKey);
        if (lockedMs > 0) {
          throttle.throttled++;
          throw lockedOut(lockedMs);
        }
        const sent = parseTokenBody(body);
        if (token === undefined || sent === undefined || !tokenMatches(sent, token)) {
          if (token !== undefined && sent !== undefined) throttle.failure(throttleKey);
          throw new HttpError(401, 'wrong API token');
        }
        throttle.success(throttleKey);
        return { status: 204, body: undefined, headers: { 'Set-Cookie': sessions.open().cookie } };
      },
    },
    {
      method: 'DELETE',
      path: '/api/session',
      write: false,
      open: true,
      doc: { summary: 'Log the dashboard out (204)', status: 204 },
      handle: ({ req }) => ({
        status: 204,
        body: undefined,
        headers: { 'Set-Cookie': sessions.close(req.headers.cookie) },
      }),
    },
  ];
  return routes;
}

/** 429 for an address locked out by the wrong-token throttle (lan-policy.ts). */
function lockedOut(lockedMs: number): HttpError {
  const retryAfterS = Math.ceil(lockedMs / 1000);
  return new HttpError(429, lockedOutMessage(retryAfterS), { 'Retry-After': String(retryAfterS) });
}

function parseTokenBody(body: Buffer): string | undefined {
  try {
    const value = JSON.parse(body.toString('utf8')) as { token?: unknown };
    return typeof value.token === 'string' ? value.token : undefined;
  } catch {
    return undefined;
  }
}
