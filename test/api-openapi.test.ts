/**
 * The OpenAPI document: valid OpenAPI 3.1, every operation, every parameter of the table with
 * its range, enum, default and list style, the responses and headers of spec 7 and 8, and the
 * OGC API – Features part merged in.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/api/errors.ts';
import { internalErrorReply } from '../src/http/reply.ts';
import { unpack } from 'msgpackr';
import { OPERATIONS } from '../src/api/operations.ts';
import { buildOpenApi } from '../src/api/openapi.ts';
import { PARAMETERS, parametersOf } from '../src/api/params.ts';
import { BODY_FIELDS, bodyFieldsOf } from '../src/api/bodies.ts';

type J = Record<string, any>;

const BASE = 'https://api.edifice.example/v1';
const doc = buildOpenApi({ baseUrl: BASE }) as unknown as J;

const PATHS = [
  '/buildings',
  '/buildings/at',
  '/buildings/{building_id}/units',
  '/buildings/{building_id}/registered-businesses',
  '/buildings/export',
  '/openapi.json',
];
const AUTHENTICATED = PATHS.slice(0, 4);
/** The operations without a key: method and path, typed again from the spec. */
const PUBLIC_GETS = [
  '/public/buildings/{building_id}',
  '/public/places/{country}/{locality}',
  '/public/countries/{country}/places',
  '/public/countries',
];
/** OGC API – Features: the documents need no key, the items do. */
const FEATURE_DOCS = ['/', '/conformance', '/collections', '/collections/{collectionId}'];
const FEATURE_ITEMS = ['/collections/{collectionId}/items', '/collections/{collectionId}/items/{featureId}'];
const OPEN = [
  ['post', '/public/country-requests'],
  ['post', '/removal-requests'],
  ['post', '/reports'],
  ['get', '/reports/{order_id}'],
  ['post', '/reports/payment-webhook'],
] as const;

function operationAt(path: string, method = 'get'): J {
  return doc.paths[path][method];
}

function parameter(path: string, name: string): J {
  const p = (operationAt(path).parameters as J[]).find((x) => x.name === name);
  if (!p) throw new Error(`${name} is missing from GET ${path}`);
  return p;
}

