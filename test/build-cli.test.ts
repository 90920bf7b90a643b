/**
 * tools/build-snapshot.ts as a child process: exit codes, messages and the bad-row report for
 * broken inputs. 0 = built (bad rows counted), 1 = unreadable input, no building or a bad row
 * under --strict, 2 = wrong options or an unusable --out, 143 = interrupted by SIGTERM.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, type LogEntry } from '../src/catalog/catalog.ts';
import { loadSnapshot } from '../src/catalog/load.ts';
import { readSnapshot } from '../src/snapshot/reader.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const PBF = fileURLToPath(new URL('./fixtures/osm/liechtenstein-2013-08-03.osm.pbf', import.meta.url));
const REGISTER = fileURLToPath(new URL('./fixtures/register/businesses-li.csv', import.meta.url));

/** The last line of a run's stderr: its error, after the progress lines a build prints to a stderr that is no terminal. */
const lastLine = (stderr: string): string => `${stderr.trimEnd().split('\n').at(-1)}\n`;

/** Runs the CLI; resolves with its exit status and output (the tests run concurrently: each start costs a second). */
function cli(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'tools/build-snapshot.ts', ...args],
      { cwd: REPO, encoding: 'utf8' },
      (err, stdout, stderr) => {
        resolve({ status: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

const ring = (lon: number, lat: number) => [
  [lon, lat],
  [lon + 0.0002, lat],
  [lon + 0.0002, lat + 0.0001],
  [lon, lat + 0.0001],
  [lon, lat],
];
const feature = (id: string, coordinates: unknown, properties: Record<string, string> = { building: 'yes' }, type = 'Polygon') =>
  JSON.stringify({ type: 'Feature', id, geometry: { type, coordinates }, properties });

let dir: string;
let good: string;
let bad: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'edifice-build-cli-'));
  good = join(dir, 'good.geojsonseq');
  writeFileSync(
    good,
    [
      feature('w1', [ring(9.52, 47.14)], { building: 'house', 'building:levels': '2', 'roof:shape': 'gabled', height: '7.5 m' }),
      feature('w2', [ring(9.53, 47.14)], {
        building: 'apartments',
        'building:levels': '4',
        'building:levels:underground': '1',
        'roof:shape': 'flat',
      }),
    ].join('\n') + '\n',
  );
  bad = join(dir, 'bad.geojsonseq');
  writeFileSync(
    bad,
    [
      feature('w1', [ring(9.52, 47.14)]),
      feature('w2', [
        [
          [9.52, 47.15],
          [9.5202, 47.15],
          [9.52, 47.15],
        ],
      ]), // line 2: 3 positions
      feature('w3', [
        [
          [9.52, 47.16],
          [9.5202, 47.16],
          [9.5202, 47.1601],
          [9.52, 47.1601],
        ],
      ]), // line 3: not closed
      feature('w4', [
        [
          [9.52, 47.17],
          ['x', 47.17],
          [9.5202, 47.1701],
          [9.52, 47.1701],
          [9.52, 47.17],
        ],
      ]), // line 4: not a number
      '{"type":"Feature","geometry":', // line 5: not JSON
      feature('w6', [ring(9.54, 47.14)], { building: 'yes', 'roof:shape': 'quadruple_saltbox' }), // line 6: a shape outside the spec's ten
      feature('w7', [ring(9.55, 47.14)], { building: 'yes', height: 'tall', 'building:levels': 'three' }), // line 7: unparseable numbers
      feature('w8', [ring(9.56, 47.14)]),
    ].join('\n') + '\n',
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.concurrent('build-snapshot CLI', () => {
  it('builds from a GeoJSON Sequence and states what the tags say', async () => {
    const out = join(dir, 'good.arrow');
    const run = await cli('--country', 'LI', '--date', '2024-01-31', '--buildings', good, '--out', out);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/rows\s+2 buildings/);
    const { table } = readSnapshot(out);
    const rows = new Map(
      [...Array(table.numRows).keys()].map((i) => {
        const r = table.get(i)!.toJSON() as Record<string, any>;
        return [r.source_id, r];
      }),
    );
    expect(rows.get('osm:way/1')).toMatchObject({
      category: 'residential_house',
      category_evidence: 'confirmed',
      building_type: 'house',
      floors: 2,
      floors_including_underground: null,
      roof_shape: 'gabled',
      height_m: 7.5,
      height_basis: 'stated',
      volume_basis: 'estimated',
      floor_area_basis: 'estimated',
      floor_area_scope: 'gross_above_ground',
      solar_presence: 'unknown',
      flood_zone_mapped: false,
      address: null,
      address_evidence: 'none',
    });
    const w1 = rows.get('osm:way/1')!;
    expect(w1.volume_m3).toBeCloseTo(w1.footprint_area_m2 * 7.5, 6);
    expect(w1.floor_area_m2).toBeCloseTo(w1.footprint_area_m2 * 2, 6);
    // Four storeys of 3 m under a flat roof: no roof allowance.
    expect(rows.get('osm:way/2')).toMatchObject({
      category: 'apartment_block',
      floors: 4,
      floors_including_underground: 5,
      roof_shape: 'flat',
      height_m: 12,
      height_basis: 'estimated',
      volume_basis: 'estimated',
    });
  });

  it('writes the prepared file beside the snapshot, which a server then reads instead of building the store; --no-prepared writes none', async () => {
    const [withIt, without] = await Promise.all([
      cli('--country', 'LI', '--date', '2024-01-31', '--buildings', good, '--out', join(dir, 'with-prepared')),
      cli('--country', 'LI', '--date', '2024-01-31', '--buildings', good, '--out', join(dir, 'no-prepared'), '--no-prepared'),
    ]);
    expect(withIt.status, withIt.stderr).toBe(0);
    const prepared = join(dir, 'with-prepared', 'LI', '2024-01-31.edifice');
    expect(withIt.stdout).toContain(`  prepared  ${prepared} (${statSync(prepared).size} bytes, `);
    const loads: LogEntry[] = [];
    const catalog = Catalog.open(join(dir, 'with-prepared'), { prepared: {}, log: (e) => void loads.push(e) });
    expect(loads.filter((e) => e.event === 'prepared_refused')).toEqual([]);
    expect(loads.find((e) => e.event === 'snapshot_loaded')).toMatchObject({ from: 'prepared', buildings: 2 });
    expect(catalog.view().snapshots[0].record(0)).toEqual(
      loadSnapshot(readSnapshot(join(dir, 'with-prepared', 'LI', '2024-01-31.arrow'))).record(0),
    );
    expect(without.status, without.stderr).toBe(0);
    expect(without.stdout).not.toContain('  prepared  ');
    expect(readdirSync(join(dir, 'no-prepared', 'LI'))).toEqual(['2024-01-31.arrow']);
  });

  it('counts bad rows by reason with their lines and goes on', async () => {
    const out = join(dir, 'bad.arrow');
    const run = await cli('--country', 'LI', '--date', '2024-01-31', '--buildings', bad, '--out', out);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/rows\s+4 buildings/); // w1, w6, w7, w8
    expect(run.stdout).toMatch(/bad rows\s+6/);
    expect(run.stdout).toMatch(
      /invalid_geometry: 3\n\s+e\.g\. bad\.geojsonseq:2: a ring has 3 positions, fewer than 4\n\s+e\.g\. bad\.geojsonseq:3: a ring is not closed/,
    );
    expect(run.stdout).toMatch(/bad\.geojsonseq:4: position 1 has a non-numeric coordinate/);
    expect(run.stdout).toMatch(/invalid_feature: 1\n\s+e\.g\. bad\.geojsonseq:5: not JSON/);
    // A roof shape outside the spec's ten is no shape the snapshot can name: null, noted, not a bad row.
    expect(run.stdout).toMatch(
      /notes \(not errors\)[^]*unknown_roof_shape: 1\n\s+e\.g\. bad\.geojsonseq:6: osm:way\/6: roof:shape=quadruple_saltbox/,
    );
    expect(run.stdout.slice(0, run.stdout.indexOf('notes (not errors)'))).not.toMatch(/unknown_roof_shape/);
    expect(run.stdout).toMatch(/unparseable_height: 1\n\s+e\.g\. bad\.geojsonseq:7: osm:way\/7: height=tall/);
    expect(run.stdout).toMatch(/unparseable_levels: 1\n\s+e\.g\. bad\.geojsonseq:7: osm:way\/7: building:levels=three/);
    const { table } = readSnapshot(out);
    const w6 = [...Array(table.numRows).keys()].map((i) => table.get(i)!.toJSON()).find((r) => r.source_id === 'osm:way/6')!;
    expect(w6.roof_shape).toBeNull();
  });

  it('stops at the first bad row under --strict, naming its line, and leaves no snapshot behind', async () => {
    const outDir = join(dir, 'strict');
    const run = await cli('--country', 'LI', '--date', '2024-01-31', '--buildings', bad, '--out', outDir, '--strict');
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      'build-snapshot: stopped at the first bad row (--strict): bad.geojsonseq:2: invalid_geometry: a ring has 3 positions, fewer than 4\n',
    );
    expect(existsSync(outDir) ? readdirSync(outDir, { recursive: true }) : []).toEqual([]);
  });

  it('refuses unreadable input with a message: missing, truncated, not GeoJSON, a broken PBF', async () => {
    const base = ['--country', 'LI', '--date', '2024-01-31', '--out', join(dir, 'never')];
    const truncated = join(dir, 'truncated.geojsonseq');
    const text = readFileSync(good, 'utf8');
    writeFileSync(truncated, text.slice(0, text.length - 30));
    const csv = join(dir, 'list.csv');
    writeFileSync(csv, 'lat,lng\n44.4,26.1\n');
    const brokenPbf = join(dir, 'broken.osm.pbf');
    writeFileSync(brokenPbf, readFileSync(PBF).subarray(0, 5000));
    const [missing, cut, notGeoJson, pbf] = await Promise.all([
      cli(...base, '--buildings', join(dir, 'nope.geojsonseq')),
      cli(...base, '--buildings', truncated),
      cli(...base, '--buildings', csv),
      cli(...base, '--pbf', brokenPbf),
    ]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/nope\.geojsonseq: no such file/);
    expect(cut.status).toBe(1);
    expect(cut.stderr).toMatch(/truncated\.geojsonseq: truncated: the text starting at line 2 is cut off at the end of the file/);
    expect(notGeoJson.status).toBe(1);
    expect(notGeoJson.stderr).toMatch(/list\.csv: not GeoJSON/);
    expect(pbf.status).toBe(1);
    expect(pbf.stderr).toMatch(/osmium export .*broken\.osm\.pbf failed/);
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });

  it('refuses a seismic list whose columns the mapping names but the file lacks, and counts short rows', async () => {
    const list = join(dir, 'expertiza-test.csv');
    writeFileSync(list, 'Lat,Lng,Risk Category,Year Built\n47.14005,9.5201,RS1,1935\n44.44,26.11\n');
    const base = ['--country', 'RO', '--date', '2024-01-31', '--buildings', good, '--seismic', list];
    const [preset, auto, mapped] = await Promise.all([
      cli(...base, '--out', join(dir, 'ro1.arrow'), '--seismic-columns', 'county'),
      cli(...base, '--out', join(dir, 'ro2.arrow')),
      cli(
        ...base,
        '--out',
        join(dir, 'ro3.arrow'),
        '--seismic-columns',
        '{"lat":"Lat","lon":"Lng","class":"Risk Category","year_built":"Year Built"}',
      ),
    ]);
    expect(preset.status).toBe(1);
    expect(preset.stderr).toMatch(
      /expertiza-test\.csv: column "Height Regime" \(for height_regime\) is not in the header \(Lat, Lng, Risk Category, Year Built\)/,
    );
    expect(auto.status).toBe(1);
    expect(auto.stderr).toMatch(/no built-in column layout matches its header/);
    expect(mapped.status).toBe(0);
    expect(mapped.stdout).toMatch(/missing_fields: 1\n\s+e\.g\. expertiza-test\.csv:3: 2 fields, the mapped columns need 4/);
    expect(mapped.stdout).toMatch(/seismic rows 1\/1/);
    // A list of another area joins nothing: refused, nothing written.
    const elsewhere = join(dir, 'expertiza-elsewhere.csv');
    writeFileSync(elsewhere, 'Lat,Lng,Risk Category,Year Built\n44.43,26.10,RS1,1935\n44.44,26.11,RS2,1940\n');
    const wrong = await cli(
      '--country',
      'RO',
      '--date',
      '2024-01-31',
      '--buildings',
      good,
      '--seismic',
      elsewhere,
      '--out',
      join(dir, 'ro4.arrow'),
      '--seismic-columns',
      '{"lat":"Lat","lon":"Lng","class":"Risk Category","year_built":"Year Built"}',
    );
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toMatch(/expertiza-elsewhere\.csv: none of its 2 rows lies within \d+ m of a building .*; nothing written/);
    expect(existsSync(join(dir, 'ro4.arrow'))).toBe(false);
    // A list with a header alone, or whose every row is refused, is as wrong: refused, nothing written.
    const headerOnly = join(dir, 'expertiza-header.csv');
    writeFileSync(headerOnly, 'Lat,Lng,Risk Category,Year Built\n');
    const noCoordinates = join(dir, 'expertiza-nocoords.csv');
    writeFileSync(noCoordinates, 'Lat,Lng,Risk Category,Year Built\n,,RS1,1935\nx,y,RS2,1940\n');
    const columns = ['--seismic-columns', '{"lat":"Lat","lon":"Lng","class":"Risk Category","year_built":"Year Built"}'];
    const [empty, unusable] = await Promise.all([
      cli(
        '--country',
        'RO',
        '--date',
        '2024-01-31',
        '--buildings',
        good,
        '--seismic',
        headerOnly,
        '--out',
        join(dir, 'ro5.arrow'),
        ...columns,
      ),
      cli(
        '--country',
        'RO',
        '--date',
        '2024-01-31',
        '--buildings',
        good,
        '--seismic',
        noCoordinates,
        '--out',
        join(dir, 'ro6.arrow'),
        ...columns,
      ),
    ]);
    expect([empty.status, unusable.status]).toEqual([1, 1]);
    expect(empty.stderr).toMatch(/expertiza-header\.csv: no usable row .*; nothing written/);
    expect(unusable.stderr).toMatch(/expertiza-nocoords\.csv: no usable row .*; nothing written/);
    expect([existsSync(join(dir, 'ro5.arrow')), existsSync(join(dir, 'ro6.arrow'))]).toEqual([false, false]);
  });

  it('says a seismic list must be comma-separated when semicolons or tabs separate its header', async () => {
    const semicolons = join(dir, 'expertiza-semicolons.csv');
    writeFileSync(semicolons, 'Lat;Lng;Risk Category;Year Built\n47,14005;9,5201;RS1;1935\n');
    const tabs = join(dir, 'expertiza-tabs.csv');
    writeFileSync(tabs, 'lat\tlng\trisk_category\n47.14005\t9.5201\tRS1\n');
    const base = ['--country', 'RO', '--date', '2024-01-31', '--buildings', good];
    const [auto, tab, mapped] = await Promise.all([
      cli(...base, '--seismic', semicolons, '--out', join(dir, 'sep1.arrow')),
      cli(...base, '--seismic', tabs, '--out', join(dir, 'sep2.arrow')),
      cli(
        ...base,
        '--seismic',
        semicolons,
        '--out',
        join(dir, 'sep3.arrow'),
        '--seismic-columns',
        '{"lat":"Lat","lon":"Lng","class":"Risk Category"}',
      ),
    ]);
    const message = (path: string, separator: string) =>
      `build-snapshot: ${path}: its header is separated by ${separator}, not commas: a seismic list must be comma-separated\n`;
    expect([auto.status, lastLine(auto.stderr)]).toEqual([1, message(semicolons, 'semicolons (;)')]);
    expect([tab.status, lastLine(tab.stderr)]).toEqual([1, message(tabs, 'tabs')]);
    expect([mapped.status, lastLine(mapped.stderr)]).toEqual([1, message(semicolons, 'semicolons (;)')]);
  });

  it('refuses wrong options with exit status 2 and the usage', async () => {
    const cases: [string[], RegExp][] = [
      [['--buildings', good], /--country needs a two-letter uppercase code/],
      [['--country', 'LI', '--date', '3 Aug 2013', '--buildings', good], /--date needs a date YYYY-MM-DD/],
      [['--country', 'LI', '--date', '2013-08-03'], /give exactly one of --pbf and --buildings/],
      [['--country', 'LI', '--date', '2013-08-03', '--buildings', good, '--pbf', PBF], /give exactly one of --pbf and --buildings/],
      [['--country', 'LI', '--date', '2013-08-03', '--buildings', good, '--colour', 'red'], /Unknown option '--colour'/],
      [
        [
          '--country',
          'LI',
          '--date',
          '2013-08-03',
          '--buildings',
          good,
          '--seismic',
          good,
          '--seismic-columns',
          '{"lat":"a","lon":"b","clas":"c"}',
        ],
        /unknown field "clas"/,
      ],
      [
        ['--country', 'LI', '--date', '2013-08-03', '--buildings', good, '--seismic', good, '--seismic-columns', 'bucharest'],
        /unknown seismic column preset "bucharest"/,
      ],
      // The last of a repeated option would win without a word (--seismic repeats, as meant: test/build-seismic.test.ts).
      [
        ['--country', 'RO', '--country', 'LI', '--date', '2013-08-03', '--buildings', good],
        /--country given twice \("RO", then "LI"\): give it once/,
      ],
      [
        ['--country', 'LI', '--date', '2013-08-03', '--buildings', good, '--out', join(dir, 'twice-a'), '--out', join(dir, 'twice-b')],
        /--out given twice/,
      ],
    ];
    const runs = await Promise.all(cases.map(([args]) => cli(...args)));
    runs.forEach((run, i) => {
      expect(run.status, cases[i][0].join(' ')).toBe(2);
      expect(run.stderr).toMatch(cases[i][1]);
      expect(run.stderr).toMatch(/Usage: npm run build:snapshot/);
    });
    expect((await cli('--help')).status).toBe(0);
  });

  it('refuses a date that is no day of the calendar, before 2000 or after tomorrow, and an --out naming another snapshot', async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    // Three days ahead, not two: a run across midnight UTC would move the tool's tomorrow by one.
    const later = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
    const cases: [string[], RegExp][] = [
      [['--date', '2013-02-31'], /--date 2013-02-31 is not a day of the calendar/],
      [['--date', '2013-13-01'], /is not a day of the calendar/],
      [['--date', '9999-12-31'], /a snapshot's date is from 2000-01-01 to tomorrow/],
      [['--date', later], /to tomorrow/],
      [['--date', '1999-12-31'], /from 2000-01-01/],
      [
        ['--date', '2013-08-03', '--out', join(dir, 'o', 'RO', '2013-08-03.arrow')],
        /names another snapshot than --country LI --date 2013-08-03/,
      ],
      [['--date', '2013-08-03', '--out', join(dir, 'o', 'LI', '2020-01-01.arrow')], /names another snapshot/],
    ];
    const runs = await Promise.all(
      cases.map(([args]) =>
        cli('--country', 'LI', '--buildings', good, ...(args.includes('--out') ? [] : ['--out', join(dir, 'dates')]), ...args),
      ),
    );
    runs.forEach((run, i) => {
      expect(run.status, cases[i][0].join(' ')).toBe(2);
      expect(run.stderr).toMatch(cases[i][1]);
    });
    expect(existsSync(join(dir, 'dates')) || existsSync(join(dir, 'o'))).toBe(false);
    // Tomorrow is allowed (a build dated in another time zone), and so is a file of any other name.
    const [ok, free] = await Promise.all([
      cli('--country', 'LI', '--date', tomorrow, '--buildings', good, '--out', join(dir, 'dates')),
      cli('--country', 'LI', '--date', '2013-08-03', '--buildings', good, '--out', join(dir, 'any-name.arrow')),
    ]);
    expect([ok.status, free.status]).toEqual([0, 0]);
    expect(existsSync(join(dir, 'dates', 'LI', `${tomorrow}.arrow`))).toBe(true);
  });

  it('refuses an --out it cannot write in one line, and an input without a building writes nothing', async () => {
    const file = join(dir, 'a-file.txt');
    writeFileSync(file, 'x');
    const folder = join(dir, 'out-folder', 'LI', '2013-08-03.arrow');
    mkdirSync(folder, { recursive: true });
    const empty = join(dir, 'empty.geojson');
    writeFileSync(empty, '{"type":"FeatureCollection","features":[]}');
    const snapshots = join(dir, 'kept');
    const base = ['--country', 'LI', '--date', '2013-08-03'];
    const [underFile, underProc, atFolder, first] = await Promise.all([
      cli(...base, '--buildings', good, '--out', file),
      cli(...base, '--buildings', good, '--out', '/proc/edifice-no/snapshots'),
      cli(...base, '--buildings', good, '--out', join(dir, 'out-folder')),
      cli(...base, '--buildings', good, '--out', snapshots),
    ]);
    expect([underFile.status, underFile.stderr]).toEqual([
      2,
      `build-snapshot: --out: ${file}/LI cannot be a folder: part of that path is a file\n`,
    ]);
    expect(underProc.status).toBe(2);
    expect(underProc.stderr).toMatch(/^build-snapshot: --out: cannot create the folder \/proc\/edifice-no \(\w+\)\n$/);
    expect([atFolder.status, atFolder.stderr]).toEqual([
      2,
      `build-snapshot: --out: ${folder} is a folder; the snapshot file would go there\n`,
    ]);
    expect(first.status).toBe(0);
    // Nothing read: the snapshot already there stays, and no file of another date appears.
    const none = await cli('--country', 'LI', '--date', '2013-08-04', '--buildings', empty, '--out', snapshots);
    expect(none.status).toBe(1);
    expect(lastLine(none.stderr)).toBe(
      'build-snapshot: no building in the input (0 features read); nothing written, so the snapshots already there stay as they are\n',
    );
    expect(readdirSync(join(snapshots, 'LI')).sort()).toEqual(['2013-08-03.arrow', '2013-08-03.edifice']);
  });

  it('interrupted while osmium runs, kills it and leaves no temporary file behind', async () => {
    const out = join(dir, 'interrupted');
    // A named pipe nobody writes to: osmium waits on it for as long as the test needs (a real
    // extract of this size is read in a fraction of a second, faster than the test can look).
    const pbf = join(dir, 'waiting.osm.pbf');
    execFileSync('mkfifo', [pbf]);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'tools/build-snapshot.ts', '--country', 'LI', '--date', '2013-08-03', '--pbf', pbf, '--out', out],
      { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // osmium, a child of the build, and the folder it exports into.
    let osmium: { pid: number; folder: string } | null = null;
    for (let i = 0; i < 600 && osmium === null; i++) {
      await new Promise((r) => setTimeout(r, 50));
      for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
          if (parent === child.pid && args[0] === 'osmium') osmium = { pid: Number(pid), folder: dirname(args[args.indexOf('-o') + 1]) };
        } catch {
          /* a process that ended meanwhile */
        }
      }
    }
    expect(osmium).not.toBeNull();
    expect(existsSync(osmium!.folder)).toBe(true);
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(stderr).toMatch(/build-snapshot: interrupted \(SIGTERM\); its temporary files are removed/);
    await new Promise((r) => setTimeout(r, 200));
    expect(existsSync(`/proc/${osmium!.pid}`) && !readFileSync(`/proc/${osmium!.pid}/stat`, 'utf8').includes(') Z ')).toBe(false);
    expect(existsSync(osmium!.folder)).toBe(false);
    expect(existsSync(out) ? readdirSync(out, { recursive: true }) : []).toEqual([]);
  });

  it('reads a PBF extract whatever its name, and refuses a --pbf that is no PBF by what it holds', async () => {
    // osmium tells formats by the name's suffix; this one has none it knows.
    const renamed = join(dir, 'liechtenstein.extract');
    copyFileSync(PBF, renamed);
    const text = join(dir, 'extract.dat');
    writeFileSync(text, 'lat,lng\n47.14,9.52\n');
    const [read, refused] = await Promise.all([
      cli('--country', 'LI', '--date', '2013-08-03', '--pbf', renamed, '--out', join(dir, 'renamed.arrow')),
      cli('--country', 'LI', '--date', '2013-08-03', '--pbf', text, '--out', join(dir, 'text.arrow')),
    ]);
    expect(read.status, read.stderr).toBe(0);
    expect(read.stdout).toMatch(/rows\s+3720 buildings/);
    expect(refused.status).toBe(1);
    expect(lastLine(refused.stderr)).toBe(
      `build-snapshot: ${text}: not an OSM PBF file: its name does not end in .pbf, and it does not start with a PBF header block (OSMHeader)\n`,
    );
    expect(existsSync(join(dir, 'text.arrow'))).toBe(false);
  });

  it("dates a PBF build by the extract's header, else by its newest object, and asks for --date with GeoJSON", async () => {
    // The fixture's header: osmosis_replication_timestamp=2013-08-03T19:00:02Z (osmium fileinfo).
    const bare = join(dir, 'no-header-date.osm.pbf');
    execFileSync('osmium', [
      'cat',
      PBF,
      '-o',
      bare,
      '--overwrite',
      '--output-header=osmosis_replication_timestamp=',
      '--output-header=timestamp=',
    ]);
    expect(execFileSync('osmium', ['fileinfo', '-j', bare], { encoding: 'utf8' })).not.toMatch(/timestamp/);
    // The newest object, read from osmium's OPL text: the t field of every object.
    const opl = execFileSync('osmium', ['cat', PBF, '-f', 'opl'], { encoding: 'utf8', maxBuffer: 1 << 28 });
    let newest = '';
    for (const m of opl.matchAll(/ t(\d{4}-\d{2}-\d{2}T[\d:]+Z) /g)) if (m[1] > newest) newest = m[1];
    const [fromHeader, fromObjects, geojson] = await Promise.all([
      cli('--country', 'LI', '--pbf', PBF, '--out', join(dir, 'dated')),
      cli('--country', 'LI', '--pbf', bare, '--out', join(dir, 'dated-bare')),
      cli('--country', 'LI', '--buildings', good, '--out', join(dir, 'dated-geojson')),
    ]);
    expect(fromHeader.status, fromHeader.stderr).toBe(0);
    expect(fromHeader.stderr).toMatch(/--date 2013-08-03, from the extract's header \(replication timestamp 2013-08-03T19:00:02Z\)/);
    expect(readSnapshot(join(dir, 'dated', 'LI', '2013-08-03.arrow')).metadata.snapshotDate).toBe('2013-08-03');
    expect(fromObjects.status, fromObjects.stderr).toBe(0);
    expect(fromObjects.stderr).toContain(`--date ${newest.slice(0, 10)}, from the extract's newest object (timestamp ${newest})`);
    expect(readdirSync(join(dir, 'dated-bare', 'LI')).sort()).toEqual([`${newest.slice(0, 10)}.arrow`, `${newest.slice(0, 10)}.edifice`]);
    expect(geojson.status).toBe(2);
    expect(geojson.stderr).toMatch(/--date is required with --buildings/);
    const help = await cli('--help');
    expect(help.stdout).toMatch(
      /--date YYYY-MM-DD\s+snapshot date: the day \(UTC\) of the OpenStreetMap data[^]*Default with --pbf: the extract's own date/,
    );
  });

  it('prints progress lines to a stderr that is no terminal, and a closing line of what it built, refused and merged', async () => {
    const run = await cli(
      '--country',
      'LI',
      '--date',
      '2013-08-03',
      '--pbf',
      PBF,
      '--out',
      join(dir, 'progress'),
      '--progress-seconds',
      '0',
    );
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stderr.trim().split('\n');
    for (const phase of [
      'osmium export',
      'read liechtenstein-2013-08-03.geojsonseq',
      'merge nested outlines',
      'join points',
      'derive',
      'write',
    ]) {
      expect(
        lines.some((l) => new RegExp(`^build-snapshot: [\\d.]+ s ${phase}: \\d+/\\d+`).test(l)),
        phase,
      ).toBe(true);
    }
    expect(lines.at(-1)).toMatch(
      /^build-snapshot: built 3720 buildings in [\d.]+ s; refused rows none; merged rows 3 \(nested_outline 3\)$/,
    );
    // Every few seconds by default: a build this short prints one line a phase.
    const quiet = await cli('--country', 'LI', '--date', '2013-08-03', '--pbf', PBF, '--out', join(dir, 'progress-default'));
    expect(
      quiet.stderr
        .trim()
        .split('\n')
        .filter((l) => /read liechtenstein/.test(l)).length,
    ).toBeLessThanOrEqual(2);
    expect((await cli('--country', 'LI', '--date', '2013-08-03', '--pbf', PBF, '--progress-seconds', 'soon')).status).toBe(2);
  });

  it('takes registered businesses from a business register only, joined by building, position and address', async () => {
    const out = join(dir, 'register.arrow');
    const [withRegister, help] = await Promise.all([
      cli('--country', 'LI', '--date', '2013-08-03', '--pbf', PBF, '--businesses', REGISTER, '--out', out),
      cli('--help'),
    ]);
    expect(withRegister.status, withRegister.stderr).toBe(0);
    expect(help.stdout).toMatch(
      /--businesses FILE[^]*registration_id, name, active[^]*employees[^]*building[^]*lat and lon[^]*street and house_number/,
    );
    const { table, metadata } = readSnapshot(out);
    const bySource = new Map(
      [...Array(table.numRows).keys()].map((i) => {
        const r = table.get(i)!.toJSON() as Record<string, any>;
        return [r.source_id, [...r.businesses].map((b: any) => b.toJSON())];
      }),
    );
    const names = (id: string) => bySource.get(id)!.map((b) => b.name);
    // The register's rows, placed by hand: w1561 by id and by its address (Under Rüttigass 6, 9494 Schaan), w3084 by
    // Im Rösle 2 (its own tags), w3341 by a point in the middle of its rectangle.
    expect(names('osm:way/1561')).toEqual(['Jugendherberge Betriebs AG', 'Rüttigass Verwaltung AG']);
    expect(bySource.get('osm:way/1561')![0]).toEqual({
      business_id: 'register:FL-0002.100.001-1',
      registration_number: 'FL-0002.100.001-1',
      name: 'Jugendherberge Betriebs AG',
      active: true,
      employees_min: 10,
      employees_max: 19,
      turnover: 1_250_000,
      turnover_currency: 'CHF',
      turnover_financial_year: 2012,
    });
    expect(bySource.get('osm:way/3084')).toMatchObject([
      { name: 'Rösle Brau Anstalt', active: false, employees_min: 3, employees_max: 3, turnover: null, turnover_financial_year: 2011 },
    ]);
    expect(bySource.get('osm:way/3341')).toMatchObject([{ name: 'Ebenholz Treuhand AG', employees_min: 250, employees_max: null }]);
    // Nothing else: the shops, hostels and restaurants mapped in OpenStreetMap are no register's.
    expect([...bySource.values()].reduce((n, list) => n + list.length, 0)).toBe(4);
    expect(withRegister.stdout).toMatch(/register rows 4\/6/);
    expect(withRegister.stdout).toMatch(/business_bad_value: 1\n\s+e\.g\. businesses-li\.csv:8: FL-0002\.100\.007-7: active "maybe"/);
    expect(withRegister.stdout).toMatch(/business_unmatched: 2/);
    expect(metadata.sources.map((s) => s.name)).toEqual(['OpenStreetMap', 'Business register businesses-li.csv']);
    // A register whose header names a column the builder does not know is refused, nothing written.
    const typo = join(dir, 'typo.csv');
    writeFileSync(typo, 'registration_id,name,active,turnvoer,building\n1,A,true,5,osm:way/1561\n');
    const refused = await cli(
      '--country',
      'LI',
      '--date',
      '2013-08-03',
      '--pbf',
      PBF,
      '--businesses',
      typo,
      '--out',
      join(dir, 'typo.arrow'),
    );
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/typo\.csv: unknown column "turnvoer" \(columns: registration_id, name, active, /);
    expect(existsSync(join(dir, 'typo.arrow'))).toBe(false);
    // A register with no usable row, or none of whose rows finds a building, is the wrong file: nothing written.
    const headerOnly = join(dir, 'header-only.csv');
    writeFileSync(headerOnly, 'registration_id,name,active,building\n');
    const elsewhere = join(dir, 'elsewhere.csv');
    writeFileSync(elsewhere, 'registration_id,name,active,lat,lon\n1,A,true,43.73,7.42\n');
    const [empty, away] = await Promise.all([
      cli('--country', 'LI', '--date', '2013-08-03', '--pbf', PBF, '--businesses', headerOnly, '--out', join(dir, 'empty-register.arrow')),
      cli('--country', 'LI', '--date', '2013-08-03', '--pbf', PBF, '--businesses', elsewhere, '--out', join(dir, 'away-register.arrow')),
    ]);
    expect([empty.status, lastLine(empty.stderr)]).toEqual([
      1,
      `build-snapshot: ${headerOnly}: no usable row (a header alone, or every row refused: see the bad rows); nothing written\n`,
    ]);
    expect(away.status).toBe(1);
    expect(lastLine(away.stderr)).toMatch(
      /elsewhere\.csv: none of its 1 rows names, contains or shares an address with a building of this input/,
    );
    expect([existsSync(join(dir, 'empty-register.arrow')), existsSync(join(dir, 'away-register.arrow'))]).toEqual([false, false]);
  });

  it('builds Liechtenstein from the PBF itself into <out>/LI/<date>.arrow', async () => {
    const out = join(dir, 'snapshots');
    const run = await cli('--country', 'LI', '--date', '2013-08-03', '--pbf', PBF, '--out', out);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/rows\s+3720 buildings/);
    expect(readSnapshot(join(out, 'LI', '2013-08-03.arrow')).metadata.rowCount).toBe(3720);
  });
});
