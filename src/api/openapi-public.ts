/**
 * The OpenAPI parts of the operations without a key: public pages (flat errors, caching),
 * country, removal and report requests (structured errors, JSON bodies from `bodies.ts`).
 * `openapi.ts` assembles them with the rest.
 */
import { BODY_ONE_OF, bodyFieldsOf, MAX_BODY_BYTES, type BodyField } from './bodies.ts';
import { PUBLIC_ERROR_CODES } from './errors.ts';
import { BUILDING_FACT_DOCS, BUILDING_FACTS } from './facts.ts';
import { enumOf, nint, nnum, nstr, numb, object, ref, str, type Json } from './json-schema.ts';
import type { Operation } from './operations.ts';
import { PLACE_FACT_DOCS, PLACE_FACTS } from './place.ts';

const dateTime = (description: string): Json => ({ type: 'string', format: 'date-time', description });
const ndateTime = (description: string): Json => ({ type: ['string', 'null'], format: 'date-time', description });
const day = (description: string): Json => ({ type: 'string', format: 'date', description });
const count = (description: string): Json => ({ type: 'integer', minimum: 0, description });
const factsOf = (names: readonly string[], docs: Readonly<Record<string, string>> = {}): Json => {
  const properties: Record<string, Json> = {};
  for (const n of names) properties[n] = docs[n] === undefined ? ref('PublicFact') : { ...ref('PublicFact'), description: docs[n] };
  return { type: 'object', description: 'Each fact as {value, estimate}.', required: [...names], properties };
};

const ORDER_FIELDS: Record<string, Json> = {
  order_id: str('The order.', { pattern: '^ord_[0-9A-Za-z]{14}$' }),
  status: enumOf(['pending', 'paid'], 'pending until the payment provider confirms payment; paid: the report can be read.'),
  building_id: str('The building of the report.', { format: 'uuid' }),
  country: str('Country of the building.', { pattern: '^[A-Z]{2}$' }),
  snapshot_date: day('Date of the snapshot the report was frozen from (the one current at purchase).'),
  price: object('What the report costs.', {
    amount_minor: count('In minor units (cents) of currency.'),
    currency: str('ISO 4217.', { pattern: '^[A-Z]{3}$' }),
  }),
  created_at: dateTime('When the order was made.'),
  paid_at: ndateTime('When it was paid; null while pending.'),
};

