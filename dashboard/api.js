// Requests to the daemon (API: GET /api/openapi.json). A 401 asks for the token once (the session
// cookie then carries it, also for EventSource, which cannot send headers) and retries.
import { $, setMessage } from './util.js';

let signIn = null;

async function request(path, init = {}) {
  for (;;) {
    const res = await fetch(path, { credentials: 'same-origin', ...init });
    if (res.status !== 401) return res;
    await askToken();
  }
}

/** GET `path`; the JSON body, or an Error with the daemon's message and the answer's `status`. */
export async function getJson(path) {
  const res = await request(path);
  const body = await res.json().catch(() => null);
  if (!res.ok) throw Object.assign(new Error(body?.error ?? `HTTP ${res.status}`), { status: res.status });
  return body;
}

/** POST `body` as JSON; the status and the JSON answer (null when there is none). */
export async function postJson(path, body) {
  const res = await request(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, answer: await res.json().catch(() => null) };
}

/** Shows the token dialog; every request that got 401 waits on the same sign-in. */
function askToken() {
  signIn ??= new Promise((resolve) => {
    const dialog = $('auth-dialog');
    const note = $('auth-message');
    $('auth-form').onsubmit = async (e) => {
      e.preventDefault();
      setMessage(note, 'pending', 'Checking…');
      const res = await fetch('/api/session', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token: $('auth-token').value }),
      }).catch((err) => ({ ok: false, status: err.message }));
      if (!res.ok) {
        setMessage(note, 'error', loginRefusal(res));
        return;
      }
      setMessage(note, '', '');
      $('auth-token').value = '';
      dialog.close();
      signIn = null;
      resolve();
    };
    if (!dialog.open) dialog.showModal();
    $('auth-token').focus();
  });
  return signIn;
}

/** What a refused login says: a wrong token, a lockout after several (with when to try again), or the status. */
function loginRefusal(res) {
  if (res.status === 401) return 'Wrong token';
  if (res.status === 429) {
    const retryS = Number(res.headers?.get?.('Retry-After'));
    const wait = Number.isFinite(retryS) && retryS > 0 ? ` in ${retryS} s` : ' later';
    return `Too many wrong tokens from this address: try again${wait}`;
  }
  return `Refused (${res.status})`;
}
