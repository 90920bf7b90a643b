/**
 * The OpenAPI 3.1 document served at /v1/openapi.json. Parameters come from the same table as
 * validation (`params.ts`) and their descriptions from `docs.ts`, so the two cannot drift;
 * response schemas mirror the serializers (`building.ts`, `unit.ts`, `business.ts`,
 * `envelope.ts`), which the tests hold field by field. The OGC API – Features part (oapif.ts) is
 * merged in; a clash with a path or component of the rest is refused.
 */
import { MAX_WINDOW, SORT_KEYS } from '../query/types.ts';
import {
  ADDRESS_CORROBORATION,
  BASIS,
  CATEGORY,
  FLOOD_ZONE,
  FLOOR_AREA_SCOPE,
  PANELS_STATUS,
  ROOF_SHAPE,
  SEISMIC_RISK_CLASS,
  SOLAR_BASIS,
  SOLAR_PRESENCE,
  SOLAR_REGISTER,
  UNIT_USE,
} from '../snapshot/schema.ts';
import { describeParameter } from './docs.ts';
import { ApiError, ERROR_CODES, type ErrorCode } from './errors.ts';
import { OPERATIONS, type Operation, type Tag } from './operations.ts';
import { BBOX_PARTS, parametersOf, type ParamSpec } from './params.ts';
import { parseBuildingsQuery } from './validate.ts';
import { openResponses, publicPageResponses, publicResponses, publicSchemas, requestBody } from './openapi-public.ts';
import { geoJsonSchemas } from './openapi-geojson.ts';
import { featuresOpenApi } from './oapif.ts';
import { date, enumOf, ndate, nenum, nint, nnum, nstr, nullableRef, numb, object, ref, str, type Json } from './json-schema.ts';

export const API_VERSION = '1.0.0';

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: Json;
  servers: Json[];
  tags: { name: string; description?: string }[];
  security: Json[];
  paths: Record<string, Json>;
  components: {
    schemas: Record<string, Json>;
    responses: Record<string, Json>;
    headers: Record<string, Json>;
    securitySchemes: Record<string, Json>;
  };
}

/** A part of the document written beside the operations it describes (oapif.ts); merged in. */
export interface OpenApiPart {
  tags?: { name: string; description?: string }[];
  /** Path templates relative to the base URL, e.g. `/public/buildings/{building_id}`. */
  paths?: Record<string, Json>;
  schemas?: Record<string, Json>;
  responses?: Record<string, Json>;
}

export interface OpenApiOptions {
  /** The base URL, ending in /v1; the document's only server. */
  baseUrl: string;
}

// ---------------------------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------------------------

const BASIS_DOC =
  'measured: the building itself was measured; stated: a record states it for the building; estimated: modelled, not measured.';