export function publicSchemas(): Record<string, Json> {
  return {
    PublicFact: {
      type: 'object',
      required: ['value', 'estimate'],
      description: 'One fact of a public page.',
      properties: {
        value: { description: 'The value, or null when unknown.' },
        estimate: {
          type: 'boolean',
          description: 'true when the value is modelled rather than measured or stated (false when value is null).',
        },
      },
    },
    PublicBusiness: object('A business registered at the address: never evidence that it owns or occupies the building.', {
      businessId: str('Identifier of the business (name it in a removal request).'),
      registrationNumber: nstr('Its number in the business register.'),
      name: str('Registered name.'),
      active: { type: 'boolean', description: 'Still active.' },
    }),
    PublicBuilding: object('The facts of a public building page.', {
      buildingId: str('The building.', { format: 'uuid' }),
      country: str('Country of the snapshot.', { pattern: '^[A-Z]{2}$' }),
      snapshotDate: day('Date of the snapshot the facts come from.'),
      facts: factsOf(BUILDING_FACTS, BUILDING_FACT_DOCS),
      registeredBusinesses: object('Businesses whose registered office is at the address.', {
        caution: str('A registered business is never evidence of ownership or occupation.'),
        count: count('Businesses listed.'),
        data: { type: 'array', items: ref('PublicBusiness') },
      }),
    }),
    PublicPlace: object('The facts of a public place page.', {
      country: str('Country.', { pattern: '^[A-Z]{2}$' }),
      locality: str('The locality.'),
      snapshotDate: day('Date of the snapshot the facts come from.'),
      facts: factsOf(PLACE_FACTS, PLACE_FACT_DOCS),
    }),
    PublicPlaceList: object('The places of a country.', {
      country: str('Country.', { pattern: '^[A-Z]{2}$' }),
      snapshotDate: day('Date of the snapshot.'),
      data: {
        type: 'array',
        items: object('A place.', { locality: str('Name (percent-encode it in a place path).'), buildings: count('Buildings.') }),
      },
    }),
    CountryList: object('Covered countries.', {
      data: {
        type: 'array',
        items: object('A covered country.', {
          country: str('ISO 3166-1 alpha-2 code.', { pattern: '^[A-Z]{2}$' }),
          snapshotDate: day('Date of the snapshot served.'),
          buildings: count('Buildings in it.'),
          places: count('Localities with a place page.'),
          bbox: {
            description:
              "minLon, minLat, maxLon, maxLat of the buildings' representative points (null when there are none): the area to ask GET /buildings about.",
            oneOf: [{ type: 'array', minItems: 4, maxItems: 4, items: { type: 'number' } }, { type: 'null' }],
          },
          sources: {
            type: 'array',
            items: object('Where the data comes from.', {
              name: str('Source.'),
              licence: str('Licence.'),
              attribution: str('Attribution to show.'),
              retrieved: day('When it was retrieved.'),
            }),
          },
        }),
      },
    }),
    PublicError: {
      type: 'object',
      required: ['error'],
      description: 'Every non-2xx response under /public (spec 7): the flat format.',
      properties: {
        error: enumOf(
          PUBLIC_ERROR_CODES,
          'not_found: unknown resource; invalid_parameter: bad parameter; rate_limited: limit exceeded; unavailable: temporarily unavailable; internal: an unexpected failure of the server (500, logged).',
        ),
        message: str('For people; with invalid_parameter only.'),
      },
      additionalProperties: false,
    },
    CountryRequestReceipt: object('The request, as stored.', {
      id: { type: 'integer', minimum: 1, description: 'Number of the request.' },
      country: str('The country asked for.', { pattern: '^[A-Z]{2}$' }),
      status: enumOf(['received'], 'Stored; the team reviews requests by country.'),
      created_at: dateTime('When it was received.'),
    }),
    RemovalRequestReceipt: object('The removal request, as stored.', {
      id: str('Identifier of the request.', { pattern: '^rm_[0-9A-Za-z]{14}$' }),
      status: enumOf(['pending'], 'Waiting for review; an approved removal takes effect at once on every response.'),
      building_id: str('The building.', { format: 'uuid' }),
      business_id: nstr('The business named.'),
      registration_number: nstr('The registration number named.'),
      created_at: dateTime('When it was received.'),
    }),
    ReportOrder: object('A report order (never its token).', ORDER_FIELDS),
    ReportOrderCreated: object('The order just made, with its read token: shown once, here.', {
      ...ORDER_FIELDS,
      token: str('The read token. Keep it: it is stored hashed and cannot be shown again.', { pattern: '^rpt_[0-9A-Za-z]{32}$' }),
      report_url: str('Where to read the report (GET), token included.', { format: 'uri' }),
    }),
    Report: object('A report order and, once paid, its report.', {
      ...ORDER_FIELDS,
      report: { description: 'The report; null while the order is pending.', oneOf: [ref('ReportDocument'), { type: 'null' }] },
    }),
    ReportDocument: object('Every fact of the building, its units and its registered businesses, as of snapshot_date.', {
      building: ref('Building'),
      footprint: object('The outline as GeoJSON, CRS84.', {
        type: enumOf(['MultiPolygon'], 'GeoJSON type.'),
        coordinates: {
          type: 'array',
          items: { type: 'array', items: { type: 'array', items: { type: 'array', items: { type: 'number' } } } },
        },
      }),
      entrances: {
        type: 'array',
        items: object('A listed address of the building.', {
          address: str('As the record states it.'),
          house_number: nstr('House number.'),
          postal_code: nstr('Postal code.'),
        }),
      },
      roof_planes: {
        type: 'array',
        items: object('One plane of the roof analysis.', {
          azimuth_deg: numb('Direction it faces, clockwise from north.'),
          tilt_deg: numb('Slope.'),
          area_m2: numb('Area in m².'),
          panel_count: nint('Panels that fit.'),
          yearly_energy_kwh: nnum('Yearly yield of those panels.'),
        }),
      },
      climate: {
        type: 'object',
        description: 'Recent climate at the location (null: unknown).',
        additionalProperties: { type: ['number', 'null'] },
      },
      energy: {
        type: 'object',
        description: 'Heating and energy networks (null: unknown).',
        additionalProperties: { type: ['number', 'string', 'boolean', 'null'] },
      },
      units: { type: 'array', items: ref('Unit') },
      registered_businesses: object('Businesses registered at the address.', {
        caution: str('A registered business is never evidence of ownership or occupation.'),
        data: { type: 'array', items: ref('RegisteredBusiness') },
      }),
    }),
  };
}

const retryAfter = {
  'Retry-After': { description: 'Seconds to wait before retrying.', required: true, schema: { type: 'integer', minimum: 1 } },
};

function publicError(description: string, example: Json, headers: Record<string, Json> = {}): Json {
  return {
    description,
    headers,
    content: { 'application/json': { schema: ref('PublicError'), examples: { [String(example.error)]: { value: example } } } },
  };
}

function structuredError(description: string, code: string, message: string, parameter = '', headers: Record<string, Json> = {}): Json {
  return {
    description,
    headers,
    content: { 'application/json': { schema: ref('Error'), examples: { [code]: { value: { error: { code, message, parameter } } } } } },
  };
}

