/** Small builders of JSON Schema (OpenAPI 3.1) objects, shared by the OpenAPI modules. */

export type Json = Record<string, unknown>;

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
export const nullableRef = (name: string, description: string): Json => ({ description, oneOf: [ref(name), { type: 'null' }] });
export const str = (description: string, extra: Json = {}): Json => ({ type: 'string', description, ...extra });
export const nstr = (description: string, extra: Json = {}): Json => ({ type: ['string', 'null'], description, ...extra });
export const numb = (description: string, extra: Json = {}): Json => ({ type: 'number', description, ...extra });
export const nnum = (description: string, extra: Json = {}): Json => ({ type: ['number', 'null'], description, ...extra });
export const nint = (description: string, extra: Json = {}): Json => ({ type: ['integer', 'null'], description, ...extra });
export const date = (description: string): Json => ({ type: 'string', format: 'date', description });
export const ndate = (description: string): Json => ({ type: ['string', 'null'], format: 'date', description });
export const enumOf = (values: readonly string[], description: string): Json => ({ type: 'string', enum: [...values], description });
export const nenum = (values: readonly string[], description: string): Json => ({
  type: ['string', 'null'],
  enum: [...values, null],
  description,
});

/** An object whose every property is required, in the order given (the serializers' order). */
export function object(description: string, properties: Record<string, Json>): Json {
  return { type: 'object', description, required: Object.keys(properties), properties };
}