function buildingSchema(): Json {
  return object('A building (spec 2.1). Field names are snake_case; a value with no record is null, meaning unknown, never zero.', {
    building_id: str('Identifier, stable across nightly snapshots.', { format: 'uuid' }),
    address: nstr('As a record states it.'),
    nearest_road: nstr('The road nearest to the building; set only when no address names the building.'),
    address_evidence: str(
      'address_record: an address record of the building; business_listing: a listing of a business at it; none: no address.',
      { examples: ['address_record'] },
    ),
    address_corroboration: nenum(
      ADDRESS_CORROBORATION,
      'corroborated: an independent record gives the same house number; single_source: one record only; conflicting: another record gives another number; null: shown without a house number.',
    ),
    postal_code: nstr('Postal code.'),
    locality: str('Locality (empty when no record names one).'),
    country: str('Two-letter country code of the snapshot.', { pattern: '^[A-Z]{2}$' }),
    latitude: numb('Representative point, inside the outline, WGS84 degrees; decides bbox membership.', { minimum: -90, maximum: 90 }),
    longitude: numb('Representative point, WGS84 degrees.', { minimum: -180, maximum: 180 }),
    category: enumOf(CATEGORY, 'Category (ancillary: annex or outbuilding).'),
    category_evidence: str('confirmed: a record states the category; inferred: derived from other facts.', { examples: ['confirmed'] }),
    building_type: str('Granular type, e.g. office, warehouse, school, apartments, garage, retail; unspecified when no record names one.', {
      pattern: '^[a-z0-9_]{1,64}$',
    }),
    roof_shape: nenum(ROOF_SHAPE, 'Roof shape.'),
    footprint_area_m2: numb('Ground footprint in m².', { minimum: 0 }),
    height: ref('Height'),
    volume_m3: nnum('Volume in m³.'),
    volume_basis: nenum(
      BASIS,
      `Basis of volume_m3 (a volume integrated under a measured roof is still estimated); null when volume_m3 is. ${BASIS_DOC}`,
    ),
    floor_area: ref('FloorArea'),
    floors: nint('Floors above ground.'),
    floors_including_underground: nint('Floors including those underground.'),
    construction_year: nint('Construction year.'),
    completed_by_year: nint('Latest year by which the building stood.'),
    dwellings: nint('Dwellings.'),
    existing_solar_panels: nullableRef(
      'ExistingSolarPanels',
      'What the roof photo shows, whatever a register states; null when never checked or the photo is too coarse.',
    ),
    solar_presence: enumOf(
      SOLAR_PRESENCE,
      'The settled solar answer. registered and detected: known to carry panels. registered_at_address: an installation registered at an address the building shares with others. none_seen: a roof photo shows none and no register entry exists. unclear: the photo is inconclusive. unknown: neither a register entry nor a usable photo.',
    ),
    registered_solar: nullableRef(
      'RegisteredSolar',
      "The installations an official register (a grid operator's list of connected installations, or the energy regulator's licence register) states at the address; null when none does.",
    ),
    solar_potential: nullableRef('SolarPotential', 'Rooftop solar estimate; null when there is none.'),
    registered_business_count: {
      type: 'integer',
      minimum: 0,
      description:
        'Businesses whose registered office is at the address, active or not. A registered business is never evidence that it owns or occupies the building.',
    },
    registered_business_employees: nullableRef(
      'Employees',
      'The largest stated size among the businesses registered at the address, active or not: the one whose size starts highest (a band counts where it starts: 10 to 19 as 10; on a tie the larger band end). It is the value sort=registered_business_employees ranks by; null when no business states a size.',
    ),
    registered_business_turnover: nullableRef(
      'Turnover',
      'The largest latest turnover among the businesses registered at the address, active or not, in registered_business_turnover_currency when the request gives one, otherwise in the currency most of these businesses state a turnover in (ties: alphabetical); on equal amounts the later financial year. It is the value sort=registered_business_turnover ranks by, so a page reads in the order of what it shows. No currency conversion: null when no business there states a turnover (in the currency asked for, when one is).',
    ),
    flood_zone: nenum(
      FLOOD_ZONE,
      'Most frequently flooded zone of an official flood hazard map the building lies in. Flood maps are served only where their licence allows, so null is not evidence of low flood risk.',
    ),
    flood_zone_mapped: { type: 'boolean', description: 'An official flood map served here covers the location.' },
    flood_zone_source: nstr('The flood map the zone comes from.'),
    seismic_design_acceleration_g: nnum('Seismic design acceleration, in g.'),
    seismic_risk_class: nenum(
      SEISMIC_RISK_CLASS,
      'RsI (highest risk) to RsIV, U1 (most urgent) to U3, consolidated (strengthened since); only buildings on an official list of technically assessed buildings have a class.',
    ),
    seismic_risk_assessment_year: nint('Year of the seismic assessment.'),
    app_url: str('The building in the web app.', { format: 'uri' }),
  });
}

