/**
 * Child process of the bench: writes one synthetic country, so that the generator's memory never
 * counts in the bench's resident-memory measurement. Run by dataset.ts as
 * `node --import tsx bench/generate.ts --seed S --buildings N --out DIR`; prints the result as
 * one JSON line on stdout.
 */
import { parseArgs } from 'node:util';
import { writeSyntheticCountry } from '../src/synth/generate.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    buildings: { type: 'string' },
    out: { type: 'string' },
  },
});
if (!values.seed || !values.buildings || !values.out) throw new TypeError('usage: generate.ts --seed S --buildings N --out DIR');
const buildings = Number(values.buildings);
const t0 = performance.now();
let shown = 0;
const onProgress = (done: number): void => {
  if (done < shown + buildings / 20 && done !== buildings) return;
  shown = done;
  process.stderr.write(
    `  generator: ${done.toLocaleString('en')}/${buildings.toLocaleString('en')} buildings, ${((performance.now() - t0) / 1000).toFixed(0)} s\n`,
  );
};
const result = await writeSyntheticCountry({ seed: Number(values.seed), buildings, outDir: values.out, onProgress });
process.stdout.write(`${JSON.stringify(result)}\n`);
