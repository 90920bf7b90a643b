import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { renderSnapshotReadme } from '../src/snapshot/doc.ts';
import { COLUMNS } from '../src/snapshot/schema.ts';

it('snapshots/README.md is the one generated from the schema (run npm run docs:snapshot)', () => {
  const committed = readFileSync(new URL('../snapshots/README.md', import.meta.url), 'utf8');
  expect(committed).toBe(renderSnapshotReadme());
  for (const c of COLUMNS) expect(committed).toContain(`| \`${c.name}\` |`);
});
