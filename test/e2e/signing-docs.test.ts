import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';

// The signing examples of docs/signing.md, run as a user would paste them, against a real server.
const doc = await Bun.file(path.join(REPO_ROOT, 'docs/signing.md')).text();

function example(name: string): string {
  const match = new RegExp(`<!-- signing-example: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
  if (!match) throw new Error(`docs/signing.md has no ${name} example`);
  return match[1]!;
}

let tmp: ReturnType<typeof tempDir>;
let server: SpawnedServer;
let key: string;
beforeAll(async () => {
  tmp = tempDir('svc-signing-');
  const dataDir = path.join(tmp.dir, 'data');
  key = (await runCli(['keys', 'create', '--scopes', 'probe:scan', '--data-dir', dataDir])).json.key;
  server = await spawnServer({ dataDir });
});
afterAll(async () => {
  await server.stop();
  tmp.remove();
});

/** The example with the doc's placeholders replaced by this server's URL and a real key. */
function filledIn(name: string): string {
  const code = example(name);
  expect(code).toContain('http://127.0.0.1:3000');
  expect(code).toContain('sk_live_...');
  return code.replaceAll('http://127.0.0.1:3000', server.url).replaceAll('sk_live_...', key);
}

async function run(command: string[], file: string, code: string): Promise<string> {
  const target = path.join(tmp.dir, file);
  writeFileSync(target, code);
  const proc = Bun.spawn([...command, target], { stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '' } });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect({ code: await proc.exited, stderr }).toEqual({ code: 0, stderr: '' });
  return stdout.trim();
}

const missing = (tool: string) => !Bun.which(tool);

describe('docs/signing.md examples against a spawned server', () => {
  test.skipIf(missing('openssl') || missing('curl'))('shell + openssl + curl: 204', async () => {
    expect(await run(['sh'], 'send.sh', filledIn('shell'))).toBe('204');
  });

  test.skipIf(missing('node'))('Node.js: 204', async () => {
    expect(await run(['node'], 'send.mjs', filledIn('node'))).toBe('204');
  });

  test.skipIf(missing('python3'))('Python 3: 204', async () => {
    expect(await run(['python3'], 'send.py', filledIn('python'))).toBe('204');
  });

  test.skipIf(missing('openssl') || missing('curl'))('the shell recipe really signs: a body changed after signing gets 401', async () => {
    const code = filledIn('shell');
    expect(code).toContain('--data-binary "$BODY"');
    expect(await run(['sh'], 'forged.sh', code.replace('--data-binary "$BODY"', '--data-binary "$BODY "'))).toBe('401');
  });
});