function resourceSchemas(): Record<string, Json> {
  return {
    Building: buildingSchema(),
    Height: object('Height of the building; basis is null when metres is.', {
      metres: nnum('Height in metres.'),
      basis: nenum(BASIS, BASIS_DOC),
    }),
    FloorArea: object('Floor area; every field null when unknown.', {
      square_metres: nnum('Floor area in m².'),
      basis: nenum(BASIS, BASIS_DOC),
      scope: nenum(FLOOR_AREA_SCOPE, 'What the area covers: gross_above_ground.'),
    }),
    ExistingSolarPanels: object('Result of reading the roof photo alone.', {
      status: enumOf(PANELS_STATUS, 'detected, none_seen or unclear.'),
      photo_date: date('Date of the photo.'),
      confidence: numb('Confidence of the result, 0 to 1.', { minimum: 0, maximum: 1 }),
      analysed_on: ndate('Date the photo was analysed.'),
      photo_resolution_cm: nnum('Ground resolution of the photo, in cm.'),
    }),
    RegisteredSolar: object('Installations registered at the address.', {
      installed_power_kw: nnum("Sum of the installations' power in kW, given only when every installation states its power; else null."),
      installations: { type: 'array', minItems: 1, items: ref('SolarInstallation'), description: 'Each registered installation.' },
    }),
    SolarInstallation: object('One installation as a register states it.', {
      power_kw: nnum('Installed power in kW, if the register states it.'),
      storage: { type: ['boolean', 'null'], description: 'true: the register states storage; false: states none; null: says nothing.' },
      register: enumOf(
        SOLAR_REGISTER,
        "grid_operator: a grid operator's list of connected installations; energy_regulator: the energy regulator's licence register.",
      ),
      commissioned_on: ndate('Date the installation was connected.'),
    }),
    SolarPotential: object('Rooftop solar estimate.', {
      panel_count: nint('Panels that fit on the roof.'),
      capacity_kwp: nnum('Capacity in kWp.'),
      yearly_energy_kwh: nnum('Yearly energy in kWh.'),
      co2_savings_kg_per_year: nnum('CO2 avoided, kg a year.'),
      basis: enumOf(
        SOLAR_BASIS,
        `${BASIS_DOC} measured_cut_to_outline: measured on a roof that took in the roofs attached to the building and was cut to the building's outline.`,
      ),
    }),
    Employees: object('A stated size: an exact number (min = max), a band (min to max) or an open-ended top band (max null).', {
      min: { type: 'integer', minimum: 0, description: 'Start of the band, or the exact number.' },
      max: nint('End of the band (inclusive), or the exact number; null for an open-ended top band.'),
    }),
    Turnover: object('A latest turnover.', {
      amount: numb('In whole units of currency.'),
      currency: nstr('ISO 4217 code.', { pattern: '^[A-Z]{3}$' }),
      financial_year: nint('Financial year of the statement.'),
    }),
    Unit: object('A unit of a building (a flat, shop, office...).', {
      unit_id: str('Stable identifier of the unit.'),
      label: nstr('Unit number or name as recorded, e.g. Ap. 12.'),
      floor: nint('Floor the unit is on (0 = ground, negative = underground).'),
      use: nenum(UNIT_USE, 'What the unit is used for.'),
      area_m2: nnum('Usable area in m².'),
      rooms: nint('Number of rooms.'),
    }),
    RegisteredBusiness: object(
      "A business whose registered office is at the building's address; never evidence that it owns or occupies the building.",
      {
        business_id: str('Stable identifier of the business.'),
        registration_number: nstr('Number in the business register.'),
        name: str('Registered name.'),
        active: { type: 'boolean', description: 'Still active.' },
        employees: nullableRef('Employees', 'Stated size; null when the business states none.'),
        turnover: nullableRef('Turnover', 'Latest turnover; null when the business states none.'),
      },
    ),
  };
}

// ---------------------------------------------------------------------------------------------
// Envelopes and errors
// ---------------------------------------------------------------------------------------------

const NEXT_DOC =
  'The URL of the next page: this request with every parameter kept and offset moved on (near the ' +
  `${MAX_WINDOW.toLocaleString('en-US')} window, limit shortened so the page ends at it); null on the last page.`;

/** A Building, or the fields of one that fields= keeps. */
const buildingOrSelection: Json = { anyOf: [ref('Building'), ref('BuildingSelection')] };

/** The GeoJSON answer of the operations that write buildings in GeoJSON too. */
const GEOJSON_PAGES: Partial<Record<string, string>> = {
  listBuildings: 'BuildingsFeatureCollection',
  listBuildingsAtPoint: 'PointFeatureCollection',
};