describe('the document', () => {
  it('validates as OpenAPI 3.1 with swagger-parser', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as any)).resolves.toBeTruthy();
  });

  it('is OpenAPI 3.1.0, version 1.0.0, served from the base URL, bearer security', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers).toEqual([{ url: BASE }]);
    expect(buildOpenApi({ baseUrl: `${BASE}/` }).servers).toEqual([{ url: BASE }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it('has a licence, and a 4xx answer on every operation', () => {
    expect(doc.info.license).toMatchObject({ name: expect.any(String), url: expect.stringMatching(/^https:\/\//) });
    for (const [path, item] of Object.entries<J>(doc.paths)) {
      for (const [method, op] of Object.entries<J>(item)) {
        expect(
          Object.keys(op.responses).some((code) => code.startsWith('4')),
          `${method} ${path}`,
        ).toBe(true);
      }
    }
    expect(operationAt('/conformance').responses['4XX']).toEqual({ $ref: '#/components/responses/ClientError' });
    expect(operationAt('/openapi.json').responses['400'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Error',
    });
    expect(doc.components.responses.ClientError.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
  });

  it('has every path with its one method', () => {
    const all = [...PATHS, ...PUBLIC_GETS, ...OPEN.map(([, path]) => path)];
    expect(Object.keys(doc.paths).sort()).toEqual([...all, ...FEATURE_DOCS, ...FEATURE_ITEMS].sort());
    for (const path of [...PATHS, ...PUBLIC_GETS, ...FEATURE_DOCS, ...FEATURE_ITEMS]) expect(Object.keys(doc.paths[path])).toEqual(['get']);
    for (const [method, path] of OPEN) expect(Object.keys(doc.paths[path])).toEqual([method]);
    expect(
      Object.values(OPERATIONS)
        .map((o) => o.path)
        .sort(),
    ).toEqual([...all].sort());
  });

  it('the key endpoints need a key; the description, /public and the country, removal and report operations need none', () => {
    expect(operationAt('/openapi.json').security).toEqual([]);
    for (const path of [...AUTHENTICATED, '/buildings/export']) expect(operationAt(path).security).toBeUndefined();
    for (const path of PUBLIC_GETS) expect(operationAt(path).security).toEqual([]);
    for (const [method, path] of OPEN) expect(operationAt(path, method).security).toEqual([]);
    for (const path of FEATURE_DOCS) expect(operationAt(path).security).toEqual([]);
    for (const path of FEATURE_ITEMS) expect(operationAt(path).security).toBeUndefined();
  });

  it("OGC API – Features items: bbox optional, datetime, limit 1 to 100 (default 10), offset, and GET /buildings' filters from the table", () => {
    const items = operationAt('/collections/{collectionId}/items');
    const names = (items.parameters as J[]).map((p) => p.name);
    const filters = parametersOf('listBuildings')
      .map((p) => p.name)
      .filter((n) => !['bbox', 'limit', 'offset', 'f'].includes(n));
    expect(names).toEqual(['collectionId', 'bbox', 'datetime', 'limit', 'offset', ...filters]);
    const byName = Object.fromEntries((items.parameters as J[]).map((p) => [p.name, p]));
    expect(byName.bbox.required).toBe(false);
    expect(byName.limit.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 10 });
    expect(Object.keys(items.responses).sort()).toEqual(['200', '400', '401', '402', '403', '404', '429', '503']);
    expect(items.responses['200'].content['application/geo+json'].schema).toEqual({ $ref: '#/components/schemas/OgcFeatureCollection' });
  });

  it("tags: Buildings, Registered businesses, Meta and the spec's groups without a key", () => {
    expect(doc.tags.map((t: J) => t.name)).toEqual([
      'Buildings',
      'Registered businesses',
      'Meta',
      'Public building pages',
      'Countries',
      'Removal requests',
      'Building reports',
      'Features (OGC API)',
    ]);
    expect(operationAt('/public/countries').tags).toEqual(['Countries']);
    expect(operationAt('/public/country-requests', 'post').tags).toEqual(['Countries']);
    expect(operationAt('/removal-requests', 'post').tags).toEqual(['Removal requests']);
    expect(operationAt('/reports/{order_id}').tags).toEqual(['Building reports']);
    expect(operationAt('/buildings/{building_id}/registered-businesses').tags).toEqual(['Registered businesses']);
    expect(operationAt('/openapi.json').tags).toEqual(['Meta']);
  });
});

describe('parameters come from the table', () => {
  for (const op of Object.values(OPERATIONS)) {
    it(`${op.id}: exactly the table's parameters, in its order`, () => {
      const names = ((operationAt(op.path, op.method).parameters ?? []) as J[]).map((p) => p.name);
      expect(names).toEqual(parametersOf(op.id).map((p) => p.name));
    });
  }

  for (const p of PARAMETERS) {
    for (const opId of p.operations) {
      it(`${opId} ${p.name}`, () => {
        const op = OPERATIONS[opId];
        const o = parameter(op.path, p.name);
        expect(o.in).toBe(p.in);
        expect(o.required).toBe(p.required);
        expect(typeof o.description).toBe('string');
        expect(o.description.startsWith(p.doc)).toBe(true);
        const value = p.list ? o.schema.items : o.schema;
        if (p.list) {
          expect(o.schema.type).toBe('array');
          expect([o.style, o.explode]).toEqual(['form', true]);
          expect(o.description).toContain('separate values with commas');
        }
        if (p.format === 'bbox') {
          expect([o.style, o.explode]).toEqual(['form', false]);
          expect(o.schema.prefixItems.map((s: J) => [s.minimum, s.maximum])).toEqual([
            [-180, 180],
            [-90, 90],
            [-180, 180],
            [-90, 90],
          ]);
          return;
        }
        if (p.type === 'integer' || p.type === 'number') {
          expect(value.type).toBe(p.type);
          expect(value.maximum).toBe(p.max);
          if (p.exclusiveMin) expect([value.exclusiveMinimum, value.minimum]).toEqual([p.min, undefined]);
          else expect(value.minimum).toBe(p.min);
        }
        if (p.type === 'enum') expect(value.enum).toEqual([...p.values!]);
        if (p.type === 'boolean') expect(value.type).toBe('boolean');
        if (p.pattern) expect(value.pattern).toBe(p.pattern);
        if (p.minLength !== undefined) expect([value.minLength, value.maxLength]).toEqual([p.minLength, p.maxLength]);
        expect(o.schema.default).toBe(p.default);
      });
    }
  }

  it("the spec's ranges, read from the document", () => {
    const range = (path: string, name: string) => {
      const s = parameter(path, name).schema;
      return [s.minimum ?? s.exclusiveMinimum, s.maximum, s.default];
    };
    expect(range('/buildings', 'limit')).toEqual([1, 100, 25]);
    expect(range('/buildings', 'offset')).toEqual([0, 10_000, 0]);
    expect(range('/buildings', 'min_floors')).toEqual([0, 500, undefined]);
    expect(range('/buildings', 'max_entrances')).toEqual([1, 1_000_000, undefined]);
    expect(range('/buildings', 'max_volume_m3')).toEqual([0, 1e9, undefined]);
    expect(parameter('/buildings', 'min_registered_solar_kw').schema).toEqual({ type: 'number', exclusiveMinimum: 0, maximum: 1e9 });
    expect(range('/buildings', 'registered_business_financial_year')).toEqual([1990, 2100, undefined]);
    expect(range('/buildings', 'max_recent_minimum_daily_temperature_c')).toEqual([-100, 100, undefined]);
    expect(range('/buildings', 'min_recent_max_one_day_precipitation_mm')).toEqual([0, 5000, undefined]);
    expect(range('/buildings/at', 'radius_m')).toEqual([1, 200, 25]);
    expect(range('/buildings/at', 'limit')).toEqual([1, 25, 10]);
    expect(range('/buildings/at', 'lat')).toEqual([-90, 90, undefined]);
    expect(range('/buildings/at', 'lon')).toEqual([-180, 180, undefined]);
    expect(range('/buildings/{building_id}/units', 'limit')).toEqual([1, 100, 25]);
    expect(range('/buildings/{building_id}/registered-businesses', 'offset')).toEqual([0, 10_000, 0]);
    expect(parameter('/buildings', 'sort').schema).toEqual({
      type: 'string',
      enum: ['volume', 'area', 'height', 'registered_business_turnover', 'registered_business_employees'],
      default: 'volume',
    });
    expect(parameter('/buildings', 'has_3d_model').schema).toEqual({ type: 'boolean', default: false });
    expect(parameter('/buildings', 'registered_solar').schema).toEqual({ type: 'boolean' });
    expect(parameter('/buildings', 'building_type').schema.items.pattern).toBe('^[a-z0-9_]{1,64}$');
    expect(parameter('/buildings', 'registered_business_turnover_currency').schema.pattern).toBe('^[A-Z]{3}$');
    expect(parameter('/buildings', 'registered_business_name').schema).toEqual({ type: 'string', minLength: 2, maxLength: 120 });
    expect(parameter('/buildings/{building_id}/units', 'building_id')).toMatchObject({
      in: 'path',
      required: true,
      schema: { type: 'string', format: 'uuid' },
    });
  });

  it('the rules between parameters are in the descriptions', () => {
    expect(parameter('/buildings', 'registered_business_turnover_currency').description).toContain(
      'Required with min_registered_business_turnover, max_registered_business_turnover or sort=registered_business_turnover.',
    );
    expect(parameter('/buildings', 'registered_solar_storage').description).toContain('Not accepted with registered_solar=false.');
    expect(parameter('/buildings', 'min_registered_solar_kw').description).toContain('Not accepted with registered_solar=false.');
    expect(parameter('/buildings', 'exclude_solar_presence').description).toContain('must not also be given in solar_presence');
    expect(parameter('/buildings', 'min_floors').description).toContain('Must not exceed max_floors.');
    expect(parameter('/buildings', 'offset').description).toContain('offset + limit must be at most 10,000');
  });
});

describe('responses', () => {
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
  ];
  const responseSchemas: Record<string, string> = {
    '/buildings': 'BuildingsPage',
    '/buildings/at': 'PointPage',
    '/buildings/{building_id}/units': 'UnitsPage',
    '/buildings/{building_id}/registered-businesses': 'RegisteredBusinessesPage',
  };

  for (const path of AUTHENTICATED) {
    it(`GET ${path}: 200 in JSON and MessagePack (and GeoJSON for buildings) with the spec 8 headers; 400, 401, 402, 403, 429, 503`, () => {
      const r = operationAt(path).responses;
      expect(Object.keys(r).sort()).toEqual(['200', '400', '401', '402', '403', '429', '503']);
      const ok = r['200'];
      const geojson = { '/buildings': 'BuildingsFeatureCollection', '/buildings/at': 'PointFeatureCollection' }[path];
      expect(Object.keys(ok.content)).toEqual(['application/json', 'application/msgpack', ...(geojson ? ['application/geo+json'] : [])]);
      if (geojson) expect(ok.content['application/geo+json'].schema).toEqual({ $ref: `#/components/schemas/${geojson}` });
      expect(ok.content['application/json'].schema).toEqual({ $ref: `#/components/schemas/${responseSchemas[path]}` });
      expect(Object.keys(ok.headers)).toEqual(RATE_HEADERS);
    });
  }

  it('error responses use the Error schema; 429 requires Retry-After', () => {
    const r = doc.components.responses;
    for (const name of ['InvalidParameter', 'Unauthorized', 'InsufficientCredits', 'Forbidden', 'TooManyRequests', 'Unavailable']) {
      expect(r[name].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    expect(r.TooManyRequests.headers['Retry-After']).toMatchObject({ required: true, schema: { type: 'integer' } });
    expect(Object.keys(r.TooManyRequests.content['application/json'].examples).sort()).toEqual(['quota_exceeded', 'rate_limited']);
    expect(r.Unavailable.headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
    expect(r.InvalidParameter.content['application/json'].examples.invalid_parameter.value).toEqual({
      error: {
        code: 'invalid_parameter',
        message: 'bbox: each side may span at most 3 degrees; this one spans 4.2 degrees of longitude',
        parameter: 'bbox',
      },
    });
  });

  it('the Error schema is {error: {code, message, parameter}} with every code', () => {
    const e = doc.components.schemas.Error;
    expect(e.required).toEqual(['error']);
    expect(e.properties.error.required).toEqual(['code', 'message', 'parameter']);
    expect(e.properties.error.properties.code.enum).toEqual([...ERROR_CODES]);
    expect([...ERROR_CODES].sort()).toEqual([
      'forbidden',
      'insufficient_credits',
      'internal',
      'invalid_parameter',
      'method_not_allowed',
      'not_found',
      'payload_too_large',
      'quota_exceeded',
      'rate_limited',
      'unauthorized',
      'unavailable',
      'unsupported_media_type',
    ]);
  });

  it('an unexpected failure is 500 internal, in the Error schema (or the flat one of /public), never cached', () => {
    const json = internalErrorReply('json', { 'X-Credits-Charged': '0' });
    expect([json.status, json.headers['Cache-Control'], json.headers['X-Credits-Charged']]).toEqual([500, 'no-store', '0']);
    expect(JSON.parse(String(json.body))).toEqual({
      error: { code: 'internal', message: 'Unexpected error; it has been logged.', parameter: '' },
    });
    const msgpack = internalErrorReply('msgpack');
    expect(unpack(msgpack.body as Buffer)).toEqual({
      error: { code: 'internal', message: 'Unexpected error; it has been logged.', parameter: '' },
    });
    const flat = internalErrorReply('public');
    expect([flat.status, flat.headers['Cache-Control'], JSON.parse(String(flat.body))]).toEqual([500, 'no-store', { error: 'internal' }]);
  });

  it('every header of spec 8 is a component', () => {
    expect(Object.keys(doc.components.headers).sort()).toEqual([...RATE_HEADERS, 'Retry-After'].sort());
  });

  it('schemas of every resource and envelope', () => {
    expect(Object.keys(doc.components.schemas).sort()).toEqual([
      'Building',
      'BuildingFeature',
      'BuildingSelection',
      'BuildingsFeatureCollection',
      'BuildingsPage',
      'CountryList',
      'CountryRequestReceipt',
      'Employees',
      'Error',
      'ExistingSolarPanels',
      'FloorArea',
      'Height',
      'MultiPolygonGeometry',
      'OgcCollection',
      'OgcCollections',
      'OgcConformance',
      'OgcFeature',
      'OgcFeatureCollection',
      'OgcLandingPage',
      'OgcLink',
      'OpenApiDocument',
      'PointFeatureCollection',
      'PointGeometry',
      'PointPage',
      'PublicBuilding',
      'PublicBusiness',
      'PublicError',
      'PublicFact',
      'PublicPlace',
      'PublicPlaceList',
      'RegisteredBusiness',
      'RegisteredBusinessesPage',
      'RegisteredSolar',
      'RemovalRequestReceipt',
      'Report',
      'ReportDocument',
      'ReportOrder',
      'ReportOrderCreated',
      'SolarInstallation',
      'SolarPotential',
      'Turnover',
      'Unit',
      'UnitsPage',
    ]);
    expect(doc.components.schemas.BuildingsPage.properties.meta.required).toEqual(['total', 'total_is_capped', 'limit', 'offset', 'sort']);
  });
});

describe('operations without a key', () => {
  for (const path of PUBLIC_GETS) {
    it(`GET ${path}: cacheable 200 with ETag and Cache-Control, 304, and the flat public errors`, () => {
      const r = operationAt(path).responses;
      expect(Object.keys(r).sort()).toEqual(['200', '304', '400', '404', '429', '503']);
      expect(r['200'].headers.ETag.required).toBe(true);
      expect(r['200'].headers['Cache-Control'].required).toBe(true);
      for (const status of ['400', '404', '429', '503']) {
        const resolved = doc.components.responses[r[status].$ref.split('/').pop()];
        expect(resolved.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PublicError' });
      }
    });
  }

  it('the flat error format: {error: code} with a message for invalid_parameter only (spec 7)', () => {
    const e = doc.components.schemas.PublicError;
    expect(e.required).toEqual(['error']);
    expect(e.properties.error.enum).toEqual(['not_found', 'invalid_parameter', 'rate_limited', 'unavailable', 'internal']);
  });

  for (const [method, path] of OPEN) {
    it(`${method.toUpperCase()} ${path}: structured errors; a body from the body table`, () => {
      const op = operationAt(path, method);
      const codes = Object.keys(op.responses);
      expect(codes).toEqual(expect.arrayContaining(['400', '503']));
      expect(codes.includes('429')).toBe(path !== '/reports/payment-webhook');
      expect(doc.components.responses[op.responses['400'].$ref.split('/').pop()].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/Error',
      });
      const opId = op.operationId as keyof typeof OPERATIONS;
      if (method === 'post') {
        expect(codes).toEqual(expect.arrayContaining(['413', '415']));
        const schema = op.requestBody.content['application/json'].schema;
        expect(Object.keys(schema.properties)).toEqual(bodyFieldsOf(opId).map((f) => f.name));
        expect(schema.required).toEqual(
          bodyFieldsOf(opId)
            .filter((f) => f.required)
            .map((f) => f.name),
        );
        expect(schema.additionalProperties).toBe(false);
      } else {
        expect(op.requestBody).toBeUndefined();
      }
    });
  }

  it('body fields as the issue and spec set them', () => {
    const field = (op: string, name: string) => BODY_FIELDS.find((f) => f.name === name && f.operations.includes(op as never))!;
    expect(field('createCountryRequest', 'country')).toMatchObject({ required: true, pattern: '^[A-Z]{2}$' });
    expect(field('createCountryRequest', 'email').required).toBe(false);
    expect(field('createRemovalRequest', 'reason')).toMatchObject({ required: true, minLength: 10, maxLength: 2000 });
    expect(field('createReportOrder', 'email').required).toBe(true);
    expect(operationAt('/removal-requests', 'post').requestBody.content['application/json'].schema.anyOf).toEqual([
      { required: ['business_id'] },
      { required: ['registration_number'] },
    ]);
    expect(operationAt('/reports/payment-webhook', 'post').responses['401']).toBeDefined();
  });
});
