/**
 * Reads a v1 file as the current format: the columns v2 added are made from what v1 kept.
 * - `seismic_listed`: true where a risk class or an assessment year is set (v1 kept nothing of a
 *   listed building with neither, so such a building stays unlisted);
 * - `locality_basis`: null throughout (v1 does not say; public pages show the locality as stated).
 */
import { DataType, Field, RecordBatch, Schema, Struct, Table, makeData, type Data } from 'apache-arrow';
import { makeAccumulator } from './columns.ts';
import { COLUMNS, columnSpec } from './schema.ts';

/** The largest dictionary id a type uses, nested ones included (-1 when none). */
function largestDictionaryId(type: DataType): number {
  let id = DataType.isDictionary(type) ? type.id : -1;
  for (const child of type.children ?? []) id = Math.max(id, largestDictionaryId(child.type));
  return id;
}

/** One column made by the writer's own accumulator from per-row values. */
function column(name: string, dictionaryId: number, values: (boolean | string | null)[]): Data {
  const acc = makeAccumulator(columnSpec(name), () => dictionaryId);
  for (const v of values) acc.push(v);
  return acc.gather(Uint32Array.from(values, (_, i) => i)).data(0, values.length);
}

export function upgradeV1(table: Table): Table {
  const basisId = Math.max(-1, ...table.schema.fields.map((f) => largestDictionaryId(f.type))) + 1;
  const added = table.batches.map((batch) => {
    const cls = batch.getChild('seismic_risk_class')!;
    const year = batch.getChild('seismic_risk_assessment_year')!;
    const listed: boolean[] = [];
    for (let i = 0; i < batch.numRows; i++) listed.push(cls.isValid(i) || year.isValid(i));
    return new Map<string, Data>([
      ['seismic_listed', column('seismic_listed', -1, listed)],
      [
        'locality_basis',
        column(
          'locality_basis',
          basisId,
          listed.map(() => null),
        ),
      ],
    ]);
  });
  const index = new Map(table.schema.fields.map((f, i) => [f.name, i]));
  const fields = COLUMNS.map((spec) => {
    const at = index.get(spec.name);
    return at !== undefined ? table.schema.fields[at] : new Field(spec.name, column(spec.name, basisId, []).type, spec.nullable);
  });
  const schema = new Schema(fields, table.schema.metadata);
  const struct = new Struct(fields);
  const batches = table.batches.map(
    (batch, b) =>
      new RecordBatch(
        schema,
        makeData({
          type: struct,
          length: batch.numRows,
          nullCount: 0,
          children: COLUMNS.map((spec) => {
            const at = index.get(spec.name);
            return at !== undefined ? batch.data.children[at] : added[b].get(spec.name)!;
          }),
        }),
      ),
  );
  return new Table(schema, batches);
}
