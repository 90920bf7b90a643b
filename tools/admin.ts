/**
 * Admin CLI over the ledger (`npm run admin -- <command> ...`). It opens the same SQLite file as
 * the server (WAL: safe while the server runs); changes to keys, members and suspensions reach a
 * running server within its key cache TTL (2 s); an approved removal within its poll interval (1 s).
 */
import { existsSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { ParseArgsConfig } from 'node:util';
import { ledgerPath } from '../src/config.ts';
import {
  Ledger,
  LedgerError,
  LedgerUnavailableError,
  ledgerLocation,
  PgLedger,
  PLANS,
  REMOVAL_STATUSES,
  type CountryDemand,
  type CountryRequest,
  type KeyInfo,
  type RemovalRequest,
  type RemovalStatus,
  type ReportOrder,
  type UsageDay,
} from '../src/ledger/index.ts';
import { parseUtcDay } from '../src/ledger/clock.ts';
import { SCHEMA_VERSION } from '../src/ledger/db.ts';
import { parseArgsOnce } from './args.ts';

class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | undefined>;

/** What the commands use of a ledger: the SQLite Ledger answers at once, PostgreSQL (PgLedger) later. */
type Awaitable<T> = { [K in keyof T]: T[K] extends (...a: infer A) => infer R ? (...a: A) => R | Promise<R> : never };
type AdminLedger = Awaitable<
  Pick<
    Ledger,
    | 'createWorkspace'
    | 'listWorkspaces'
    | 'workspace'
    | 'addMember'
    | 'removeMember'
    | 'createKey'
    | 'listKeys'
    | 'revokeKey'
    | 'grantCredits'
    | 'setPlan'
    | 'suspendWorkspace'
    | 'unsuspendWorkspace'
    | 'audit'
    | 'usage'
    | 'countryRequests'
    | 'countryDemand'
    | 'removalRequests'
    | 'decideRemoval'
    | 'reportOrders'
  >
>;

interface Command<R = unknown> {
  args: string[];
  options?: Options;
  summary: string;
  /** Whether the command may create the ledger file. */
  creates?: boolean;
  run(ledger: AdminLedger, args: string[], values: Values): R | Promise<R>;
  text(result: R): string;
}

/** A command whose text reads the result its run returns, typed as such. */
const command = <R>(c: Command<R>): Command => c as Command<unknown>;

const GLOBAL: Options = {
  ledger: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

const iso = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString().replace('.000Z', 'Z'));

/**
 * The ledger file a command may open: a file (an in-memory ledger would vanish with the command),
 * that is an Edifice ledger of this program's schema or older. Only a command that `creates`
 * may start one, in a file that does not exist or is empty: Ledger.open would otherwise turn
 * any SQLite file it is pointed at into a ledger.
 */
function checkLedgerFile(path: string, creates: boolean): void {
  if (path === '' || path === ':memory:' || path.startsWith('file:')) {
    throw new UsageError(`--ledger must name a file, got "${path}": a ledger in memory would be lost when the command ends.`);
  }
  if (!existsSync(path)) {
    if (creates) return;
    throw new LedgerError('not_found', `No ledger at ${path}. Create it with create-workspace, or pass --ledger <file>.`);
  }
  if (statSync(path).isDirectory()) throw new LedgerError('not_found', `${path} is a folder, not a ledger file.`);
  if (statSync(path).size === 0) {
    if (creates) return;
    throw new LedgerError('not_found', `${path} is an empty file, not a ledger. Create one with create-workspace.`);
  }
  let version: number;
  let tables: number;
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      version = db.pragma('user_version', { simple: true }) as number;
      tables = (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch (err) {
    throw new LedgerError(
      'not_found',
      `${path} is not a ledger: SQLite cannot read it (${(err as { code?: string }).code ?? (err as Error).message}).`,
    );
  }
  if (version === 0 && tables > 0)
    throw new LedgerError('not_found', `${path} is a SQLite file of something else, not an Edifice ledger; it is left as it is.`);
  if (version === 0 && !creates) throw new LedgerError('not_found', `${path} holds no ledger yet. Create one with create-workspace.`);
  if (version > SCHEMA_VERSION) {
    throw new LedgerError(
      'not_found',
      `${path} is a ledger of a newer schema (${version}) than this program reads (${SCHEMA_VERSION}); upgrade the program.`,
    );
  }
}

/** A real calendar day YYYY-MM-DD (Date.parse rolls 02-31 over to March). */
const isDay = (text: string): boolean => {
  try {
    parseUtcDay(text);
    return true;
  } catch {
    return false;
  }
};

/** `YYYY-MM-DD` means "through that UTC day" (expires at 00:00 UTC the day after); else an ISO time with its zone. */
function parseExpiry(text: string | undefined): number | null {
  if (text === undefined) return null;
  let ms: number;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    if (!isDay(text)) throw new UsageError(`--expires: "${text}" is not a date.`);
    ms = Date.parse(`${text}T00:00:00Z`) + 86_400_000;
  } else {
    // With its zone: without one, JavaScript reads the time in this machine's zone.
    const time = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.exec(text);
    ms = time !== null && isDay(time[1]) ? Date.parse(text) : NaN;
    if (Number.isNaN(ms)) {
      throw new UsageError(
        `--expires takes a date YYYY-MM-DD (valid through that UTC day) or an ISO time with its zone (2027-01-31T18:00:00Z, or +01:00), got "${text}".`,
      );
    }
  }
  // Said in the option's terms; the ledger refuses it too, in milliseconds since the epoch.
  if (ms <= Date.now()) throw new RangeError(`--expires ${text} has passed (it ends ${iso(ms)}); give a time in the future.`);
  return ms;
}

function parseCredits(text: string): number {
  if (!/^[1-9]\d{0,9}$/.test(text.replace(/_/g, '')))
    throw new UsageError(`credits must be a whole number from 1 to 1,000,000,000, got "${text}".`);
  return Number(text.replace(/_/g, ''));
}

const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` with its control characters escaped (a newline as \n): text from users must not break a line of the output. */
const printable = (text: string): string =>
  text.replace(/\p{Cc}/gu, (c) => ESCAPES[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

function table(cells: string[][]): string {
  const rows = cells.map((r) => r.map(printable));
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const grantsOptions: Options = { expires: { type: 'string' }, note: { type: 'string' } };

const COMMANDS: Record<string, Command> = {
  'create-workspace': command({
    args: [],
    creates: true,
    options: { name: { type: 'string' }, member: { type: 'string' }, plan: { type: 'string' } },
    summary: '--name <name> --member <email> [--plan free|starter|pro]   a workspace, its first member and 5 welcome credits',
    run: (ledger, _, v) => {
      if (typeof v.name !== 'string') throw new UsageError('create-workspace needs --name <name>.');
      if (typeof v.member !== 'string') throw new UsageError('create-workspace needs --member <email> (its first member).');
      return ledger.createWorkspace(v.name, { createdBy: v.member, plan: (v.plan as string | undefined) ?? null });
    },
    text: (r) => `workspace ${r.workspaceId}\nmember    ${r.memberId}`,
  }),
  'list-workspaces': command({
    args: [],
    summary: '   every workspace',
    run: (ledger) => ledger.listWorkspaces(),
    text: (r: Awaited<ReturnType<AdminLedger['listWorkspaces']>>) =>
      r.length === 0
        ? 'no workspaces'
        : table([
            ['WORKSPACE', 'NAME', 'PLAN', 'CREATED', 'SUSPENDED'],
            ...r.map((w) => [w.id, w.name, w.plan ?? '-', iso(w.createdAt), iso(w.suspendedAt)]),
          ]),
  }),
  show: command({
    args: ['workspace'],
    summary: '<workspace>   plan, balance, members and grants',
    run: (ledger, [ws]) => ledger.workspace(ws),
    text: (w: Awaited<ReturnType<AdminLedger['workspace']>>) =>
      [
        `workspace ${w.id}  ${printable(w.name)}`,
        `plan      ${w.plan ?? 'none'}`,
        `status    ${w.suspendedAt === null ? 'active' : `suspended since ${iso(w.suspendedAt)}${w.suspendedReason ? ` (${printable(w.suspendedReason)})` : ''}`}`,
        `balance   ${w.balance} credits usable now`,
        '',
        table([['MEMBER', 'EMAIL', 'JOINED', 'LEFT'], ...w.members.map((m) => [m.id, m.email, iso(m.joinedAt), iso(m.leftAt)])]),
        '',
        w.grants.length === 0
          ? 'no grants'
          : table([
              ['GRANT', 'KIND', 'AMOUNT', 'REMAINING', 'GRANTED', 'EXPIRES', 'NOTE'],
              ...w.grants.map((g) => [
                String(g.id),
                g.kind + (g.period ? ` ${g.period}` : ''),
                String(g.amount),
                String(g.remaining),
                iso(g.grantedAt),
                iso(g.expiresAt),
                g.note ?? '',
              ]),
            ]),
      ].join('\n'),
  }),
  'add-member': command({
    args: ['workspace'],
    options: { email: { type: 'string' } },
    summary: '<workspace> --email <email>',
    run: (ledger, [ws], v) => {
      if (typeof v.email !== 'string') throw new UsageError('add-member needs --email <email>.');
      return ledger.addMember(ws, v.email);
    },
    text: (m) => `member ${m.id} (${m.email}) joined ${m.workspaceId}`,
  }),
  'remove-member': command({
    args: ['workspace', 'member'],
    summary: '<workspace> <member id | email>   marks them left; their keys stop working',
    run: (ledger, [ws, member]) => ledger.removeMember(ws, member),
    text: (m) => `member ${m.id} (${m.email}) left ${m.workspaceId} at ${iso(m.leftAt)}; their keys no longer work`,
  }),
  'create-key': command({
    args: ['workspace'],
    options: { member: { type: 'string' }, name: { type: 'string' }, expires: { type: 'string' } },
    summary: '<workspace> --member <member id | email> [--name <name>] [--expires <date>]   prints the key once',
    run: (ledger, [ws], v) => {
      if (typeof v.member !== 'string') throw new UsageError('create-key needs --member <member id | email> (who creates the key).');
      return ledger.createKey(ws, v.member, {
        name: (v.name as string | undefined) ?? null,
        expiresAt: parseExpiry(v.expires as string | undefined),
      });
    },
    text: (r) => `${r.key}\n\nKey ${r.keyId} created. Store it now: it is shown only this once and cannot be recovered.`,
  }),
  'list-keys': command({
    args: ['workspace'],
    summary: '<workspace>   key ids and status, never the secrets',
    run: (ledger, [ws]) => ledger.listKeys(ws),
    text: (keys: KeyInfo[]) =>
      keys.length === 0
        ? 'no keys'
        : table([
            ['KEY', 'NAME', 'MEMBER', 'STATUS', 'CREATED', 'EXPIRES', 'REVOKED'],
            ...keys.map((k) => [k.prefix, k.name ?? '-', k.memberEmail, k.status, iso(k.createdAt), iso(k.expiresAt), iso(k.revokedAt)]),
          ]),
  }),
  'revoke-key': command({
    args: ['key'],
    summary: '<key id | edf_<key id>>',
    run: (ledger, [key]) => {
      const m = /^(?:edf_)?([0-9A-Za-z]{12})(?:_.*)?$/.exec(key);
      if (!m) throw new UsageError(`revoke-key takes a key id or the start of a key (edf_<key id>), got "${key}".`);
      return ledger.revokeKey(m[1]);
    },
    text: (k: KeyInfo) => `key ${k.prefix} revoked at ${iso(k.revokedAt)}`,
  }),
  grant: command({
    args: ['workspace', 'credits'],
    options: grantsOptions,
    summary: '<workspace> <credits> [--expires <date>] [--note <text>]   manual credits',
    run: (ledger, [ws, n], v) =>
      ledger.grantCredits(ws, parseCredits(n), {
        kind: 'manual',
        expiresAt: parseExpiry(v.expires as string | undefined),
        note: (v.note as string | undefined) ?? null,
      }),
    text: (g) =>
      `grant ${g.id}: ${g.amount} ${g.kind} credits to ${g.workspaceId}, expires ${g.expiresAt === null ? 'never' : iso(g.expiresAt)}`,
  }),
  buy: command({
    args: ['workspace', 'credits'],
    options: grantsOptions,
    summary: '<workspace> <credits> [--expires <date>] [--note <text>]   bought credits (default: no expiry)',
    run: (ledger, [ws, n], v) =>
      ledger.grantCredits(ws, parseCredits(n), {
        kind: 'bought',
        expiresAt: parseExpiry(v.expires as string | undefined),
        note: (v.note as string | undefined) ?? null,
      }),
    text: (g) =>
      `grant ${g.id}: ${g.amount} ${g.kind} credits to ${g.workspaceId}, expires ${g.expiresAt === null ? 'never' : iso(g.expiresAt)}`,
  }),
  'set-plan': command({
    args: ['workspace', 'plan'],
    summary: `<workspace> <${Object.keys(PLANS).join('|')}|none>`,
    run: async (ledger, [ws, plan]) => {
      await ledger.setPlan(ws, plan === 'none' ? null : plan);
      return { workspaceId: ws, plan: plan === 'none' ? null : plan };
    },
    text: (r) => `workspace ${r.workspaceId}: plan ${r.plan ?? 'none'}`,
  }),
  suspend: command({
    args: ['workspace'],
    options: { reason: { type: 'string' } },
    summary: '<workspace> [--reason <text>]   its keys answer 403',
    run: async (ledger, [ws], v) => {
      await ledger.suspendWorkspace(ws, (v.reason as string | undefined) ?? null);
      return { workspaceId: ws, suspended: true };
    },
    text: (r) => `workspace ${r.workspaceId} suspended`,
  }),
  unsuspend: command({
    args: ['workspace'],
    summary: '<workspace>',
    run: async (ledger, [ws]) => {
      await ledger.unsuspendWorkspace(ws);
      return { workspaceId: ws, suspended: false };
    },
    text: (r) => `workspace ${r.workspaceId} active`,
  }),
  usage: command({
    args: ['workspace'],
    options: { from: { type: 'string' }, to: { type: 'string' } },
    summary: '<workspace> [--from YYYY-MM-DD] [--to YYYY-MM-DD]   requests and credits per UTC day (default: last 30 days)',
    run: async (ledger, [ws], v) => {
      try {
        return await ledger.usage(ws, v.from as string | undefined, v.to as string | undefined);
      } catch (err) {
        // The ledger names its arguments; here they are options.
        if (err instanceof RangeError)
          throw new RangeError(err.message.replace(/\bfromDay\b/g, '--from').replace(/\btoDay\b/g, '--to'), { cause: err });
        throw err;
      }
    },
    text: (days: UsageDay[]) => {
      const sum = (k: 'requests' | 'credits') => days.reduce((s, d) => s + d[k], 0);
      return table([
        ['DAY', 'REQUESTS', 'CREDITS', 'CHARGED REQUESTS', 'BUILDINGS'],
        ...days.map((d) => [d.day, String(d.requests), String(d.credits), String(d.charges), String(d.buildings)]),
        ['total', String(sum('requests')), String(sum('credits')), '', ''],
      ]);
    },
  }),
  'country-requests': command({
    args: [],
    options: { list: { type: 'boolean' } },
    summary: '[--list]   countries asked for, counted by country (--list: every request, newest first)',
    run: async (ledger, _, v) => (v.list ? { requests: await ledger.countryRequests() } : { demand: await ledger.countryDemand() }),
    text: (r: { requests?: CountryRequest[]; demand?: CountryDemand[] }) => {
      if (r.demand) {
        return r.demand.length === 0
          ? 'no country requests'
          : table([['COUNTRY', 'REQUESTS', 'LATEST'], ...r.demand.map((d) => [d.country, String(d.requests), iso(d.latestAt)])]);
      }
      return r.requests!.length === 0
        ? 'no country requests'
        : table([
            ['ID', 'COUNTRY', 'RECEIVED', 'EMAIL', 'COMMENT'],
            ...r.requests!.map((q) => [
              String(q.id),
              q.country,
              iso(q.createdAt),
              q.email ?? '-',
              (q.comment ?? '-').replace(/\s+/g, ' ').slice(0, 60),
            ]),
          ]);
    },
  }),
  removals: command({
    args: [],
    options: { status: { type: 'string' } },
    summary: '[--status pending|approved|rejected]   removal requests, oldest first',
    run: (ledger, _, v) => {
      const status = v.status as string | undefined;
      if (status !== undefined && !(REMOVAL_STATUSES as readonly string[]).includes(status)) {
        throw new UsageError(`--status takes ${REMOVAL_STATUSES.join(', ')}, got "${status}".`);
      }
      return ledger.removalRequests(status as RemovalStatus | undefined);
    },
    text: (r: RemovalRequest[]) =>
      r.length === 0
        ? 'no removal requests'
        : table([
            ['REQUEST', 'STATUS', 'RECEIVED', 'BUSINESS', 'REGISTRATION', 'NAME', 'BUILDING', 'CONTACT', 'REASON'],
            ...r.map((q) => [
              q.id,
              q.status,
              iso(q.createdAt),
              q.businessId ?? '-',
              q.registrationNumber ?? '-',
              q.businessName,
              q.buildingId,
              q.contact,
              q.reason.replace(/\s+/g, ' ').slice(0, 60),
            ]),
          ]),
  }),
  'approve-removal': command({
    args: ['request'],
    options: { note: { type: 'string' } },
    summary: '<request> [--note <text>]   the business disappears from every response within a second',
    run: (ledger, [id], v) => ledger.decideRemoval(id, 'approved', (v.note as string | undefined) ?? null),
    text: (q: RemovalRequest) =>
      `removal ${q.id} approved: ${printable(q.businessName)} (${printable(q.businessId ?? q.registrationNumber!)}) is hidden from every response`,
  }),
  'reject-removal': command({
    args: ['request'],
    options: { note: { type: 'string' } },
    summary: '<request> [--note <text>]',
    run: (ledger, [id], v) => ledger.decideRemoval(id, 'rejected', (v.note as string | undefined) ?? null),
    text: (q: RemovalRequest) => `removal ${q.id} rejected`,
  }),
  reports: command({
    args: [],
    summary: '   building report orders, newest first (never their tokens)',
    run: (ledger) => ledger.reportOrders(),
    text: (r: ReportOrder[]) =>
      r.length === 0
        ? 'no report orders'
        : table([
            ['ORDER', 'STATUS', 'CREATED', 'PAID', 'BUILDING', 'SNAPSHOT', 'PRICE', 'EMAIL'],
            ...r.map((o) => [
              o.id,
              o.status,
              iso(o.createdAt),
              iso(o.paidAt),
              o.buildingId,
              `${o.country} ${o.snapshotDate}`,
              `${(o.priceMinor / 100).toFixed(2)} ${o.priceCurrency}`,
              o.email,
            ]),
          ]),
  }),
  check: command({
    args: [],
    summary: "   verify the ledger's invariants (exit 1 on any breach)",
    run: async (ledger) => {
      const problems = await ledger.audit();
      if (problems.length > 0) process.exitCode = 1;
      return { ok: problems.length === 0, problems };
    },
    text: (r) => (r.ok ? 'ledger sound: every invariant holds' : r.problems.join('\n')),
  }),
};

function help(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'Usage: npm run admin -- [--ledger <file | postgres://…>] [--json] <command> [arguments]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary.replace(/^ +/, '')}`),
    '',
    "--ledger and --json go before or after the command; a command's own options after it.",
    '--ledger defaults to $EDIFICE_LEDGER, else ./data/ledger.db; a postgres:// URL names a PostgreSQL ledger.',
    '--json prints JSON, and an error as JSON on stderr.',
    'Dates: YYYY-MM-DD means valid through that UTC day; an ISO time (2026-12-31T12:00:00Z) is exact.',
  ].join('\n');
}

