/**
 * THE table of request bodies: one row per JSON field of the operations that take a body
 * (country requests, removal requests, report checkout, the payment webhook). Like the parameter
 * table, it drives validation (`parseBody`), the OpenAPI request bodies and the docs.
 *
 * A body is a JSON object (Content-Type application/json, at most MAX_BODY_BYTES); unknown
 * fields, a field of the wrong type, out of its range or pattern are refused with 400
 * invalid_parameter naming the field; a body that is not JSON names `body`. Strings may not
 * hold control characters other than tab and line breaks, nor lone surrogates.
 */
import { ApiError, cut, show } from './errors.ts';
import { isCountryCode } from './iso3166.ts';
import { operationLabel, type OperationId } from './operations.ts';
import { UUID_PATTERN } from './params.ts';
import { didYouMean } from './suggest.ts';

export const MAX_BODY_BYTES = 16 * 1024;

export interface BodyField {
  readonly name: string;
  readonly operations: readonly OperationId[];
  /** Field of the parsed body. */
  readonly key: string;
  readonly type: 'string' | 'integer' | 'enum';
  readonly required: boolean;
  /** ECMA-262, anchored; also the OpenAPI pattern. */
  readonly pattern?: string;
  /** In characters (code points). */
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly min?: number;
  readonly max?: number;
  readonly values?: readonly string[];
  /** Checked beyond the pattern: an email address; an assigned ISO 3166-1 alpha-2 code. */
  readonly format?: 'email' | 'country' | 'uuid';
  /** What a valid value looks like, for messages. */
  readonly expected?: string;
  readonly doc: string;
}

/** At least one of these fields must be given (per operation). */
export const BODY_ONE_OF: Readonly<Partial<Record<OperationId, readonly string[]>>> = {
  createRemovalRequest: ['business_id', 'registration_number'],
};

const EMAIL_PATTERN = '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$';

const email = (operations: OperationId[], required: boolean, doc: string): BodyField => ({
  name: 'email',
  key: 'email',
  operations,
  type: 'string',
  required,
  maxLength: 254,
  pattern: EMAIL_PATTERN,
  format: 'email',
  expected: 'an email address such as ana@example.com',
  doc,
});

const buildingId = (operations: OperationId[], doc: string): BodyField => ({
  name: 'building_id',
  key: 'buildingId',
  operations,
  type: 'string',
  required: true,
  pattern: UUID_PATTERN,
  format: 'uuid',
  expected: 'a UUID such as 0b7e3f4a-1c2d-5e6f-8a9b-0c1d2e3f4a5b',
  doc,
});

