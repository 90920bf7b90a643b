/**
 * The operations of the API: id, method, path, tag, who may call it. The parameter table
 * (`params.ts`), the body table (`bodies.ts`), the validators, the OpenAPI document and the docs
 * all name operations by these ids.
 */

export const OPERATION_IDS = [
  'listBuildings',
  'exportBuildings',
  'listBuildingsAtPoint',
  'listBuildingUnits',
  'listRegisteredBusinesses',
  'getOpenApi',
  'getPublicBuilding',
  'getPublicPlace',
  'listPublicPlaces',
  'listCountries',
  'createCountryRequest',
  'createRemovalRequest',
  'createReportOrder',
  'getReport',
  'confirmReportPayment',
] as const;
export type OperationId = (typeof OPERATION_IDS)[number];

/**
 * Who may call an operation and how it answers errors (spec 5, 7):
 * - key: a workspace API key; errors `{error: {code, message, parameter}}`; the headers of spec 8;
 * - public: no key, the same answer to everyone, cacheable; errors in the flat public format `{error: code}`;
 * - open: no key, not cached; errors in the format of the authenticated endpoints (country,
 *   removal and report requests);
 * - meta: no key (the machine-readable description).
 */
export type Access = 'key' | 'public' | 'open' | 'meta';

export type Tag =
  'Buildings' | 'Registered businesses' | 'Public building pages' | 'Countries' | 'Removal requests' | 'Building reports' | 'Meta';

export interface Operation {
  id: OperationId;
  method: 'get' | 'post';
  /** Relative to the base URL, which ends in /v1; OpenAPI path template. */
  path: string;
  tag: Tag;
  summary: string;
  description: string;
  access: Access;
  /** Status of success. */
  status: 200 | 201 | 202;
  /** Name of the success response schema in the OpenAPI components. */
  response: string;
}

