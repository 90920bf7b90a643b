// Writes snapshots/README.md from the schema table (npm run docs:snapshot).
import { writeFileSync } from 'node:fs';
import { renderSnapshotReadme } from '../src/snapshot/doc.ts';

const path = new URL('../snapshots/README.md', import.meta.url);
writeFileSync(path, renderSnapshotReadme());
console.log(`wrote ${path.pathname}`);
