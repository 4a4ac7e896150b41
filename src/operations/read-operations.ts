import { alertsResponse } from './alert-schemas.js';
import { loopTuningView, tuningsResponse as looseTunings } from './client-schemas.js';
import { fleetResponse } from './fleet-schemas.js';
import type { Operation } from './operation.js';
import { historyResponse } from './recorded-schemas.js';
import { eventsResponse, healthView, loopsResponse, loopView, nodeResponse } from './schemas.js';
import { tuningsResponse } from './write-schemas.js';

/** What can be read of a node: its identity, loops, history, events, alerts, tunings, streams. */
export const READ_OPERATIONS = {
  node: {
    summary: 'Node identity, version and health',
    http: { method: 'GET', path: '/api/node', write: false, response: nodeResponse },
  },
  health: {
    summary: 'Whether every loop cycled recently (the watchdog rule): 200 when ok, 503 when not',
    http: { method: 'GET', path: '/api/health', write: false, response: healthView },
  },
  loops: {
    summary: 'Every loop with its live status',
    http: { method: 'GET', path: '/api/loops', write: false, response: loopsResponse },
    cli: {
      command: 'status',
      summary: "every loop's desired and observed state, from the running daemon (else the database)",
      positional: 'none',
      transport: 'api-or-db',
      options: [{ name: 'json', description: 'the loops as JSON' }],
      example: 'homeostat status --json | jq ".[] | {loop, measured, setpoint}"',
    },
  },
  loop: {
    summary: 'One loop with its live status',
    http: {
      method: 'GET',
      path: '/api/loops/:loop',
      write: false,
      response: loopView,
      client: loopTuningView,
    },
  },
  loopHistory: {
    summary:
      "A loop's measured value, setpoint, output and action over a time range, downsampled, with its recorded sensors",
    http: {
      method: 'GET',
      path: '/api/loops/:loop/history',
      write: false,
      query: {
        since: 'Start: ISO time or a duration back from now (6h, 90m, 7d). Default 6 h before until.',
        until: 'End: ISO time or a duration back from now. Default now.',
        maxPoints: 'At most this many points (bucket averages beyond). Default 500, at most 5000.',
      },
      response: historyResponse,
    },
    cli: {
      command: 'history',
      summary: "a loop's measured value, setpoint, output and action over time",
      args: 'LOOP',
      positional: 'loop',
      transport: 'api-or-db',
      options: [
        { name: 'since', value: '2h', description: 'how far back (90m, 6h, 7d; default 2h)' },
        { name: 'csv', description: 'as CSV' },
      ],
      example: 'homeostat history room --since 24h --csv > room.csv',
    },
  },
  plot: {
    summary: "a loop's history as an SVG picture: measured value, setpoint, output and events",
    cli: {
      command: 'plot',
      args: 'LOOP',
      positional: 'loop',
      transport: 'api-or-db',
      options: [
        {
          name: 'out',
          value: 'FILE.svg',
          required: true,
          description: 'the SVG to write (overwritten; - for stdout)',
        },
        { name: 'since', value: '6h', description: 'how far back (90m, 6h, 7d; default 6h)' },
      ],
      example: 'homeostat plot room --since 24h --out room.svg',
      uses: ['loopHistory', 'events'],
    },
  },
  events: {
    summary: 'Recorded events, oldest first (the newest `limit` that match)',
    http: {
      method: 'GET',
      path: '/api/events',
      write: false,
      query: {
        loop: 'Only this loop',
        kind: 'Only this kind (setpoint-changed, fault-raised, actuator…)',
        since: 'ISO time or duration back from now',
        until: 'ISO time or duration back from now',
        limit: 'At most this many (default 100, at most 1000)',
      },
      response: eventsResponse,
    },
    cli: {
      command: 'events',
      summary: 'the recorded events: configs applied, setpoint and mode changes, switches, faults',
      positional: 'none',
      transport: 'api-or-db',
      options: [
        { name: 'since', value: '2h', description: 'how far back (90m, 6h, 7d)' },
        { name: 'loop', value: 'LOOP', description: 'one loop only' },
        { name: 'json', description: 'as JSON' },
      ],
      example: 'homeostat events --loop room --since 6h',
    },
  },
  recentAlerts: {
    summary:
      "The recent alerts, newest first, each with its delivery on every channel (taken, or waiting with its attempts and last error), and each channel's backlog (404 when this node sends no alerts)",
    http: {
      method: 'GET',
      path: '/api/alerts',
      write: false,
      query: { limit: 'At most this many alerts (default 50, at most 200)' },
      response: alertsResponse,
    },
  },
  fleet: {
    summary:
      "Every node's loops on this node's MQTT broker, from their retained states (404 when this node has no broker)",
    http: { method: 'GET', path: '/api/fleet', write: false, response: fleetResponse },
  },
  tunings: {
    summary: "A loop's stored tunings, newest first, and the one in force",
    http: {
      method: 'GET',
      path: '/api/loops/:loop/tunings',
      write: false,
      response: tuningsResponse,
      client: looseTunings,
    },
    cli: {
      command: 'tunings',
      summary:
        "a loop's stored tunings (PID gains from autotune or by hand), newest first, the one in force marked",
      args: 'LOOP',
      positional: 'loop',
      transport: 'api-or-db',
      options: [{ name: 'json', description: "as JSON (the API's answer)" }],
      example: 'homeostat tunings room',
    },
  },
  stream: {
    summary: 'Server-Sent Events: `status` (a Loop) after each change, `event` (an Event) as recorded',
    http: {
      method: 'GET',
      path: '/api/stream',
      write: false,
      query: { loop: 'Only this loop' },
      produces: 'text/event-stream',
    },
  },
  metrics: {
    summary: 'Prometheus metrics (text format)',
    http: { method: 'GET', path: '/metrics', write: false, produces: 'text/plain; version=0.0.4' },
  },
  openApi: {
    summary: 'This document (OpenAPI 3.1)',
    http: { method: 'GET', path: '/api/openapi.json', write: false, open: true },
  },
} satisfies Record<string, Operation>;