export const OPERATIONS: Readonly<Record<OperationId, Operation>> = {
  listBuildings: {
    id: 'listBuildings',
    method: 'get',
    path: '/buildings',
    tag: 'Buildings',
    summary: 'Buildings in an area, ranked',
    description:
      'One ranked page of the buildings inside bbox that pass every filter. Filters of different names combine with AND; ' +
      'values of one list filter combine with OR (category and building_type combine with each other by OR). ' +
      'A building is inside bbox when its representative point (latitude, longitude) lies in it, edges included, so ' +
      'every building belongs to exactly one tile of a tiling. Results are ranked largest first by sort, unknown values ' +
      'last, ties by building_id ascending, so pages never overlap or skip. A filter on a value that is unknown leaves ' +
      'such buildings out. An area outside the covered countries answers with an empty page, not an error. ' +
      'Every returned building costs 1 credit unless the workspace opened it in the last 365 days; a page is charged ' +
      'all or nothing.',
    access: 'key',
    status: 200,
    response: 'BuildingsPage',
  },
  exportBuildings: {
    id: 'exportBuildings',
    method: 'get',
    path: '/buildings/export',
    tag: 'Buildings',
    summary: 'Export the ranked buildings of an area (extension)',
    description:
      'The whole ranked result of GET /buildings for the same bbox, filters and sort (up to limit, at most 10,000 buildings) ' +
      'in one streamed answer: NDJSON (a building a line), CSV (a header row, then a row a building; nested fields as JSON ' +
      'text) or GeoJSON text sequences (RFC 8142: a Feature a record), chosen by f= or the Accept header. It counts as ' +
      'one request against the limits. Every building costs 1 credit unless the workspace opened it in the last 365 days; ' +
      'the whole export is charged all or nothing before its first byte, and refused with 402 when that would exceed ' +
      'max_credits. A client that disconnects mid-stream has paid for the whole export; asking again within 365 days ' +
      'costs nothing for the buildings already opened. This is an extension beyond the specification.',
    access: 'key',
    status: 200,
    response: 'BuildingsExport',
  },
  listBuildingsAtPoint: {
    id: 'listBuildingsAtPoint',
    method: 'get',
    path: '/buildings/at',
    tag: 'Buildings',
    summary: 'Buildings at a point',
    description:
      'The buildings whose outline lies within radius_m of the point, nearest first (distance 0 inside the outline). ' +
      'Distances are on the WGS84 ellipsoid, as geodesics measure them, across the antimeridian too. ' +
      'Every returned building costs 1 credit unless the workspace opened it in the last 365 days.',
    access: 'key',
    status: 200,
    response: 'PointPage',
  },
  listBuildingUnits: {
    id: 'listBuildingUnits',
    method: 'get',
    path: '/buildings/{building_id}/units',
    tag: 'Buildings',
    summary: 'Units of a building',
    description:
      'The units of one building, one page at a time, paged like GET /buildings by limit and offset with links.next. ' +
      'Opens the building: 1 credit unless the workspace opened it in the last 365 days. ' +
      'An id that names no building is refused with 400 invalid_parameter on building_id.',
    access: 'key',
    status: 200,
    response: 'UnitsPage',
  },
  listRegisteredBusinesses: {
    id: 'listRegisteredBusinesses',
    method: 'get',
    path: '/buildings/{building_id}/registered-businesses',
    tag: 'Registered businesses',
    summary: "Businesses registered at a building's address",
    description:
      "The businesses whose registered office is at the building's address, one page at a time, paged like " +
      'GET /buildings by limit and offset with links.next. A registered business at an address is never evidence ' +
      'that it owns or occupies the building. Opens the building: 1 credit unless the workspace opened it in the ' +
      'last 365 days. An id that names no building is refused with 400 invalid_parameter on building_id.',
    access: 'key',
    status: 200,
    response: 'RegisteredBusinessesPage',
  },
  getOpenApi: {
    id: 'getOpenApi',
    method: 'get',
    path: '/openapi.json',
    tag: 'Meta',
    summary: 'This machine-readable description of the API',
    description:
      'The OpenAPI 3.1 document of the API; with version=3.0, the same rewritten as OpenAPI 3.0 for clients that read only 3.0 ' +
      '(the OGC API – Features test suite). Needs no key.',
    access: 'meta',
    status: 200,
    response: 'OpenApiDocument',
  },
  getPublicBuilding: {
    id: 'getPublicBuilding',
    method: 'get',
    path: '/public/buildings/{building_id}',
    tag: 'Public building pages',
    summary: 'The facts of a public building page',
    description:
      'Every fact a public building page shows, in camelCase, each as {value, estimate}: value null when unknown, ' +
      'estimate true when the value is modelled rather than measured or stated (a locality taken from the nearest ' +
      'place is an estimate). The businesses registered at the ' +
      'address are listed by name; a registered business is never evidence that it owns or occupies the building. ' +
      'Needs no key, answers the same to everyone and may be cached as Cache-Control says; send If-None-Match with ' +
      'the ETag for a 304.',
    access: 'public',
    status: 200,
    response: 'PublicBuilding',
  },
  getPublicPlace: {
    id: 'getPublicPlace',
    method: 'get',
    path: '/public/places/{country}/{locality}',
    tag: 'Public building pages',
    summary: 'The facts of a public place page',
    description:
      'Facts of one locality computed from the snapshot: buildings by category, construction years, heights and ' +
      'floors, solar, flood zones, seismic lists, heating. Each fact is {value, estimate}. locality is the name as ' +
      'buildings carry it, percent-encoded (listed by GET /public/countries/{country}/places).',
    access: 'public',
    status: 200,
    response: 'PublicPlace',
  },
  listPublicPlaces: {
    id: 'listPublicPlaces',
    method: 'get',
    path: '/public/countries/{country}/places',
    tag: 'Public building pages',
    summary: 'The places of a covered country',
    description: "Every locality of the country's snapshot with its number of buildings, by name.",
    access: 'public',
    status: 200,
    response: 'PublicPlaceList',
  },
  listCountries: {
    id: 'listCountries',
    method: 'get',
    path: '/public/countries',
    tag: 'Countries',
    summary: 'Covered countries',
    description:
      'The countries Edifice covers, each with the date of the snapshot it serves, its number of buildings and where the data comes from.',
    access: 'public',
    status: 200,
    response: 'CountryList',
  },
  createCountryRequest: {
    id: 'createCountryRequest',
    method: 'post',
    path: '/public/country-requests',
    tag: 'Countries',
    summary: 'Ask for a country not yet covered',
    description:
      'Anyone may ask for a country Edifice does not cover yet, with an optional contact email and comment. ' +
      'Each visitor may send 20 requests an hour. Unlike the other /public endpoints, errors use the format of the ' +
      'authenticated endpoints ({error: {code, message, parameter}}), parameter naming the body field at fault.',
    access: 'open',
    status: 201,
    response: 'CountryRequestReceipt',
  },
  createRemovalRequest: {
    id: 'createRemovalRequest',
    method: 'post',
    path: '/removal-requests',
    tag: 'Removal requests',
    summary: 'Ask for a registered business to be removed',
    description:
      "Asks for a business registered at a building's address to be removed from what Edifice shows. Name the " +
      "business by business_id or registration_number (as the building's public page or the registered-businesses " +
      'listing shows it) and the building it appears at. Once approved, the business disappears from every ' +
      'response, authenticated and public, at once and in later snapshots. Needs no key; 10 requests an hour per ' +
      'client address.',
    access: 'open',
    status: 202,
    response: 'RemovalRequestReceipt',
  },
  createReportOrder: {
    id: 'createReportOrder',
    method: 'post',
    path: '/reports',
    tag: 'Building reports',
    summary: "Buy one building's report",
    description:
      'Orders the report of one building without an account. The answer carries a read token, shown once: keep it. ' +
      'The report is frozen from the snapshot current at purchase. With the built-in payment provider the order is ' +
      'paid at once at the configured price; with an external provider it stays pending until the provider confirms ' +
      'payment. Needs no key; 10 orders an hour per client address. A server that offers no reports answers 404 not_found.',
    access: 'open',
    status: 201,
    response: 'ReportOrderCreated',
  },
  getReport: {
    id: 'getReport',
    method: 'get',
    path: '/reports/{order_id}',
    tag: 'Building reports',
    summary: 'Read a bought report',
    description:
      'The report of the order, given its read token: every fact of the building, its units and the businesses ' +
      'registered at it, as of the snapshot current at purchase (snapshot_date). Before payment, status is pending ' +
      'and report is null. An unknown order or a wrong token answers 404 not_found. Needs no key; 60 reads a minute ' +
      'per client address.',
    access: 'open',
    status: 200,
    response: 'Report',
  },
  confirmReportPayment: {
    id: 'confirmReportPayment',
    method: 'post',
    path: '/reports/payment-webhook',
    tag: 'Building reports',
    summary: 'Payment confirmation from the payment provider',
    description:
      'Called by an external payment provider when a report order is paid. The body is signed: header ' +
      'X-Edifice-Signature: sha256=<hex of HMAC-SHA256 of the raw body with the configured webhook secret>. ' +
      'A missing or wrong signature answers 401 unauthorized. Repeating a confirmation changes nothing.',
    access: 'open',
    status: 200,
    response: 'ReportOrder',
  },
};

/** `GET /buildings`, for messages. */
export function operationLabel(id: OperationId): string {
  const op = OPERATIONS[id];
  return `${op.method.toUpperCase()} ${op.path}`;
}
