/** The admin CLI (tools/admin.ts) run as a child process over a real ledger file. */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger/index.ts';
import { adminWith } from './admin-cli.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function ledgerPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'edifice-admin-'));
  dirs.push(dir);
  return join(dir, 'ledger.db');
}

function admin(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return adminWith({}, ...args);
}

async function ok(...args: string[]): Promise<string> {
  const r = await admin(...args);
  expect(r, `admin ${args.join(' ')}`).toMatchObject({ code: 0, stderr: '' });
  return r.stdout;
}

const json = async <T = any>(...args: string[]): Promise<T> => JSON.parse(await ok(...args, '--json')) as T;

function withLedger<T>(path: string, fn: (ledger: Ledger) => T): T {
  const ledger = Ledger.open(path);
  try {
    return fn(ledger);
  } finally {
    ledger.close();
  }
}

describe('admin CLI', () => {
  it('runs every subcommand over one ledger file', { timeout: 300_000 }, async () => {
    const path = ledgerPath();
    const L = ['--ledger', path];

    const created = await ok('create-workspace', '--name', 'Acme GmbH', '--member', 'ana@acme.test', '--plan', 'starter', ...L);
    const workspaceId = /workspace (ws_\w+)/.exec(created)![1];
    expect(created).toMatch(/member {4}mem_\w+/);
    expect(await json('list-workspaces', ...L)).toMatchObject([{ id: workspaceId, name: 'Acme GmbH', plan: 'starter' }]);
    expect(await ok('list-workspaces', ...L)).toContain('Acme GmbH');

    const bob = await json('add-member', workspaceId, '--email', 'bob@acme.test', ...L);
    expect(bob).toMatchObject({ email: 'bob@acme.test', leftAt: null });

    const keyText = await ok('create-key', workspaceId, '--member', 'ana@acme.test', '--name', 'ci', '--expires', '2099-12-31', ...L);
    const key = /^(edf_\S+)$/m.exec(keyText)![1];
    expect(keyText).toMatch(/shown only this once/);
    const bobKey = await json<{ key: string; keyId: string }>('create-key', workspaceId, '--member', bob.id, ...L);
    const auth = withLedger(path, (l) => l.authenticate(key));
    expect(auth).toMatchObject({ ok: true, workspaceId });
    const keyId = auth.ok ? auth.keyId : '';

    const listed = await ok('list-keys', workspaceId, ...L);
    const listedJson = await ok('list-keys', workspaceId, '--json', ...L);
    for (const secret of [key.slice(17), bobKey.key.slice(17)]) {
      expect(listed).not.toContain(secret);
      expect(listedJson).not.toContain(secret);
    }
    expect(listed).toContain(`edf_${keyId}_…`);
    expect(listed).toMatch(/ci +ana@acme\.test +active .* 2100-01-01T00:00:00Z/);
    expect(JSON.parse(listedJson)).toHaveLength(2);

    expect(await ok('grant', workspaceId, '25', '--note', 'goodwill', ...L)).toMatch(/25 manual credits/);
    expect(await ok('buy', workspaceId, '1_000', '--expires', '2099-01-01T00:00:00Z', ...L)).toMatch(
      /1000 bought credits .* expires 2099-01-01T00:00:00Z/,
    );
    const shown = await json('show', workspaceId, ...L);
    expect(shown).toMatchObject({ plan: 'starter', balance: 5 + 1000 + 25 + 1000 });
    expect(shown.grants.map((g: { kind: string }) => g.kind).sort()).toEqual(['bought', 'manual', 'plan', 'welcome']);
    expect(await ok('show', workspaceId, ...L)).toMatch(/balance +2030 credits/);

    await ok('set-plan', workspaceId, 'none', ...L);
    expect((await json('show', workspaceId, ...L)).plan).toBeNull();
    await ok('set-plan', workspaceId, 'pro', ...L);
    expect((await json('show', workspaceId, ...L)).plan).toBe('pro');

    await ok('suspend', workspaceId, '--reason', 'unpaid', ...L);
    expect(withLedger(path, (l) => l.authenticate(key))).toMatchObject({ status: 403 });
    await ok('unsuspend', workspaceId, ...L);
    expect(withLedger(path, (l) => l.authenticate(key)).ok).toBe(true);

    withLedger(path, (l) => {
      const a = l.authenticate(key);
      if (!a.ok) throw new Error(a.message);
      l.checkLimits(a);
      l.charge(workspaceId, a.keyId, ['b1', 'b2', 'b3'], '/buildings');
    });
    const today = new Date().toISOString().slice(0, 10);
    const usage = await json<{ day: string; requests: number; credits: number }[]>(
      'usage',
      workspaceId,
      '--from',
      today,
      '--to',
      today,
      ...L,
    );
    expect(usage).toEqual([{ day: today, requests: 1, credits: 3, charges: 1, buildings: 3 }]);
    expect(await ok('usage', workspaceId, ...L)).toMatch(/total +1 +3/);

    expect(await ok('revoke-key', `edf_${keyId}`, ...L)).toMatch(/revoked at/);
    expect(withLedger(path, (l) => l.authenticate(key))).toMatchObject({ status: 401, message: expect.stringMatching(/revoked/) });
    expect(await ok('remove-member', workspaceId, 'bob@acme.test', ...L)).toMatch(/keys no longer work/);
    expect(withLedger(path, (l) => l.authenticate(bobKey.key))).toMatchObject({ status: 401, message: expect.stringMatching(/left/) });
    expect((await json('list-keys', workspaceId, ...L)).map((k: { status: string }) => k.status)).toEqual(['revoked', 'creator_left']);

    // Requests from the public: listed, counted and decided here.
    const [r1, r2] = withLedger(path, (l) => {
      l.addCountryRequest({ country: 'PT', email: 'a@b.pt', comment: 'Porto', client: '192.0.2.1' });
      l.addCountryRequest({ country: 'PT', email: null, comment: null, client: '192.0.2.2' });
      l.addCountryRequest({ country: 'FR', email: null, comment: null, client: '192.0.2.3' });
      const base = {
        buildingId: '0b7e3f4a-1c2d-5e6f-8a9b-0c1d2e3f4a5b',
        country: 'RO',
        businessName: 'Alpha SRL',
        reason: 'Moved out in 2019.',
        contact: 'o@x.ro',
        client: '192.0.2.4',
      };
      return [
        l.addRemovalRequest({ ...base, businessId: 'biz-1', registrationNumber: null }),
        l.addRemovalRequest({ ...base, businessId: null, registrationNumber: 'J12/34/2001' }),
      ];
    });
    expect(
      (await json('country-requests', ...L)).demand.map((d: { country: string; requests: number }) => [d.country, d.requests]),
    ).toEqual([
      ['PT', 2],
      ['FR', 1],
    ]);
    expect(await ok('country-requests', '--list', ...L)).toMatch(/PT +\S+ +a@b\.pt +Porto/);
    expect((await json('removals', '--status', 'pending', ...L)).map((q: { id: string }) => q.id)).toEqual([r1.id, r2.id]);
    expect(await ok('approve-removal', r1.id, '--note', 'checked', ...L)).toMatch(/approved: Alpha SRL \(biz-1\) is hidden/);
    expect(await ok('reject-removal', r2.id, ...L)).toMatch(/rejected/);
    expect(await admin('approve-removal', r2.id, ...L)).toMatchObject({ code: 1, stderr: expect.stringMatching(/already rejected/) });
    expect(withLedger(path, (l) => l.approvedRemovals())).toEqual({ businessIds: new Set(['biz-1']), registrationNumbers: new Set() });
    expect(await admin('removals', '--status', 'done', ...L)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--status takes pending, approved, rejected/),
    });
    withLedger(path, (l) =>
      l.createReportOrder({
        buildingId: '0b7e3f4a-1c2d-5e6f-8a9b-0c1d2e3f4a5b',
        country: 'RO',
        snapshotDate: '2026-11-21',
        email: 'buyer@x.ro',
        priceMinor: 990,
        priceCurrency: 'EUR',
        provider: 'builtin',
        paid: true,
        providerReference: null,
        report: '{}',
        client: '192.0.2.5',
      }),
    );
    const reports = await ok('reports', ...L);
    expect(reports).toMatch(/paid .* RO 2026-11-21 +9\.90 EUR +buyer@x\.ro/);
    expect(reports).not.toMatch(/rpt_/);

    expect(await ok('check', ...L)).toMatch(/every invariant holds/);
    expect(await ok('--help')).toMatch(/create-workspace/);
    expect(await ok('create-key', '--help')).toMatch(/--member/);
  });

  it(
    'opens only a ledger file: not memory, not another SQLite file (left untouched), not a newer schema',
    { timeout: 300_000 },
    async () => {
      const dir = dirname(ledgerPath());
      const foreign = join(dir, 'photos.db');
      const db = new Database(foreign);
      db.exec('CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)');
      db.close();
      const empty = join(dir, 'empty.db');
      writeFileSync(empty, '');
      const png = join(dir, 'picture.db');
      writeFileSync(png, Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
      const newer = join(dir, 'newer.db');
      const n = new Database(newer);
      n.pragma('user_version = 99');
      n.exec('CREATE TABLE workspaces (id TEXT)');
      n.close();
      const cases: [string[], number, RegExp][] = [
        [['list-workspaces', '--ledger', ':memory:'], 2, /--ledger must name a file, got ":memory:"/],
        [['create-workspace', '--name', 'Ghost', '--member', 'g@b.test', '--ledger', ''], 2, /--ledger must name a file, got ""/],
        [
          ['list-workspaces', '--ledger', foreign],
          1,
          /photos\.db is a SQLite file of something else, not an Edifice ledger; it is left as it is/,
        ],
        [['create-workspace', '--name', 'X', '--member', 'a@b.test', '--ledger', foreign], 1, /something else, not an Edifice ledger/],
        [['list-workspaces', '--ledger', empty], 1, /empty\.db is an empty file, not a ledger/],
        [['list-workspaces', '--ledger', png], 1, /picture\.db is not a ledger: SQLite cannot read it \(SQLITE_NOTADB\)/],
        [['list-workspaces', '--ledger', dir], 1, /is a folder, not a ledger file/],
        [['list-workspaces', '--ledger', newer], 1, /newer\.db is a ledger of a newer schema \(99\) than this program reads/],
      ];
      for (const [args, code, message] of cases) {
        const r = await admin(...args);
        expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }, args.join(' ')).toEqual({
          code,
          stderr: expect.stringMatching(message),
          stdout: '',
        });
        expect(r.stderr, args.join(' ')).not.toMatch(/\n\s+at /); // one line, no stack
      }
      const after = new Database(foreign, { readonly: true });
      expect(after.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toEqual(['photos']);
      expect(after.pragma('user_version', { simple: true })).toBe(0);
      after.close();
      // An empty file may become a ledger, by create-workspace only.
      expect(await ok('create-workspace', '--name', 'X', '--member', 'a@b.test', '--ledger', empty)).toMatch(/workspace ws_/);
      expect(await ok('list-workspaces', '--ledger', empty)).toMatch(/X/);
    },
  );

  it('refuses bad arguments with a clear message and a non-zero exit', { timeout: 300_000 }, async () => {
    const path = ledgerPath();
    const L = ['--ledger', path];
    const cases: [string[], number, RegExp][] = [
      [[], 2, /no command given/],
      [['frobnicate', ...L], 2, /unknown command "frobnicate"/],
      [['list-keys', 'ws_x', ...L], 1, /No ledger at .*ledger\.db/],
      [['create-workspace', '--member', 'a@b.test', ...L], 2, /needs --name/],
      [['create-workspace', '--name', 'X', ...L], 2, /needs --member/],
      [['create-workspace', '--name', 'X', '--member', 'not-an-email', ...L], 1, /email address/],
      [['create-workspace', '--name', 'X', '--member', 'a@b.test', '--plan', 'gold', ...L], 1, /Unknown plan "gold"/],
    ];
    for (const [args, code, message] of cases) {
      const r = await admin(...args);
      expect({ code: r.code, stderr: r.stderr }, args.join(' ')).toMatchObject({ code, stderr: expect.stringMatching(message) });
    }
    const workspaceId = /workspace (ws_\w+)/.exec(await ok('create-workspace', '--name', 'X', '--member', 'a@b.test', ...L))![1];
    const more: [string[], number, RegExp][] = [
      [['show', ...L], 2, /show takes <workspace>, got none/],
      [['show', 'ws_nope', ...L], 1, /No workspace ws_nope/],
      [['show', workspaceId, 'extra', ...L], 2, /takes <workspace>, got/],
      [['grant', workspaceId, 'abc', ...L], 2, /whole number/],
      [['buy', workspaceId, '0', ...L], 2, /whole number/],
      [['buy', workspaceId, '5', '--bogus', ...L], 2, /Unknown option '--bogus'/],
      [['buy', workspaceId, '5', '--expires', 'soon', ...L], 2, /--expires takes a date/],
      [
        ['buy', workspaceId, '5', '--expires', '2001-01-01', ...L],
        1,
        /--expires 2001-01-01 has passed \(it ends 2001-01-02T00:00:00Z\); give a time in the future/,
      ],
      [['set-plan', workspaceId, 'gold', ...L], 1, /Unknown plan "gold"/],
      [['add-member', workspaceId, ...L], 2, /needs --email/],
      [['add-member', workspaceId, '--email', 'a@b.test', ...L], 1, /already a member/],
      [['remove-member', workspaceId, 'who@b.test', ...L], 1, /No member who@b\.test/],
      [['create-key', workspaceId, ...L], 2, /needs --member/],
      [['create-key', workspaceId, '--member', 'who@b.test', ...L], 1, /No member/],
      [['revoke-key', 'short', ...L], 2, /key id/],
      [['revoke-key', 'AAAAAAAAAAAA', ...L], 1, /No API key AAAAAAAAAAAA/],
      [['usage', workspaceId, '--from', '2026-13-01', ...L], 1, /--from must be a date/],
      [['usage', workspaceId, '--from', '2026-02-01', '--to', '2026-01-01', ...L], 1, /--from 2026-02-01 is after --to 2026-01-01/],
      [['create-key', 'ws_nope', '--member', 'a@b.test', ...L], 1, /No workspace ws_nope/],
      [['grant', workspaceId, '99999999999', ...L], 2, /from 1 to 1,000,000,000/],
      // A time without its zone would be read in this machine's; a day that is not one rolls over.
      [['buy', workspaceId, '5', '--expires', '2099-01-01T00:00:00', ...L], 2, /an ISO time with its zone/],
      [['buy', workspaceId, '5', '--expires', '2099-02-31T00:00:00Z', ...L], 2, /an ISO time with its zone/],
      [['buy', workspaceId, '5', '--expires', '2099-02-31', ...L], 2, /"2099-02-31" is not a date/],
    ];
    for (const [args, code, message] of more) {
      const r = await admin(...args);
      expect({ code: r.code, stderr: r.stderr }, args.join(' ')).toMatchObject({ code, stderr: expect.stringMatching(message) });
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });

  it(
    'takes --ledger and --json before the command as well as after it, and refuses an option given twice',
    { timeout: 300_000 },
    async () => {
      const path = ledgerPath();
      const other = ledgerPath();
      expect(await ok('--ledger', path, 'create-workspace', '--name', 'Before', '--member', 'a@b.test')).toMatch(/workspace ws_/);
      expect(JSON.parse(await ok('--json', '--ledger', path, 'list-workspaces'))).toMatchObject([{ name: 'Before' }]);
      expect(JSON.parse(await ok(`--ledger=${path}`, 'list-workspaces', '--json'))).toMatchObject([{ name: 'Before' }]);
      // A switch given twice says the same thing twice.
      expect(JSON.parse(await ok('--json', 'list-workspaces', '--ledger', path, '--json'))).toHaveLength(1);
      expect(await ok('--ledger', path, '--help')).toMatch(/create-workspace/);
      const cases: [string[], RegExp][] = [
        [
          ['list-workspaces', '--ledger', path, '--ledger', other],
          /^error: --ledger given twice \(".*ledger\.db", then ".*ledger\.db"\): give it once\n/,
        ],
        [['--ledger', path, 'list-workspaces', '--ledger', other], /--ledger given twice/],
        [
          ['create-workspace', '--name', 'A', '--name', 'B', '--member', 'a@b.test', '--ledger', other],
          /--name given twice \("A", then "B"\)/,
        ],
        [
          ['--name', 'A', 'create-workspace', '--member', 'a@b.test', '--ledger', other],
          /--name comes before the command: only --ledger, --json and --help may; give the command's own options after it/,
        ],
      ];
      for (const [args, message] of cases) {
        const r = await admin(...args);
        expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }, args.join(' ')).toEqual({
          code: 2,
          stderr: expect.stringMatching(message),
          stdout: '',
        });
      }
      expect(existsSync(other)).toBe(false);
    },
  );

  it('reads only EDIFICE_LEDGER of the environment: a bad setting of the server does not stop it', { timeout: 300_000 }, async () => {
    const path = ledgerPath();
    await ok('create-workspace', '--name', 'Env', '--member', 'a@b.test', '--ledger', path);
    const bad = { EDIFICE_PORT: 'abc', EDIFICE_WORKERS: '-1', EDIFICE_REPORT_CURRENCY: 'euro' };
    for (const [vars, args] of [
      [bad, ['list-workspaces', '--ledger', path]],
      [{ ...bad, EDIFICE_LEDGER: path }, ['list-workspaces']],
    ] as const) {
      const r = await adminWith(vars, ...args);
      expect(r, JSON.stringify(vars)).toMatchObject({ code: 0, stderr: '', stdout: expect.stringMatching(/Env/) });
    }
  });

  it('with --json, prints an error as one JSON object on stderr, with the exit code of the text form', { timeout: 300_000 }, async () => {
    const path = ledgerPath();
    const workspaceId = /workspace (ws_\w+)/.exec(
      await ok('create-workspace', '--name', 'X', '--member', 'a@b.test', '--ledger', path),
    )![1];
    const cases: [string[], number, string, RegExp][] = [
      [[], 2, 'usage', /^no command given/],
      [['frobnicate'], 2, 'usage', /^unknown command "frobnicate"/],
      [['show', '--ledger', path], 2, 'usage', /^show takes <workspace>, got none/],
      [['buy', workspaceId, '5', '--bogus', '--ledger', path], 2, 'usage', /Unknown option '--bogus'/],
      [['list-workspaces', '--ledger', path, '--ledger', path], 2, 'usage', /--ledger given twice/],
      [['show', 'ws_nope', '--ledger', path], 1, 'not_found', /^No workspace ws_nope/],
      [['add-member', workspaceId, '--email', 'a@b.test', '--ledger', path], 1, 'conflict', /already a member/],
      [['buy', workspaceId, '5', '--expires', '2001-01-01', '--ledger', path], 1, 'invalid', /^--expires 2001-01-01 has passed/],
    ];
    for (const [args, code, errorCode, message] of cases) {
      const text = await admin(...args);
      const r = await admin(...args, '--json');
      expect({ code: r.code, stdout: r.stdout, lines: r.stderr.split('\n') }, args.join(' ')).toMatchObject({
        code: text.code,
        stdout: '',
        lines: [expect.any(String), ''],
      });
      expect(r.code, args.join(' ')).toBe(code);
      expect(JSON.parse(r.stderr), args.join(' ')).toEqual({ error: { code: errorCode, message: expect.stringMatching(message) } });
      expect(text.stderr, args.join(' ')).toMatch(/^error: /);
    }
  });

  it('escapes control characters of user text, so that each record of a text table stays on one line', { timeout: 300_000 }, async () => {
    const path = ledgerPath();
    const L = ['--ledger', path];
    const created = await ok('create-workspace', '--name', 'Line\nBreak\tCo', '--member', 'a@b.test', ...L);
    const workspaceId = /workspace (ws_\w+)/.exec(created)![1];
    await ok('create-key', workspaceId, '--member', 'a@b.test', '--name', 'ci\rkey', ...L);
    await ok('grant', workspaceId, '5', '--note', 'first\nsecond', ...L);
    await ok('suspend', workspaceId, '--reason', 'unpaid\n\x1b[31mnow', ...L);
    const request = withLedger(path, (l) => {
      l.addCountryRequest({ country: 'PT', email: 'a@b.pt', comment: 'Porto\x1b[2J', client: '192.0.2.1' });
      return l.addRemovalRequest({
        buildingId: '0b7e3f4a-1c2d-5e6f-8a9b-0c1d2e3f4a5b',
        country: 'RO',
        businessName: 'Alpha\nSRL',
        reason: 'Moved\nout',
        contact: 'o@x.ro\r\nBcc: y@x.ro',
        client: '192.0.2.4',
        businessId: 'biz\n1',
        registrationNumber: null,
      });
    });
    const tables: [string[], number, string[]][] = [
      [['list-workspaces'], 2, ['Line\\nBreak\\tCo']],
      [['list-keys', workspaceId], 2, ['ci\\rkey']],
      [['country-requests', '--list'], 2, ['Porto\\x1b[2J']],
      [['removals'], 2, ['biz\\n1', 'Alpha\\nSRL', 'o@x.ro\\r\\nBcc: y@x.ro', 'Moved out']],
    ];
    for (const [args, lines, shown] of tables) {
      const out = await ok(...args, ...L);
      expect(out.split('\n'), args.join(' ')).toHaveLength(lines + 1);
      for (const s of shown) expect(out, args.join(' ')).toContain(s);
    }
    const show = await ok('show', workspaceId, ...L);
    expect(show).toContain(`workspace ${workspaceId}  Line\\nBreak\\tCo\n`);
    expect(show).toContain('suspended since');
    expect(show).toContain('(unpaid\\n\\x1b[31mnow)\n');
    expect(show).toMatch(/manual +5 +5 .* first\\nsecond\n/);
    expect(await ok('approve-removal', request.id, ...L)).toBe(
      `removal ${request.id} approved: Alpha\\nSRL (biz\\n1) is hidden from every response\n`,
    );
    // JSON carries the text as it is.
    expect((await json('removals', ...L))[0]).toMatchObject({ businessName: 'Alpha\nSRL', contact: 'o@x.ro\r\nBcc: y@x.ro' });
  });
});
