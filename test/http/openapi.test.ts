import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { ApiDeps } from '../../src/http/api-deps.js';
import { openApiDocument } from '../../src/http/openapi.js';
import type { RouteContext } from '../../src/http/router.js';
import { type ApiRoute, apiRoutes } from '../../src/http/routes.js';
import { Sessions } from '../../src/http/security.js';
import { EventStream } from '../../src/http/sse.js';
import { DashboardAssets } from '../../src/http/static.js';
import { apiSchemas, commandResult, loopView, setRequest } from '../../src/operations/schemas.js';
import { minimalSimConfig } from '../support/config.js';
import { tempDir } from '../support/tmp.js';

/** Deps that answer like an idle node with one loop (the document is built without calling them). */
function fakeDeps(): ApiDeps {
  const config = minimalSimConfig();
  return {
    config: () => config,
    statuses: () => [],
    desired: () => [],
    configGeneration: () => 1,
    events: () => [],
    history: async () => ({ points: [], downsampled: false }),
    tunings: () => [],
    submit: () => ({ known: true, outcome: { accepted: true }, generation: 2 }),
    health: () => ({
      ok: true,
      silentLoops: [],
      storage: { healthy: true, message: 'ok' },
      mqtt: { configured: false, connected: false },
    }),
    onStatus: () => () => {},
    onEvent: () => () => {},
    nowMs: () => Date.parse('2026-11-30T12:00:00Z'),
    version: '0.0.0-test',
    startedAtMs: Date.parse('2026-11-30T11:00:00Z'),
  };
}

const stream = new EventStream();
after(() => stream.close());
const routes: ApiRoute[] = apiRoutes({
  api: fakeDeps(),
  stream,
  assets: new DashboardAssets(tempDir({ after })),
  sessions: new Sessions(),
  token: undefined,
});
const doc = openApiDocument(routes) as {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

interface Operation {
  summary: string;
  parameters?: Array<{ name: string; in: string; required: boolean }>;
  requestBody?: { content: Record<string, { schema: { $ref: string } }> };
  responses: Record<string, { content?: Record<string, { schema?: { $ref: string } }> }>;
  security?: unknown[];
}

const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');
const operationOf = (route: ApiRoute) => doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];

/** Every `$ref` string anywhere in `value`. */
function refs(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refs(item, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') found.push(inner);
      else refs(inner, found);
    }
  }
  return found;
}

