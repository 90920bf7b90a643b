/**
 * OpenAPI schemas of the answers beyond the spec's JSON: a Building cut by `fields=`, and the
 * GeoJSON FeatureCollections of GET /buildings and /buildings/at (RFC 7946).
 */
import { BUILDING_KEYS } from './fields.ts';
import { object, ref, str, type Json } from './json-schema.ts';

const position: Json = {
  type: 'array',
  minItems: 2,
  maxItems: 2,
  items: { type: 'number' },
  description: 'Longitude, latitude (WGS84 degrees).',
};

export function geoJsonSchemas(): Record<string, Json> {
  return {
    BuildingSelection: {
      type: 'object',
      description: 'A Building cut by fields=: building_id and the fields listed, each as in Building.',
      required: ['building_id'],
      properties: Object.fromEntries(BUILDING_KEYS.map((k) => [k, { $ref: `#/components/schemas/Building/properties/${k}` }])),
      additionalProperties: false,
    },
    PointGeometry: object('GeoJSON Point: the representative point.', {
      type: { type: 'string', const: 'Point' },
      coordinates: position,
    }),
    MultiPolygonGeometry: object(
      'GeoJSON MultiPolygon: the outline as the snapshot keeps it; each ring closed, exterior rings counter-clockwise, holes clockwise (RFC 7946).',
      {
        type: { type: 'string', const: 'MultiPolygon' },
        coordinates: {
          type: 'array',
          minItems: 1,
          items: { type: 'array', minItems: 1, items: { type: 'array', minItems: 4, items: position } },
        },
      },
    ),
    BuildingFeature: object('A building as a GeoJSON Feature.', {
      type: { type: 'string', const: 'Feature' },
      id: str('The building_id.', { format: 'uuid' }),
      geometry: {
        oneOf: [ref('PointGeometry'), ref('MultiPolygonGeometry')],
        description: 'point (default) or footprint, as geometry= asks.',
      },
      properties: { anyOf: [ref('Building'), ref('BuildingSelection')], description: 'The Building object, or the fields fields= keeps.' },
    }),
    BuildingsFeatureCollection: object(
      'A ranked page as a GeoJSON FeatureCollection: features in the ranked order, with the meta and links of the JSON page.',
      {
        type: { type: 'string', const: 'FeatureCollection' },
        features: { type: 'array', maxItems: 100, items: ref('BuildingFeature') },
        meta: { $ref: '#/components/schemas/BuildingsPage/properties/meta' },
        links: { $ref: '#/components/schemas/BuildingsPage/properties/links' },
      },
    ),
    PointFeatureCollection: object('Buildings at a point as a GeoJSON FeatureCollection, nearest first.', {
      type: { type: 'string', const: 'FeatureCollection' },
      features: { type: 'array', maxItems: 25, items: ref('BuildingFeature') },
    }),
  };
}
