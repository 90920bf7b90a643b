/**
 * The parameters in words, from the table: one description per parameter (also the OpenAPI
 * `description`) and Markdown tables of every operation's parameters for the API docs.
 */
import { OPERATIONS, operationLabel, type OperationId } from './operations.ts';
import { BODY_ONE_OF, bodyFieldsOf, type BodyField } from './bodies.ts';
import { parametersOf, rangePairs, type Condition, type ParamSpec } from './params.ts';

const fmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 10 });

function conditions(list: readonly Condition[]): string {
  const words = list.map((c) => (c.value === undefined ? c.name : `${c.name}=${c.value}`));
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

/** Type, range, default and format in a few words: `integer, 0 to 500`. */
export function constraintText(p: ParamSpec): string {
  const parts: string[] = [];
  if (p.format === 'bbox') parts.push('string: minLon,minLat,maxLon,maxLat');
  else if (p.format === 'uuid') parts.push('string, UUID');
  else parts.push(p.list ? `list of ${p.type}` : p.type);
  if (p.min !== undefined && p.max !== undefined) {
    parts.push(
      p.exclusiveMin ? `greater than ${fmt.format(p.min)}, at most ${fmt.format(p.max)}` : `${fmt.format(p.min)} to ${fmt.format(p.max)}`,
    );
  }
  if (p.values) parts.push(p.values.join(', '));
  if (p.expected && p.format !== 'uuid') parts.push(p.expected);
  if (p.minLength !== undefined) parts.push(`${p.minLength} to ${p.maxLength} characters`);
  if (p.default !== undefined) parts.push(`default ${String(p.default)}`);
  return parts.join('; ');
}

function bodyConstraintText(f: BodyField): string {
  const parts: string[] = [f.type === 'enum' ? `one of ${f.values!.join(', ')}` : f.type];
  if (f.expected) parts.push(f.expected);
  if (f.minLength !== undefined || f.maxLength !== undefined) parts.push(`${f.minLength ?? 0} to ${f.maxLength} characters`);
  if (f.min !== undefined) parts.push(`at least ${fmt.format(f.min)}`);
  return parts.join('; ');
}

/** The parameter's doc plus the rules the validator enforces on it. */
export function describeParameter(p: ParamSpec, operation: OperationId = p.operations[0]): string {
  const out = [p.doc];
  if (p.list) out.push('Repeat the parameter or separate values with commas; values combine with OR.');
  if (p.type === 'boolean' && p.default === false) out.push('false (the default) keeps every building.');
  for (const [min, max] of rangePairs(operation)) {
    if (p === min) out.push(`Must not exceed ${max.name}.`);
  }
  if (p.requiredWith) out.push(`Required with ${conditions(p.requiredWith)}.`);
  if (p.refusedWith) out.push(`Not accepted with ${conditions(p.refusedWith)}.`);
  if (p.disjointFrom) out.push(`A value must not also be given in ${p.disjointFrom}.`);
  return out.join(' ');
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** Markdown: one section per operation, one table row per parameter, grouped as in the spec. */
export function renderParameterDocs(): string {
  const lines: string[] = [
    '# Parameters',
    '',
    'Generated from `src/api/params.ts`, the table that also drives validation and `/v1/openapi.json`.',
    '',
    'Values: integers are plain decimal digits; numbers use JSON number syntax (`12`, `-3.5`, `2.5e3`); booleans are',
    '`true` or `false`. A parameter not listed, an empty value, or a non-list parameter given twice is refused with',
    '400 invalid_parameter, naming the parameter.',
  ];
  for (const op of Object.values(OPERATIONS)) {
    const params = parametersOf(op.id);
    const fields = bodyFieldsOf(op.id);
    if (params.length === 0 && fields.length === 0) continue;
    lines.push('', `## ${operationLabel(op.id)}`, '', `${op.summary}.`);
    if (fields.length > 0) {
      lines.push('', '**JSON body**', '', '| Field | Required | Type and constraints | Description |', '|---|---|---|---|');
      for (const f of fields) lines.push(`| ${f.name} | ${f.required ? 'yes' : 'no'} | ${cell(bodyConstraintText(f))} | ${cell(f.doc)} |`);
      const oneOf = BODY_ONE_OF[op.id];
      if (oneOf) lines.push('', `Give at least one of ${oneOf.join(', ')}.`);
    }
    let group = '';
    for (const p of params) {
      if (p.group !== group) {
        group = p.group;
        lines.push('', `**${group}**`, '', '| Parameter | In | Required | Type and constraints | Description |', '|---|---|---|---|---|');
      }
      lines.push(
        `| ${p.name} | ${p.in} | ${p.required ? 'yes' : 'no'} | ${cell(constraintText(p))} | ${cell(describeParameter(p, op.id))} |`,
      );
    }
  }
  return lines.join('\n') + '\n';
}