describe('openApiDocument(apiRoutes(…))', () => {
  test('then it is OpenAPI 3.1 and plain JSON', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(JSON.parse(JSON.stringify(doc)), doc);
  });

  for (const route of routes.filter((r) => r.doc)) {
    test(`given the documented route ${route.method} ${route.path}, then it appears under paths with its method and summary`, () => {
      const operation = operationOf(route);
      assert.ok(operation, `${route.method} ${openApiPath(route.path)} missing`);
      assert.equal(operation.summary, route.doc?.summary);
      assert.ok(operation.responses[String(route.doc?.status ?? 200)] && operation.responses.default);
      const pathParams = (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      assert.deepEqual(
        pathParams,
        [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]),
      );
    });
  }

  test('given the undocumented routes (the dashboard page and its assets), then they are not in paths', () => {
    const documented = new Set(routes.filter((r) => r.doc).map((r) => `${r.method} ${openApiPath(r.path)}`));
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    assert.deepEqual(new Set(listed), documented);
    assert.equal(doc.paths['/'], undefined);
    assert.equal(doc.paths['/assets/{name}'], undefined);
  });

  test('then every $ref resolves to a component schema', () => {
    const all = refs(doc);
    assert.ok(all.length > 10, `only ${all.length} refs`);
    for (const ref of all) {
      const match = /^#\/components\/schemas\/(.+)$/.exec(ref);
      assert.ok(match, `${ref} does not point into components.schemas`);
      assert.ok(Object.hasOwn(doc.components.schemas, match[1]!), `${ref} does not resolve`);
    }
  });

  test('then every schema registered in apiSchemas is a component', () => {
    for (const schema of [loopView, commandResult, setRequest]) {
      const id = apiSchemas.get(schema)?.id;
      assert.ok(id && Object.hasOwn(doc.components.schemas, id), `${id} missing`);
    }
    assert.deepEqual(Object.keys(doc.components.schemas).sort(), [
      'Actuator',
      'Alert',
      'AlertChannel',
      'AlertDelivery',
      'AlertTestRequest',
      'AlertTestResponse',
      'Alerts',
      'Autotune',
      'AutotuneRequest',
      'CommandResult',
      'Condition',
      'Error',
      'Event',
      'Events',
      'Fleet',
      'FleetLoop',
      'FleetNode',
      'Health',
      'History',
      'HistoryPoint',
      'Loop',
      'Loops',
      'Node',
      'PresetRequest',
      'ProfileRequest',
      'RecordedPoint',
      'RecordedSeries',
      'Schedule',
      'SensorSet',
      'SessionRequest',
      'SetRequest',
      'Tuning',
      'TuningRequest',
      'Tunings',
    ]);
  });

  const schedulePosts: [path: string, request: string][] = [
    ['/api/loops/{loop}/preset', 'PresetRequest'],
    ['/api/loops/{loop}/profile', 'ProfileRequest'],
  ];
  for (const [path, request] of schedulePosts) {
    test(`given POST ${path}, then its body is a ${request} and its answer a CommandResult`, () => {
      const operation = doc.paths[path]?.post;
      assert.equal(
        operation?.requestBody?.content['application/json']?.schema.$ref,
        `#/components/schemas/${request}`,
      );
      assert.equal(
        operation?.responses['200']?.content?.['application/json']?.schema?.$ref,
        '#/components/schemas/CommandResult',
      );
      assert.deepEqual(operation?.security, [{}, { token: [] }]);
    });
  }

  test('given POST /api/loops/{loop}, then its body is a SetRequest and its answer a CommandResult', () => {
    const operation = doc.paths['/api/loops/{loop}']?.post;
    assert.equal(
      operation?.requestBody?.content['application/json']?.schema.$ref,
      '#/components/schemas/SetRequest',
    );
    assert.equal(
      operation?.responses['200']?.content?.['application/json']?.schema?.$ref,
      '#/components/schemas/CommandResult',
    );
  });

  test('given the autotune and tuning writes, then their bodies are an AutotuneRequest and a TuningRequest, answered with a CommandResult', () => {
    const table: [path: string, request: string][] = [
      ['/api/loops/{loop}/autotune', 'AutotuneRequest'],
      ['/api/loops/{loop}/tuning', 'TuningRequest'],
    ];
    for (const [path, request] of table) {
      const operation = doc.paths[path]?.post;
      assert.equal(
        operation?.requestBody?.content['application/json']?.schema.$ref,
        `#/components/schemas/${request}`,
        path,
      );
      assert.equal(
        operation?.responses['200']?.content?.['application/json']?.schema?.$ref,
        '#/components/schemas/CommandResult',
        path,
      );
      assert.deepEqual(operation?.security, [{}, { token: [] }], `${path} needs the token off loopback`);
    }
  });

  test('given GET /api/loops/{loop}/tunings, then it answers Tunings, whose entries are Tuning', () => {
    const operation = doc.paths['/api/loops/{loop}/tunings']?.get;
    assert.equal(
      operation?.responses['200']?.content?.['application/json']?.schema?.$ref,
      '#/components/schemas/Tunings',
    );
    const tunings = doc.components.schemas.Tunings as {
      properties: { tunings: { items: { $ref: string } }; active: unknown };
    };
    assert.equal(tunings.properties.tunings.items.$ref, '#/components/schemas/Tuning');
  });

  test('given the history route, then since, until and maxPoints are documented query parameters', () => {
    const parameters = doc.paths['/api/loops/{loop}/history']?.get?.parameters ?? [];
    assert.deepEqual(
      parameters.filter((p) => p.in === 'query').map((p) => p.name),
      ['since', 'until', 'maxPoints'],
    );
  });

  test('then routes that need the token (off loopback) say so, open ones do not', () => {
    for (const route of routes.filter((r) => r.doc)) {
      const security = operationOf(route)?.security;
      assert.deepEqual(
        security,
        route.open ? undefined : [{}, { token: [] }],
        `${route.method} ${route.path}`,
      );
    }
    assert.deepEqual(doc.components.securitySchemes, { token: { type: 'http', scheme: 'bearer' } });
  });

  test('given GET /api/openapi.json, then it answers this document', async () => {
    const route = routes.find((r) => r.path === '/api/openapi.json');
    const answer = await route?.handle({} as RouteContext);
    assert.deepEqual(answer, { body: doc });
  });

  test('given POST /api/session (it reads {token}), then its request body is documented and it answers 204', () => {
    const operation = doc.paths['/api/session']?.post;
    assert.equal(
      operation?.requestBody?.content['application/json']?.schema.$ref,
      '#/components/schemas/SessionRequest',
    );
    assert.ok(operation?.responses['204']);
    assert.equal(operation?.responses['200'], undefined);
  });
});