function envelopeSchemas(): Record<string, Json> {
  const links = object('Links.', { next: nstr(NEXT_DOC, { format: 'uri' }) });
  const childMeta = object('Paging of the list.', {
    total: { type: 'integer', minimum: 0, description: 'Items in the whole list.' },
    limit: { type: 'integer', minimum: 1, description: 'Page size asked for.' },
    offset: { type: 'integer', minimum: 0, description: 'Items skipped.' },
  });
  return {
    BuildingsPage: object('A ranked page.', {
      data: { type: 'array', items: buildingOrSelection },
      meta: object('Counting and paging.', {
        total: {
          type: 'integer',
          minimum: 0,
          maximum: MAX_WINDOW,
          description: `Every match, counted up to ${MAX_WINDOW.toLocaleString('en-US')}.`,
        },
        total_is_capped: { type: 'boolean', description: `true when counting stopped at ${MAX_WINDOW.toLocaleString('en-US')}.` },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Page size asked for.' },
        offset: { type: 'integer', minimum: 0, maximum: MAX_WINDOW, description: 'Buildings skipped.' },
        sort: enumOf(SORT_KEYS, 'The ranking.'),
      }),
      links,
    }),
    PointPage: object('Buildings at a point, nearest first.', { data: { type: 'array', maxItems: 25, items: buildingOrSelection } }),
    UnitsPage: object("A page of a building's units.", { data: { type: 'array', items: ref('Unit') }, meta: childMeta, links }),
    RegisteredBusinessesPage: object("A page of the businesses registered at a building's address.", {
      data: { type: 'array', items: ref('RegisteredBusiness') },
      meta: childMeta,
      links,
    }),
    OpenApiDocument: { type: 'object', description: 'An OpenAPI 3.1 document (3.0 with version=3.0).' },
    Error: object('Every non-2xx response of an authenticated endpoint.', {
      error: object('What went wrong.', {
        code: enumOf(ERROR_CODES, 'Stable and machine-readable.'),
        message: str('For people.'),
        parameter: str('The query or path parameter at fault for invalid_parameter; the empty string for other codes.'),
      }),
    }),
  };
}

/** A real refusal of the validator, as the example of 400. */
function invalidParameterExample(): Json {
  try {
    parseBuildingsQuery('bbox=23.1,44.2,27.3,45.0');
  } catch (err) {
    if (err instanceof ApiError) return err.toBody() as unknown as Json;
  }
  throw new Error('openapi: the 400 example no longer fails validation');
}

const example = (code: ErrorCode, message: string): Json => ({ error: { code, message, parameter: '' } });

const RATE_HEADERS = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'X-Daily-Quota-Limit',
  'X-Daily-Quota-Remaining',
  'X-Credits-Charged',
  'X-Credits-Remaining',
] as const;

function headerComponents(): Record<string, Json> {
  // Required: every authenticated answer that names a workspace carries them (spec 8).
  const int = (description: string): Json => ({ description, required: true, schema: { type: 'integer', minimum: 0 } });
  return {
    'RateLimit-Limit': int('Requests the key may make in any 60 seconds (60): a sliding window, not a bucket that refills.'),
    'RateLimit-Remaining': int('Requests the key may make now: the limit less its requests of the last 60 seconds.'),
    'RateLimit-Reset': int(
      'Seconds until the last of the requests the key made in the past 60 seconds leaves the window, when RateLimit-Remaining ' +
        'is back to the whole limit (0 when none counts). Requests leave one by one before that; after a 429, Retry-After ' +
        'says when the next one is allowed.',
    ),
    'RateLimit-Policy': {
      description: 'The per-key limit (w=60) and the daily quota (w=86400) as the IETF RateLimit header fields draft writes policies.',
      required: true,
      schema: { type: 'string' },
    },
    RateLimit: {
      description:
        'The current state of the per-key limit (r: RateLimit-Remaining, t: RateLimit-Reset) and of the daily quota (r: requests left ' +
        'today, t: seconds until 00:00 UTC), as the IETF RateLimit header fields draft writes it.',
      required: true,
      schema: { type: 'string' },
    },
    'X-Daily-Quota-Limit': int('Requests the workspace may make per UTC day, all keys together (5,000).'),
    'X-Daily-Quota-Remaining': int('Requests left to the workspace today; resets at 00:00 UTC.'),
    'X-Credits-Charged': int('Credits the request cost (a building opened by the workspace in the last 365 days is free).'),
    'X-Credits-Remaining': int('Credits the workspace has left.'),
    'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
  };
}