/** Where the command is in `argv`: after the global options given before it (argv.length when there is none). */
function commandIndex(argv: readonly string[]): number {
  let i = 0;
  while (i < argv.length) {
    const [, name, inline] = /^--([^=]+)(=)?/.exec(argv[i]) ?? [];
    const option = argv[i] === '-h' ? GLOBAL.help : name !== undefined && Object.hasOwn(GLOBAL, name) ? GLOBAL[name] : undefined;
    if (!option) return i;
    i += option.type === 'string' && inline === undefined ? 2 : 1;
  }
  return argv.length;
}

export async function main(argv: string[]): Promise<number> {
  const at = commandIndex(argv);
  const name = argv[at] as string | undefined;
  const rest = [...argv.slice(0, at), ...argv.slice(at + 1)];
  // Looked for before the options are parsed: a command line refused is reported in the form asked for too.
  const json = rest.includes('--json');
  const fail = (status: number, code: string, message: string, usage = ''): number => {
    process.stderr.write(json ? `${JSON.stringify({ error: { code, message } })}\n` : `error: ${message}\n${usage}`);
    return status;
  };
  if (name === undefined || name === 'help') {
    if (name === undefined && !rest.includes('--help') && !rest.includes('-h'))
      return fail(2, 'usage', 'no command given.', `\n${help()}\n`);
    process.stdout.write(help() + '\n');
    return 0;
  }
  if (name.startsWith('-')) {
    return fail(
      2,
      'usage',
      `${name} comes before the command: only --ledger, --json and --help may; give the command's own options after it.`,
      `\n${help()}\n`,
    );
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) return fail(2, 'usage', `unknown command "${name}".`, `\n${help()}\n`);
  let close: (() => unknown) | undefined;
  try {
    let parsed;
    try {
      parsed = parseArgsOnce({ args: rest, options: { ...GLOBAL, ...command.options }, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      process.stdout.write(`Usage: npm run admin -- ${name} ${command.summary}\n`);
      return 0;
    }
    if (positionals.length !== command.args.length) {
      throw new UsageError(
        `${name} takes ${command.args.length === 0 ? 'no arguments' : command.args.map((a) => `<${a}>`).join(' ')}` +
          `, got ${positionals.length === 0 ? 'none' : positionals.map((p) => `"${p}"`).join(' ')}.`,
      );
    }
    const where = ledgerLocation((values.ledger as string | undefined) ?? ledgerPath());
    let ledger: AdminLedger;
    if (where.kind === 'postgres') {
      const pg = await PgLedger.open(where.url);
      close = () => pg.close();
      ledger = pg;
    } else {
      checkLedgerFile(where.path, command.creates === true);
      const file = Ledger.open(where.path);
      close = () => file.close();
      ledger = file;
    }
    const result = await command.run(ledger, positionals, values as Values);
    process.stdout.write((json ? JSON.stringify(result, null, 2) : command.text(result)) + '\n');
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof UsageError) return fail(2, 'usage', err.message, `Usage: npm run admin -- ${name} ${command.summary}\n`);
    if (err instanceof LedgerError || err instanceof LedgerUnavailableError) return fail(1, err.code, err.message);
    if (err instanceof RangeError || err instanceof TypeError) return fail(1, 'invalid', err.message);
    // A system error (a folder it cannot create, a disk full) names its path in its message.
    if (typeof (err as NodeJS.ErrnoException).syscall === 'string') return fail(1, 'system', (err as Error).message);
    throw err;
  } finally {
    await close?.();
  }
}

process.exitCode = await main(process.argv.slice(2));