export const BODY_FIELDS: readonly BodyField[] = [
  // POST /public/country-requests
  {
    name: 'country',
    key: 'country',
    operations: ['createCountryRequest'],
    type: 'string',
    required: true,
    pattern: '^[A-Z]{2}$',
    format: 'country',
    expected: 'an ISO 3166-1 alpha-2 code in capitals, e.g. PT',
    doc: 'The country asked for: its ISO 3166-1 alpha-2 code. A country already covered is refused (GET /public/countries lists them).',
  },
  email(['createCountryRequest'], false, 'Where to tell you when the country is covered (optional).'),
  {
    name: 'comment',
    key: 'comment',
    operations: ['createCountryRequest'],
    type: 'string',
    required: false,
    minLength: 1,
    maxLength: 1000,
    doc: 'Anything you want the team to know (optional).',
  },

  // POST /removal-requests
  buildingId(['createRemovalRequest'], 'The building the business appears at.'),
  {
    name: 'business_id',
    key: 'businessId',
    operations: ['createRemovalRequest'],
    type: 'string',
    required: false,
    minLength: 1,
    maxLength: 128,
    doc: "The business_id of the business, as the building's registered businesses list it.",
  },
  {
    name: 'registration_number',
    key: 'registrationNumber',
    operations: ['createRemovalRequest'],
    type: 'string',
    required: false,
    minLength: 1,
    maxLength: 64,
    doc: "The business's number in the business register.",
  },
  {
    name: 'reason',
    key: 'reason',
    operations: ['createRemovalRequest'],
    type: 'string',
    required: true,
    minLength: 10,
    maxLength: 2000,
    doc: 'Why the business should be removed (10 to 2,000 characters).',
  },
  {
    name: 'contact',
    key: 'contact',
    operations: ['createRemovalRequest'],
    type: 'string',
    required: true,
    maxLength: 254,
    pattern: EMAIL_PATTERN,
    format: 'email',
    expected: 'an email address such as ana@example.com',
    doc: 'An email address the team can answer you at.',
  },

  // POST /reports
  buildingId(['createReportOrder'], 'The building whose report you buy.'),
  email(['createReportOrder'], true, 'Where the receipt goes.'),

  // POST /reports/payment-webhook
  {
    name: 'order_id',
    key: 'orderId',
    operations: ['confirmReportPayment'],
    type: 'string',
    required: true,
    pattern: '^ord_[0-9A-Za-z]{14}$',
    expected: 'an order id such as ord_4fQ9aZ0bC1dE2f',
    doc: 'The order paid.',
  },
  {
    name: 'status',
    key: 'status',
    operations: ['confirmReportPayment'],
    type: 'enum',
    required: true,
    values: ['paid'],
    doc: 'paid: the provider received the payment.',
  },
  {
    name: 'provider_reference',
    key: 'providerReference',
    operations: ['confirmReportPayment'],
    type: 'string',
    required: false,
    minLength: 1,
    maxLength: 200,
    doc: "The provider's own id of the payment.",
  },
  {
    name: 'amount_minor',
    key: 'amountMinor',
    operations: ['confirmReportPayment'],
    type: 'integer',
    required: false,
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    doc: "Amount paid in minor units (cents); when given it must equal the order's price.",
  },
  {
    name: 'currency',
    key: 'currency',
    operations: ['confirmReportPayment'],
    type: 'string',
    required: false,
    pattern: '^[A-Z]{3}$',
    expected: 'three capitals (ISO 4217), e.g. EUR',
    doc: "Currency of amount_minor; when given it must equal the order's.",
  },
];

export function bodyFieldsOf(operation: OperationId): readonly BodyField[] {
  return BODY_FIELDS.filter((f) => f.operations.includes(operation));
}

function invalid(parameter: string, message: string): ApiError {
  return ApiError.invalidParameter(parameter, `${parameter}: ${message}`);
}

// Tab, line feed and carriage return are allowed: a reason or comment may have lines.
/** With the u flag, a pair is one code point: only a surrogate alone matches. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const CONTROL = /[\p{Cc}--[\t\n\r\x80-\x9f]]/v;

function parseField(f: BodyField, value: unknown): unknown {
  if (f.type === 'integer') {
    if (typeof value !== 'number' || !Number.isSafeInteger(value))
      throw invalid(f.name, `expected a whole number, got ${JSON.stringify(value)}`);
    if ((f.min !== undefined && value < f.min) || (f.max !== undefined && value > f.max))
      throw invalid(f.name, `must be from ${f.min} to ${f.max}; got ${value}`);
    return value;
  }
  if (typeof value !== 'string') throw invalid(f.name, `expected a string, got ${value === null ? 'null' : typeof value}`);
  if (f.type === 'enum') {
    if (!f.values!.includes(value)) throw invalid(f.name, `must be one of ${f.values!.join(', ')}; got ${show(value)}`);
    return value;
  }
  if (CONTROL.test(value)) throw invalid(f.name, 'must not hold control characters');
  // A \ud800 escape alone is valid JSON but no character: stored, it would come back as U+FFFD.
  if (LONE_SURROGATE.test(value))
    throw invalid(f.name, 'must not hold a lone surrogate (a \\uD800-\\uDFFF escape that is not half of a pair)');
  const length = [...value].length;
  if (f.minLength !== undefined && length < f.minLength)
    throw invalid(f.name, `must have at least ${f.minLength} characters; got ${length}`);
  if (f.maxLength !== undefined && length > f.maxLength)
    throw invalid(f.name, `must have at most ${f.maxLength} characters; got ${length}`);
  if (f.pattern !== undefined && !new RegExp(f.pattern).test(value))
    throw invalid(f.name, `expected ${f.expected ?? `a match of ${f.pattern}`}; got ${show(value)}`);
  if (f.format === 'country' && !isCountryCode(value)) throw invalid(f.name, `${show(value)} is not an ISO 3166-1 alpha-2 country code`);
  if (f.format === 'uuid') return value.toLowerCase();
  return value;
}

/**
 * Validates the body of `operation`: the media type, JSON, an object, its fields by the table.
 * Returns the parsed body keyed by the table's `key`s (absent optional fields left out).
 */