function headerRefs(names: readonly string[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const name of names) out[name] = { $ref: `#/components/headers/${name}` };
  return out;
}

function errorResponse(description: string, examples: Record<string, Json>, headers: Record<string, Json>): Json {
  const ex: Record<string, Json> = {};
  for (const [name, value] of Object.entries(examples)) ex[name] = { value };
  return {
    description,
    headers,
    content: {
      'application/json': { schema: ref('Error'), examples: ex },
      'application/msgpack': { schema: ref('Error') },
    },
  };
}

function responseComponents(): Record<string, Json> {
  const rate = headerRefs(RATE_HEADERS);
  const retry = headerRefs(['Retry-After']);
  const retryRequired = { 'Retry-After': { ...headerComponents()['Retry-After'], required: true } };
  return {
    InvalidParameter: errorResponse(
      'invalid_parameter: a bad, missing or unknown query or path parameter (also a building_id that names no building); parameter names it.',
      { invalid_parameter: invalidParameterExample() },
      rate,
    ),
    Unauthorized: errorResponse(
      'unauthorized: the Authorization: Bearer <API_KEY> header is missing, or the key is malformed, unknown, revoked, expired, or its creator has left the workspace.',
      { unauthorized: example('unauthorized', 'The API key is missing or invalid; send Authorization: Bearer <API_KEY>.') },
      {},
    ),
    InsufficientCredits: errorResponse(
      'insufficient_credits: the workspace has too few credits left for the page; nothing is returned and nothing charged (a page is charged all or nothing).',
      { insufficient_credits: example('insufficient_credits', 'This page costs 25 credits; the workspace has 3 left.') },
      rate,
    ),
    Forbidden: errorResponse(
      'forbidden: the workspace is suspended, or the key is not allowed for this endpoint.',
      { forbidden: example('forbidden', 'The workspace is suspended.') },
      rate,
    ),
    TooManyRequests: errorResponse(
      'rate_limited: the key made more than 60 requests in a minute; quota_exceeded: the workspace made 5,000 requests this UTC day. Retry-After says when to retry.',
      {
        rate_limited: example('rate_limited', 'More than 60 requests a minute with this key; retry in 12 s.'),
        quota_exceeded: example('quota_exceeded', 'The workspace used its 5,000 requests of today; the quota resets at 00:00 UTC.'),
      },
      { ...rate, ...retryRequired },
    ),
    Unavailable: errorResponse(
      'unavailable: the data of the area is still loading, or an upstream service is unreachable; Retry-After says when to retry.',
      { unavailable: example('unavailable', 'The snapshot of this area is loading; retry in 5 s.') },
      retry,
    ),
  };
}

// ---------------------------------------------------------------------------------------------
// Parameters and operations
// ---------------------------------------------------------------------------------------------

function valueSchema(p: ParamSpec): Json {
  switch (p.type) {
    case 'integer':
    case 'number': {
      const s: Json = { type: p.type };
      if (p.min !== undefined) s[p.exclusiveMin ? 'exclusiveMinimum' : 'minimum'] = p.min;
      if (p.max !== undefined) s.maximum = p.max;
      return s;
    }
    case 'boolean':
      return { type: 'boolean' };
    case 'enum':
      return { type: 'string', enum: [...p.values!] };
    case 'string': {
      const s: Json = { type: 'string' };
      if (p.format === 'uuid') s.format = 'uuid';
      if (p.pattern !== undefined) s.pattern = p.pattern;
      if (p.minLength !== undefined) s.minLength = p.minLength;
      if (p.maxLength !== undefined) s.maxLength = p.maxLength;
      return s;
    }
  }
}

