import { test } from 'bun:test';
import { makeTestApp } from './helpers/app.ts';
test('debug', async () => {
  const t = await makeTestApp();
  for (const inner of ['{"toString":1}', '{"valueOf":1}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":1}}','{"hasOwnProperty":1}']) {
  const r = await t.request('/api/v1/public/leads', { method: 'POST', body: `{"email":${inner}}`, headers: { 'content-type': 'application/json' } });
  console.log(inner, r.status, await r.text());
  }
  for (const l of t.logLines()) if (l.level === 'error' && l.msg !== 'request') console.log(JSON.stringify(l));
  t.close();
});
