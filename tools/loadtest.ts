/**
 * `npm run loadtest -- --keys K [options]`: a realistic mix of requests against a running Edifice
 * server, at a fixed rate or as fast as possible, bounded in time and count; prints requests/s,
 * latency percentiles, errors by status and code, and credits charged (`--json` for machines).
 * Exit codes: 0 the run completed (whatever the server answered), 1 it could not run (server
 * unreachable, nothing to probe), 2 a bad command line. See `--help` and README "Load testing".
 */
import { parseCli, UsageError, USAGE } from './load/options.ts';
import { formatReport } from './load/report.ts';
import { runLoad } from './load/run.ts';

async function main(argv: readonly string[]): Promise<number> {
  let cli;
  try {
    cli = parseCli(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`loadtest: ${err.message}\n`);
    return err.exitCode;
  }
  if (cli.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const { options } = cli;
  const log = (msg: string) => process.stderr.write(`loadtest: ${msg}\n`);
  log(
    `${options.mode === 'rate' ? `${options.rate}/s` : `max over ${options.connections} connections`} for up to ${options.durationS} s ` +
      `or ${options.requests.toLocaleString('en')} requests against ${options.target.url}`,
  );
  const report = await runLoad(options, log);
  process.stdout.write(cli.json ? `${JSON.stringify(report, null, 1)}\n` : `${formatReport(report)}\n`);
  // The text report ends with them; beside JSON they would go unseen.
  if (cli.json) for (const w of report.warnings) log(`warning: ${w}`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`loadtest: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
