import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { matchRoute, type RouteShape } from '../../src/http/router.js';

interface NamedRoute extends RouteShape {
  name: string;
}

const ROUTES: NamedRoute[] = [
  { method: 'GET', path: '/', name: 'page' },
  { method: 'GET', path: '/assets/:name', name: 'asset' },
  { method: 'GET', path: '/api/loops', name: 'loops' },
  { method: 'GET', path: '/api/loops/:loop', name: 'loop' },
  { method: 'POST', path: '/api/loops/:loop', name: 'set' },
  { method: 'GET', path: '/api/loops/:loop/history', name: 'history' },
  { method: 'POST', path: '/api/loops/:loop/fault-reset', name: 'reset' },
  { method: 'POST', path: '/api/session', name: 'login' },
  { method: 'DELETE', path: '/api/session', name: 'logout' },
];

describe('matchRoute: a method and a path to a route and its parameters', () => {
  const found: Array<{ method: string; path: string; name: string; params: Record<string, string> }> = [
    { method: 'GET', path: '/', name: 'page', params: {} },
    { method: 'GET', path: '/assets/app.js', name: 'asset', params: { name: 'app.js' } },
    { method: 'GET', path: '/api/loops', name: 'loops', params: {} },
    { method: 'GET', path: '/api/loops/', name: 'loops', params: {} },
    { method: 'GET', path: '/api/loops/room', name: 'loop', params: { loop: 'room' } },
    { method: 'POST', path: '/api/loops/room', name: 'set', params: { loop: 'room' } },
    { method: 'GET', path: '/api/loops/living%20room', name: 'loop', params: { loop: 'living room' } },
    { method: 'GET', path: '/api/loops/caf%C3%A9', name: 'loop', params: { loop: 'café' } },
    { method: 'GET', path: '/api/loops/a%2Fb/history', name: 'history', params: { loop: 'a/b' } },
    { method: 'POST', path: '/api/loops/room/fault-reset', name: 'reset', params: { loop: 'room' } },
    { method: 'HEAD', path: '/api/loops/room', name: 'loop', params: { loop: 'room' } },
    { method: 'HEAD', path: '/', name: 'page', params: {} },
    { method: 'DELETE', path: '/api/session', name: 'logout', params: {} },
  ];
  for (const { method, path, name, params } of found) {
    test(`given ${method} ${path}, then route ${name} with ${JSON.stringify(params)}`, () => {
      const match = matchRoute(ROUTES, method, path);
      assert.ok(match.found, `expected a match, got ${JSON.stringify(match)}`);
      assert.equal(match.route.name, name);
      assert.deepEqual(match.params, params);
    });
  }

  const notFound: Array<{ method: string; path: string; status: 404 | 405; allowed: string[] }> = [
    { method: 'GET', path: '/nope', status: 404, allowed: [] },
    { method: 'GET', path: '/api/loops/room/history/more', status: 404, allowed: [] },
    { method: 'GET', path: '/API/loops', status: 404, allowed: [] },
    { method: 'GET', path: '/api/loops/%E0%A4%A', status: 404, allowed: [] },
    { method: 'GET', path: '/assets/%zz', status: 404, allowed: [] },
    { method: 'DELETE', path: '/api/loops/room', status: 405, allowed: ['GET', 'POST'] },
    { method: 'GET', path: '/api/loops/room/fault-reset', status: 405, allowed: ['POST'] },
    { method: 'HEAD', path: '/api/loops/room/fault-reset', status: 405, allowed: ['POST'] },
    { method: 'GET', path: '/api/session', status: 405, allowed: ['POST', 'DELETE'] },
    { method: 'PUT', path: '/', status: 405, allowed: ['GET'] },
  ];
  for (const { method, path, status, allowed } of notFound) {
    test(`given ${method} ${path}, then ${status}${allowed.length ? ` allowing ${allowed.join(', ')}` : ''}`, () => {
      assert.deepEqual(matchRoute(ROUTES, method, path), { found: false, status, allowed });
    });
  }

  test('given an empty table, then every path is 404', () => {
    assert.deepEqual(matchRoute([], 'GET', '/'), { found: false, status: 404, allowed: [] });
  });
});