export function parseBody(operation: OperationId, contentType: string | undefined, raw: Uint8Array): Record<string, unknown> {
  const [media, ...params] = (contentType ?? '').split(';');
  const type = media.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new ApiError(
      'unsupported_media_type',
      `Content-Type: ${operationLabel(operation)} takes a JSON body; send Content-Type: application/json${type ? `, not ${show(type)}` : ''}.`,
      'Content-Type',
    );
  }
  // JSON is UTF-8 (RFC 8259): a body said to be in another charset would be read wrong, not refused.
  for (const param of params) {
    const [name, value = ''] = param.split('=', 2).map((x) => x.trim());
    const charset = value.replace(/^"(.*)"$/, '$1').toLowerCase();
    if (name.toLowerCase() === 'charset' && charset !== 'utf-8' && charset !== 'utf8') {
      throw new ApiError(
        'unsupported_media_type',
        `Content-Type: a JSON body is UTF-8; send charset=utf-8 or no charset, not ${show(value)}.`,
        'Content-Type',
      );
    }
  }
  if (raw.byteLength > MAX_BODY_BYTES) throw tooLarge();
  let doc: unknown;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
    doc = JSON.parse(text);
  } catch (err) {
    throw invalid('body', `not valid JSON (${(err as Error).message.slice(0, 120)})`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw invalid('body', 'expected a JSON object');
  const repeated = repeatedKey(text);
  if (repeated !== null) throw invalid(repeated, 'given more than once; give each field once');
  const fields = bodyFieldsOf(operation);
  const names = fields.map((f) => f.name);
  const given = doc as Record<string, unknown>;
  for (const name of Object.keys(given)) {
    if (!names.includes(name)) {
      const label = cut(name);
      throw ApiError.invalidParameter(
        label,
        `${label}: not a field of ${operationLabel(operation)}${didYouMean(name, names) || ` (its fields are ${names.join(', ')})`}`,
      );
    }
  }
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const value = given[f.name];
    if (value === undefined || value === null) {
      if (f.required) throw invalid(f.name, 'required');
      continue;
    }
    out[f.key] = parseField(f, value);
  }
  const oneOf = BODY_ONE_OF[operation];
  if (oneOf && !oneOf.some((name) => given[name] !== undefined && given[name] !== null)) {
    throw invalid(oneOf[0], `give ${oneOf.join(' or ')}`);
  }
  return out;
}

/**
 * The first key the top-level object of `text` (valid JSON) gives twice, or null. JSON.parse keeps
 * the last of repeated keys silently; a caller who sent two values should hear which field.
 */
function repeatedKey(text: string): string | null {
  const seen = new Set<string>();
  let depth = 0;
  let keyNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: skip to its closing quote
      let j = i + 1;
      while (text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      if (depth === 1 && keyNext) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (seen.has(key)) return key;
        seen.add(key);
        keyNext = false;
      }
      i = j;
    } else if (c === 0x7b || c === 0x5b) {
      // { [
      depth++;
      if (depth === 1) keyNext = true;
    } else if (c === 0x7d || c === 0x5d) {
      // } ]
      depth--;
    } else if (c === 0x2c && depth === 1) {
      // ,
      keyNext = true;
    }
  }
  return null;
}

export function tooLarge(): ApiError {
  return new ApiError('payload_too_large', `body: at most ${MAX_BODY_BYTES.toLocaleString('en-US')} bytes.`, 'body');
}
