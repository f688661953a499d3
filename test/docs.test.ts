import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { bundledSchemaVersion } from '../src/lib/build-info.ts';
import { REPO_ROOT } from './helpers/cli.ts';

// The product's docs stand alone: what a user reads after cloning the repository.
const files = ['README.md', ...readdirSync(path.join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');

describe('README.md and docs/', () => {
  test('reference nothing outside the repository', () => {
    for (const file of files) {
      expect({ file, outside: read(file).match(/\.\.\/shared|\/work\/[a-z]/g) }).toEqual({ file, outside: null });
    }
  });

  test('every relative link points to a file in the repository', () => {
    for (const file of files) {
      for (const [, target] of read(file).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target!) || target!.startsWith('<')) continue;
        expect({ file, target, exists: existsSync(path.resolve(REPO_ROOT, path.dirname(file), target!)) }).toEqual({ file, target, exists: true });
      }
    }
  });

  test('shell commands run after npm install: bun through npx or an npm script, never bare', () => {
    for (const file of files) {
      for (const [, block] of read(file).matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)) {
        const bare = block!.split('\n').filter((line) => /^\s*bun\s/.test(line));
        expect({ file, bare }).toEqual({ file, bare: [] });
      }
    }
  });

  test('every schemaVersion example is the one this build sends (a migration adds one: update the examples)', () => {
    // Not the badge's shields JSON (`"schemaVersion":1,"label":…`): that schemaVersion is the shields format's.
    const ours = files.flatMap((file) => [...read(file).matchAll(/"schemaVersion":(\d+)(?!,"label")/g)].map((m) => [file, Number(m[1])] as const));
    expect(ours.length).toBeGreaterThan(0);
    expect(ours).toEqual(ours.map(([file]) => [file, bundledSchemaVersion()] as const));
  });

  test('docs/index.md lists every page in docs/', () => {
    const index = read('docs/index.md');
    for (const file of files.filter((f) => f.startsWith('docs/') && f !== 'docs/index.md')) expect(index).toContain(`(${path.basename(file)})`);
  });
});