/** One OpenAPI Parameter Object from one row of the table. */
export function parameterObject(p: ParamSpec, operation: Operation): Json {
  const out: Json = { name: p.name, in: p.in, required: p.required || p.in === 'path', description: describeParameter(p, operation.id) };
  if (p.format === 'bbox') {
    const lon = { type: 'number', minimum: -180, maximum: 180 };
    const lat = { type: 'number', minimum: -90, maximum: 90 };
    out.schema = {
      type: 'array',
      minItems: 4,
      maxItems: 4,
      items: { type: 'number' },
      prefixItems: BBOX_PARTS.map((part) => ({ ...(part.endsWith('Lon') ? lon : lat), title: part })),
    };
    out.style = 'form';
    out.explode = false;
    out.example = [9.47, 47.04, 9.64, 47.27];
  } else if (p.list) {
    out.schema = { type: 'array', minItems: 1, items: valueSchema(p) };
    out.style = 'form';
    out.explode = true;
  } else {
    out.schema = valueSchema(p);
    if (p.default !== undefined) (out.schema as Json).default = p.default;
  }
  return out;
}

function operationObject(op: Operation): Json {
  const out: Json = {
    operationId: op.id,
    tags: [op.tag],
    summary: op.summary,
    description: op.description,
  };
  const params = parametersOf(op.id);
  if (params.length > 0) out.parameters = params.map((p) => parameterObject(p, op));
  if (op.method === 'post') out.requestBody = requestBody(op);
  if (op.access !== 'key') out.security = [];
  if (op.access === 'meta') {
    out.responses = {
      200: { description: op.summary, content: { 'application/json': { schema: ref(op.response) } } },
      ...(params.length > 0 && {
        400: {
          description: 'invalid_parameter: a parameter it does not take, or a bad value.',
          content: { 'application/json': { schema: ref('Error') } },
        },
      }),
    };
    return out;
  }
  if (op.access === 'public') {
    out.responses = publicPageResponses(op);
    return out;
  }
  if (op.access === 'open') {
    out.responses = openResponses(op);
    return out;
  }
  out.responses = {
    200: {
      description: 'Success. Every authenticated response carries the limit and credit headers.',
      headers: headerRefs(RATE_HEADERS),
      content:
        op.id === 'exportBuildings'
          ? exportContent()
          : {
              'application/json': { schema: ref(op.response) },
              'application/msgpack': { schema: ref(op.response) },
              ...(GEOJSON_PAGES[op.id] ? { 'application/geo+json': { schema: ref(GEOJSON_PAGES[op.id]!) } } : {}),
            },
    },
    400: { $ref: '#/components/responses/InvalidParameter' },
    401: { $ref: '#/components/responses/Unauthorized' },
    402: { $ref: '#/components/responses/InsufficientCredits' },
    403: { $ref: '#/components/responses/Forbidden' },
    429: { $ref: '#/components/responses/TooManyRequests' },
    503: { $ref: '#/components/responses/Unavailable' },
  };
  return out;
}

/** The export's three streamed formats: text whose records are described in words (OpenAPI has no schema for a stream of them). */
function exportContent(): Record<string, unknown> {
  return {
    'application/x-ndjson': {
      schema: {
        type: 'string',
        description: 'One Building object (as in data[] of GET /buildings, cut by fields=) a line, each line ended by LF.',
      },
    },
    'text/csv': {
      schema: {
        type: 'string',
        description:
          'RFC 4180: a header row of the field names, then a row a building; nested objects as JSON text, null as an empty cell; CRLF line ends.',
      },
    },
    'application/geo+json-seq': {
      schema: {
        type: 'string',
        description: 'RFC 8142: each record an RS character (0x1E), a GeoJSON Feature (as in GET /buildings?f=geojson) and LF.',
      },
    },
  };
}

const TAG_DOCS: Record<Tag, string> = {
  Buildings: "Buildings in an area or at a point, and a building's units.",
  'Registered businesses':
    "Businesses whose registered office is at a building's address. A registered business at an address is never evidence that it owns or occupies the building.",
  'Public building pages':
    'The facts behind public building and place pages: no key, the same answer to everyone, cacheable; 120 requests a minute per client address; errors in the flat format {error: code}.',
  Countries: 'Covered countries, and asking for a new one (no key).',
  'Removal requests': 'Asking for a registered business to be removed (no key).',
  'Building reports': "Buying one building's report without an account and reading it with a token (no key).",
  Meta: 'The machine-readable description of the API; needs no key.',
};

