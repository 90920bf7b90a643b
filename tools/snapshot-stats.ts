// What a snapshot knows, column by column: the share of its buildings with a value
// (npm run stats:snapshot -- FILE.arrow). A value: not null, a string not empty, a list with a
// record; for a boolean column, true; for an enum, its values counted one by one.
import { readSnapshot } from '../src/snapshot/reader.ts';
import { COLUMNS } from '../src/snapshot/schema.ts';

const USAGE = 'usage: npm run stats:snapshot -- FILE.arrow [--json]   (the share of buildings with each field)';
const args = process.argv.slice(2);
const json = args.includes('--json');
const files = args.filter((a) => a !== '--json');
if (files.length !== 1 || files[0] === '--help' || files[0] === '-h') {
  (files[0] === '--help' || files[0] === '-h' ? process.stdout : process.stderr).write(`${USAGE}\n`);
  process.exitCode = files[0] === '--help' || files[0] === '-h' ? 0 : 2;
} else {
  let opened;
  try {
    opened = readSnapshot(files[0]);
  } catch (err) {
    process.stderr.write(`stats:snapshot: ${(err as Error).message}\n`);
    process.exit(1);
  }
  const { table, metadata } = opened;
  const rows = table.numRows;
  const shares: { column: string; with: number; share: number; values?: Record<string, number> }[] = [];
  for (const spec of COLUMNS) {
    if (spec.name === 'building_id' || spec.name === 'source_id') continue;
    const vector = table.getChild(spec.name)!;
    let n = 0;
    const values: Record<string, number> = {};
    for (let i = 0; i < rows; i++) {
      const v = vector.get(i);
      const has = spec.kind === 'bool' ? v === true : spec.kind === 'list' ? v !== null && v.length > 0 : v !== null && v !== '';
      if (has) n++;
      if (spec.kind === 'enum' && v !== null) values[v] = (values[v] ?? 0) + 1;
    }
    shares.push({ column: spec.name, with: n, share: rows > 0 ? n / rows : 0, ...(spec.kind === 'enum' ? { values } : {}) });
  }
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ country: metadata.country, date: metadata.snapshotDate, buildings: rows, columns: shares }, null, 2)}\n`,
    );
  } else {
    const lines = [`${metadata.country} ${metadata.snapshotDate}: ${rows} buildings`];
    for (const s of shares) {
      if (s.with === 0) continue;
      const values = s.values
        ? `  ${Object.entries(s.values)
            .sort((a, b) => b[1] - a[1])
            .map(([k, c]) => `${k} ${c}`)
            .join(', ')}`
        : '';
      lines.push(`  ${s.column.padEnd(36)} ${String(s.with).padStart(8)}  ${(s.share * 100).toFixed(1).padStart(5)}%${values}`);
    }
    lines.push(
      `  (columns with no value in any building: ${shares
        .filter((s) => s.with === 0)
        .map((s) => s.column)
        .join(', ')})`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
