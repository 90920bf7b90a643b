/** The parameters in words, from the table: one description per parameter, the OpenAPI `description`. */
import type { OperationId } from './operations.ts';
import { rangePairs, type Condition, type ParamSpec } from './params.ts';

function conditions(list: readonly Condition[]): string {
  const words = list.map((c) => (c.value === undefined ? c.name : `${c.name}=${c.value}`));
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
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