const DESCRIPTION = [
  'Read access to a catalogue of buildings, country by country. An area outside the covered countries answers with an empty result, not an error.',
  '',
  'Conventions: field names are snake_case; lengths in metres, areas in m², volumes in m³; dates YYYY-MM-DD, timestamps ISO 8601 UTC; a value with no record is null, meaning unknown, never zero; an address is given only as a record states it.',
  '',
  'Authentication: the Buildings and Registered businesses endpoints need a workspace API key, sent as `Authorization: Bearer <API_KEY>`. This description, the endpoints under /public and the country-request, removal-request and building-report operations need none.',
  '',
  'Encoding: send `Accept: application/msgpack` for the same documents in MessagePack; JSON otherwise.',
  '',
  'Limits: 60 requests a minute per key, 5,000 a UTC day per workspace. Credits: every building an answer returns costs 1 credit, unless the workspace opened it in the last 365 days; a page is charged all or nothing.',
  '',
  'Parameter values: integers are plain decimal digits; numbers use JSON number syntax (`12`, `-3.5`, `2.5e3`); booleans are `true` or `false`; list parameters repeat or take commas. Unknown parameters, empty values and a non-list parameter given twice are refused with 400 invalid_parameter.',
].join('\n');

// ---------------------------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------------------------

/** The API's terms; data drawn from OpenStreetMap stays under its own licence, named by each snapshot's sources. */
const LICENSE: Json = { name: 'Edifice API terms of use', url: 'https://edifice.example/terms' };

/** The answer of an operation to a request it refuses, where it declares no 4xx of its own (405 for another method). */
function clientErrorResponse(): Json {
  return {
    description:
      'A request refused: method_not_allowed (405, with Allow) for a method the path does not take, not_found (404) for no such resource.',
    content: {
      'application/json': {
        schema: ref('Error'),
        examples: { method_not_allowed: { value: example('method_not_allowed', 'DELETE is not allowed here; use GET, HEAD.') } },
      },
    },
  };
}

/** Every operation declares some 4xx answer: those without one get 4XX, ClientError. */
function addClientErrors(paths: Record<string, Json>): void {
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item) as Json[]) {
      const responses = op.responses as Record<string, Json>;
      if (!Object.keys(responses).some((code) => code.startsWith('4'))) responses['4XX'] = { $ref: '#/components/responses/ClientError' };
    }
  }
}

function mergeInto(target: Record<string, unknown>, extra: Record<string, unknown> | undefined, what: string): void {
  if (!extra) return;
  for (const [k, v] of Object.entries(extra)) {
    if (k in target) throw new Error(`openapi: a merged part redefines ${what} ${k}.`);
    target[k] = v;
  }
}

export function buildOpenApi(options: OpenApiOptions): OpenApiDocument {
  const paths: Record<string, Json> = {};
  const tags: { name: string; description?: string }[] = [];
  for (const op of Object.values(OPERATIONS)) {
    paths[op.path] = { ...(paths[op.path] ?? {}), [op.method]: operationObject(op) };
    if (!tags.some((t) => t.name === op.tag)) tags.push({ name: op.tag, description: TAG_DOCS[op.tag] });
  }
  const doc: OpenApiDocument = {
    openapi: '3.1.0',
    info: {
      title: 'Edifice building catalogue API',
      version: API_VERSION,
      description: DESCRIPTION,
      license: LICENSE,
    },
    servers: [{ url: options.baseUrl.replace(/\/$/, '') }],
    tags,
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas: { ...resourceSchemas(), ...envelopeSchemas(), ...publicSchemas(), ...geoJsonSchemas() },
      responses: { ...responseComponents(), ...publicResponses(), ClientError: clientErrorResponse() },
      headers: headerComponents(),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'API key',
          description: 'Authorization: Bearer <API_KEY>. Keys are created in the web app under Settings, API keys.',
        },
      },
    },
  };
  const part = featuresOpenApi();
  for (const t of part.tags ?? []) if (!doc.tags.some((x) => x.name === t.name)) doc.tags.push(t);
  mergeInto(doc.paths, part.paths, 'path');
  mergeInto(doc.components.schemas, part.schemas, 'schema');
  mergeInto(doc.components.responses, part.responses, 'response');
  addClientErrors(doc.paths);
  return doc;
}
