/**
 * The operations of the read API: id, method, path, tag. The parameter table (`params.ts`),
 * the validator, the OpenAPI document and the docs all name operations by these ids.
 */

export const OPERATION_IDS = [
  'listBuildings', 'listBuildingsAtPoint', 'listBuildingUnits', 'listRegisteredBusinesses', 'getOpenApi',
] as const;
export type OperationId = (typeof OPERATION_IDS)[number];

export interface Operation {
  id: OperationId;
  method: 'get';
  /** Relative to the base URL, which ends in /v1; OpenAPI path template. */
  path: string;
  tag: 'Buildings' | 'Registered businesses' | 'Meta';
  summary: string;
  description: string;
  /** Needs an API key (spec 5). */
  authenticated: boolean;
  /** Name of the 200 response schema in the OpenAPI components. */
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
      'One ranked page of the buildings inside bbox that pass every filter. Filters of different names combine with AND; '
      + 'values of one list filter combine with OR (category and building_type combine with each other by OR). '
      + 'A building is inside bbox when its representative point (latitude, longitude) lies in it, edges included, so '
      + 'every building belongs to exactly one tile of a tiling. Results are ranked largest first by sort, unknown values '
      + 'last, ties by building_id ascending, so pages never overlap or skip. A filter on a value that is unknown leaves '
      + 'such buildings out. An area outside the covered countries answers with an empty page, not an error. '
      + 'Every returned building costs 1 credit unless the workspace opened it in the last 365 days; a page is charged '
      + 'all or nothing.',
    authenticated: true,
    response: 'BuildingsPage',
  },
  listBuildingsAtPoint: {
    id: 'listBuildingsAtPoint',
    method: 'get',
    path: '/buildings/at',
    tag: 'Buildings',
    summary: 'Buildings at a point',
    description:
      'The buildings whose outline lies within radius_m of the point, nearest first (distance 0 inside the outline). '
      + 'Every returned building costs 1 credit unless the workspace opened it in the last 365 days.',
    authenticated: true,
    response: 'PointPage',
  },
  listBuildingUnits: {
    id: 'listBuildingUnits',
    method: 'get',
    path: '/buildings/{building_id}/units',
    tag: 'Buildings',
    summary: 'Units of a building',
    description:
      'The units of one building, one page at a time, paged like GET /buildings by limit and offset with links.next. '
      + 'Opens the building: 1 credit unless the workspace opened it in the last 365 days. '
      + 'An id that names no building is refused with 400 invalid_parameter on building_id.',
    authenticated: true,
    response: 'UnitsPage',
  },
  listRegisteredBusinesses: {
    id: 'listRegisteredBusinesses',
    method: 'get',
    path: '/buildings/{building_id}/registered-businesses',
    tag: 'Registered businesses',
    summary: 'Businesses registered at a building\'s address',
    description:
      'The businesses whose registered office is at the building\'s address, one page at a time, paged like '
      + 'GET /buildings by limit and offset with links.next. A registered business at an address is never evidence '
      + 'that it owns or occupies the building. Opens the building: 1 credit unless the workspace opened it in the '
      + 'last 365 days. An id that names no building is refused with 400 invalid_parameter on building_id.',
    authenticated: true,
    response: 'RegisteredBusinessesPage',
  },
  getOpenApi: {
    id: 'getOpenApi',
    method: 'get',
    path: '/openapi.json',
    tag: 'Meta',
    summary: 'This machine-readable description of the API',
    description: 'The OpenAPI 3.1 document of the API. Needs no key.',
    authenticated: false,
    response: 'OpenApiDocument',
  },
};

/** `GET /buildings`, for messages. */
export function operationLabel(id: OperationId): string {
  const op = OPERATIONS[id];
  return `${op.method.toUpperCase()} ${op.path}`;
}
