/**
 * Expectations for the builder's tests read from real OpenStreetMap extracts by other tools
 * than the builder: osmium's tag filter, and GDAL's SQLite dialect (SpatiaLite over GEOS) for
 * geometry. Debian: osmium-tool and gdal-bin.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** OSM objects osmium's own tags-filter selects, as `osm:way/1` ids, from its OPL output. */
export function osmiumIds(pbf: string, ...expressions: string[]): string[] {
  const opl = execFileSync('osmium', ['tags-filter', pbf, ...expressions, '-R', '-f', 'opl', '-o', '-'], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  return opl
    .split('\n')
    .filter((l) => l !== '')
    .flatMap((line) => {
      const [id] = line.split(' ');
      const type = { n: 'node', w: 'way', r: 'relation' }[id[0]]!;
      // A relation is an outline only as a multipolygon: osmium export assembles no other kind.
      if (type === 'relation' && !/[ ,T]type=multipolygon(,| |$)/.test(line)) return [];
      return [`osm:${type}/${id.slice(1)}`];
    });
}

/**
 * [inner, outer] source ids of every pair of building outlines in an osmium GeoJSON Sequence
 * where 95% or more of the inner one's area lies inside the outer one, as GEOS measures it:
 * the outlines are loaded into a GeoPackage (with its R-tree) and intersected in SQL.
 */
export function nestedByGdal(geojsonseq: string, dir: string): [string, string][] {
  const gpkg = join(dir, `nested-${Date.now()}-${Math.random().toString(36).slice(2)}.gpkg`);
  execFileSync(
    'ogr2ogr',
    ['-f', 'GPKG', gpkg, geojsonseq, '-where', "building IS NOT NULL AND building <> 'no'", '-nlt', 'MULTIPOLYGON', '-nln', 'b'],
    { stdio: 'ignore' },
  );
  const sql =
    'SELECT a."@type" AS at, a."@id" AS aid, b."@type" AS bt, b."@id" AS bid FROM b a ' +
    'JOIN rtree_b_geom r ON r.maxx >= ST_MinX(a.geom) AND r.minx <= ST_MaxX(a.geom) AND r.maxy >= ST_MinY(a.geom) AND r.miny <= ST_MaxY(a.geom) ' +
    'JOIN b b ON b.fid = r.id ' +
    'WHERE a.fid <> b.fid AND ST_Area(a.geom) > 0 AND ST_Area(b.geom) > 0 AND ST_Area(ST_Intersection(a.geom, b.geom)) >= 0.95 * ST_Area(a.geom)';
  const csv = execFileSync('ogr2ogr', ['-f', 'CSV', '/vsistdout/', gpkg, '-dialect', 'SQLite', '-sql', sql], { encoding: 'utf8' });
  return csv
    .split('\n')
    .slice(1)
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [at, aid, bt, bid] = l.split(',').map((c) => c.replace(/"/g, ''));
      return [`osm:${at}/${aid}`, `osm:${bt}/${bid}`] as [string, string];
    })
    .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : 1));
}
