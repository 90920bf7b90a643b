/**
 * The OpenAPI 3.1 document rewritten as OpenAPI 3.0, for clients that read only 3.0: the OGC API
 * – Features test suite (its parser, KaiZen, knows 3.0) and GDAL's OAPIF driver look for a
 * service-desc link of type application/vnd.oai.openapi+json;version=3.0.
 *
 * What 3.1 writes as JSON Schema 2020-12 and 3.0 cannot, rewritten to what 3.0 means by it:
 * - `type: [t, 'null']` is `type: t, nullable: true`; several types are an `anyOf` of each;
 * - a `{type: 'null'}` among a oneOf or anyOf is `nullable: true` (with one schema left, an
 *   `allOf` of it: 3.0 reads nothing beside a `$ref`);
 * - `const: v` is `enum: [v]`;
 * - a numeric `exclusiveMinimum: m` is `minimum: m, exclusiveMinimum: true` (and so for maximum);
 * - `examples: [a, …]` in a schema is `example: a`;
 * - `prefixItems: [s, …]` is `items` (the one schema, or an anyOf) with as many items.
 * Everything else is written as it is.
 */
type Obj = { [k: string]: unknown };

export function toOpenApi30(doc: object): object {
  const out = convert(doc) as Obj;
  out.openapi = '3.0.3';
  return out;
}

const isNull = (s: unknown): boolean => s !== null && typeof s === 'object' && (s as Obj).type === 'null' && Object.keys(s).length === 1;

function convert(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(convert);
  if (v === null || typeof v !== 'object') return v;
  const src = v as Obj;
  const out: Obj = {};
  for (const [k, value] of Object.entries(src)) out[k] = convert(value);
  if (Array.isArray(src.type)) {
    const types = src.type as string[];
    const kept = types.filter((t) => t !== 'null');
    delete out.type;
    if (kept.length === 1) out.type = kept[0];
    else out.anyOf = kept.map((t) => ({ type: t }));
    if (kept.length < types.length) out.nullable = true;
  }
  for (const of of ['oneOf', 'anyOf'] as const) {
    const branches = out[of];
    if (!Array.isArray(branches) || !branches.some(isNull)) continue;
    const kept = branches.filter((b) => !isNull(b));
    delete out[of];
    if (kept.length === 1) out.allOf = [...((out.allOf as unknown[] | undefined) ?? []), ...kept];
    else out[of] = kept;
    out.nullable = true;
  }
  // A `const` whose value is a schema would be a property named const.
  if ('const' in src && (src.const === null || typeof src.const !== 'object' || Array.isArray(src.const))) {
    out.enum = [out.const];
    delete out.const;
  }
  for (const [exclusive, inclusive] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof src[exclusive] === 'number') {
      out[inclusive] = src[exclusive];
      out[exclusive] = true;
    }
  }
  if (Array.isArray(src.examples)) {
    out.example = (out.examples as unknown[])[0];
    delete out.examples;
  }
  if (Array.isArray(src.prefixItems)) {
    const items = out.prefixItems as unknown[];
    const same = items.every((s) => JSON.stringify(s) === JSON.stringify(items[0]));
    out.items = same ? items[0] : { anyOf: items };
    out.minItems ??= items.length;
    out.maxItems ??= items.length;
    delete out.prefixItems;
  }
  return out;
}
