import { z } from 'zod';
import { apiSchemas, errorResponse } from '../operations/schemas.js';
import { homeostatVersion } from '../version.js';
import type { ApiRoute } from './routes.js';

/**
 * The OpenAPI 3.1 document of the API, generated from the route table and the zod schemas the
 * server uses (schemas.ts): what is documented is what is served. test/http/openapi.test.ts
 * checks every answer against the schema its route names.
 */
export function openApiDocument(routes: readonly ApiRoute[]): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(apiSchemas, {
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
  });
  const components = Object.fromEntries(
    Object.entries(schemas).map(([id, { $schema: _s, $id: _i, ...schema }]) => [id, schema]),
  );
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (!route.doc) continue;
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'homeostat',
      version: homeostatVersion(),
      description:
        'Local API of a homeostat node. Off loopback, writes (and reads unless http.publicReads) need Authorization: Bearer <token>. Writes must be application/json and same-site.',
    },
    paths,
    components: {
      schemas: components,
      securitySchemes: { token: { type: 'http', scheme: 'bearer' } },
    },
  };
}

function operation(route: ApiRoute): Record<string, unknown> {
  const doc = route.doc!;
  const parameters = [
    ...[...route.path.matchAll(/:(\w+)/g)].map((match) => ({
      name: match[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    })),
    ...Object.entries(doc.query ?? {}).map(([name, description]) => ({
      name,
      in: 'query',
      required: false,
      description,
      schema: { type: 'string' },
    })),
  ];
  const ok = doc.response
    ? { description: 'OK', content: { 'application/json': { schema: ref(doc.response) } } }
    : doc.produces
      ? { description: 'OK', content: { [doc.produces]: {} } }
      : { description: 'OK' };
  return {
    summary: doc.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(doc.request
      ? { requestBody: { required: true, content: { 'application/json': { schema: ref(doc.request) } } } }
      : {}),
    responses: {
      [String(doc.status ?? 200)]: doc.status === 204 ? { description: 'No content' } : ok,
      default: { description: 'An error', content: { 'application/json': { schema: ref(errorResponse) } } },
    },
    ...(route.open ? {} : { security: [{}, { token: [] }] }),
  };
}

function ref(schema: z.ZodType): Record<string, string> {
  const id = apiSchemas.get(schema)?.id;
  if (!id) throw new Error('openapi: a route names a schema that is not registered in apiSchemas');
  return { $ref: `#/components/schemas/${id}` };
}