export function publicResponses(): Record<string, Json> {
  return {
    PublicInvalidParameter: publicError('A bad parameter.', {
      error: 'invalid_parameter',
      message: 'building_id: expected a UUID such as 0b7e3f4a-1c2d-5e6f-8a9b-0c1d2e3f4a5b; got "x"',
    }),
    PublicNotFound: publicError('Unknown resource.', { error: 'not_found' }),
    PublicRateLimited: publicError('More than 120 requests a minute from this client address.', { error: 'rate_limited' }, retryAfter),
    PublicUnavailable: publicError('Temporarily unavailable (no snapshot loaded yet).', { error: 'unavailable' }, retryAfter),
    NotModified: {
      description: 'The representation matching If-None-Match is still current.',
      headers: { ETag: { schema: { type: 'string' } } },
    },
    OpenInvalidParameter: structuredError(
      'invalid_parameter: a bad, missing or unknown parameter or body field (also a building that does not exist); parameter names it.',
      'invalid_parameter',
      'country: "XX" is not an ISO 3166-1 alpha-2 country code',
      'country',
    ),
    NotFound: structuredError(
      'not_found: no such record (or a wrong token); on POST /reports, a server that offers no reports.',
      'not_found',
      'No report order ord_4fQ9aZ0bC1dE2f with this token.',
    ),
    PayloadTooLarge: structuredError(
      `payload_too_large: the body is over ${MAX_BODY_BYTES.toLocaleString('en-US')} bytes.`,
      'payload_too_large',
      `body: at most ${MAX_BODY_BYTES.toLocaleString('en-US')} bytes.`,
      'body',
    ),
    UnsupportedMediaType: structuredError(
      'unsupported_media_type: the body is not sent as application/json.',
      'unsupported_media_type',
      'Content-Type: send Content-Type: application/json.',
      'Content-Type',
    ),
    OpenRateLimited: structuredError(
      'rate_limited: too many requests from this client address; Retry-After says when to retry.',
      'rate_limited',
      'Too many requests from this client address; retry in 120 s.',
      '',
      retryAfter,
    ),
    BadSignature: structuredError(
      'unauthorized: the X-Edifice-Signature header is missing or does not match the body.',
      'unauthorized',
      'X-Edifice-Signature does not match the body.',
      'X-Edifice-Signature',
    ),
  };
}

function fieldSchema(f: BodyField): Json {
  const s: Json = { description: f.doc };
  if (f.type === 'integer') Object.assign(s, { type: 'integer', minimum: f.min, maximum: f.max });
  else if (f.type === 'enum') Object.assign(s, { type: 'string', enum: [...f.values!] });
  else {
    s.type = 'string';
    if (f.pattern !== undefined) s.pattern = f.pattern;
    if (f.minLength !== undefined) s.minLength = f.minLength;
    if (f.maxLength !== undefined) s.maxLength = f.maxLength;
    if (f.format === 'email') s.format = 'email';
    if (f.format === 'uuid') s.format = 'uuid';
  }
  return s;
}

export function requestBody(op: Operation): Json {
  const fields = bodyFieldsOf(op.id);
  const properties: Record<string, Json> = {};
  for (const f of fields) properties[f.name] = fieldSchema(f);
  const schema: Json = {
    type: 'object',
    properties,
    required: fields.filter((f) => f.required).map((f) => f.name),
    additionalProperties: false,
  };
  const oneOf = BODY_ONE_OF[op.id];
  if (oneOf) schema.anyOf = oneOf.map((name) => ({ required: [name] }));
  return {
    required: true,
    description: `JSON, at most ${MAX_BODY_BYTES.toLocaleString('en-US')} bytes.`,
    content: { 'application/json': { schema } },
  };
}

/** Responses of a /public page: cacheable 200 with ETag, 304, and the flat errors. */
export function publicPageResponses(op: Operation): Json {
  return {
    200: {
      description: op.summary,
      headers: {
        'Cache-Control': {
          description: 'public, max-age=<seconds>: the same answer to everyone.',
          required: true,
          schema: { type: 'string' },
        },
        ETag: { description: 'Tied to the snapshot served; send it back in If-None-Match.', required: true, schema: { type: 'string' } },
      },
      content: { 'application/json': { schema: ref(op.response) } },
    },
    304: { $ref: '#/components/responses/NotModified' },
    400: { $ref: '#/components/responses/PublicInvalidParameter' },
    404: { $ref: '#/components/responses/PublicNotFound' },
    429: { $ref: '#/components/responses/PublicRateLimited' },
    503: { $ref: '#/components/responses/PublicUnavailable' },
  };
}

/** Responses of the operations without a key that answer in the structured format. */
export function openResponses(op: Operation): Json {
  const out: Json = {
    [op.status]: { description: op.summary, content: { 'application/json': { schema: ref(op.response) } } },
    400: { $ref: '#/components/responses/OpenInvalidParameter' },
    503: { $ref: '#/components/responses/Unavailable' },
  };
  // The webhook is gated by its signature, not by a per-address limit.
  if (op.id !== 'confirmReportPayment') out[429] = { $ref: '#/components/responses/OpenRateLimited' };
  if (op.method === 'post') {
    out[413] = { $ref: '#/components/responses/PayloadTooLarge' };
    out[415] = { $ref: '#/components/responses/UnsupportedMediaType' };
  }
  if (op.id === 'createReportOrder' || op.id === 'getReport' || op.id === 'confirmReportPayment')
    out[404] = { $ref: '#/components/responses/NotFound' };
  if (op.id === 'confirmReportPayment') out[401] = { $ref: '#/components/responses/BadSignature' };
  return out;
}
