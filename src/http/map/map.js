// The map page: the buildings of the current view from the GeoJSON API, drawn as footprints.
// The key lives in this page's memory only: never in storage, the URL or a cookie.
(function () {
  'use strict';
  const config = JSON.parse(document.getElementById('edifice-config').textContent);
  const MAX_SIDE_DEG = 3; // spec: each side of a bbox spans at most 3 degrees
  const PAGE = 100;

  const GREY = '#9aa0a6';
  const SCALES = {
    height: {
      title: 'height (m)',
      bins: [
        [5, '#ffffcc', 'under 5'],
        [10, '#a1dab4', '5 to 10'],
        [20, '#41b6c4', '10 to 20'],
        [40, '#2c7fb8', '20 to 40'],
        [Infinity, '#253494', '40 and more'],
      ],
      value: (p) => (p.height && typeof p.height.metres === 'number' ? p.height.metres : null),
    },
    category: {
      title: 'category',
      classes: {
        residential_house: '#e6ab02',
        apartment_block: '#d95f02',
        commercial: '#7570b3',
        industrial: '#666666',
        public: '#1b9e77',
        agricultural: '#66a61e',
        ancillary: '#a6761d',
        unknown: GREY,
      },
      value: (p) => p.category ?? null,
    },
    seismic_risk_class: {
      title: 'seismic risk class',
      classes: {
        RsI: '#b2182b',
        RsII: '#ef8a62',
        RsIII: '#fddbc7',
        RsIV: '#d1e5f0',
        U1: '#67001f',
        U2: '#d6604d',
        U3: '#f4a582',
        consolidated: '#4393c3',
      },
      value: (p) => p.seismic_risk_class ?? null,
      none: 'on no list',
    },
    solar_presence: {
      title: 'solar presence',
      classes: {
        registered: '#1a9850',
        detected: '#66bd63',
        registered_at_address: '#a6d96a',
        none_seen: '#f46d43',
        unclear: '#fee08b',
        unknown: GREY,
      },
      value: (p) => p.solar_presence ?? null,
    },
  };

  const el = (id) => document.getElementById(id);
  const state = {
    key: '',
    lastUrl: '',
    lastUrls: [],
    colourBy: 'height',
    features: [],
    byId: new Map(),
    charged: 0,
    spent: 0,
    remaining: null,
    loads: 0,
    error: null,
  };
  // For people and for end-to-end tests: what the page holds and what the map draws.
  window.edifice = {
    state,
    renderedIds() {
      return [...new Set(map.queryRenderedFeatures({ layers: ['buildings-fill'] }).map((f) => f.properties.building_id))];
    },
    rendered() {
      return this.renderedIds().length;
    },
  };

  function colourOf(props) {
    const scale = SCALES[state.colourBy];
    const v = scale.value(props);
    if (v === null || v === undefined) return GREY;
    if (scale.bins) return scale.bins.find(([upTo]) => v < upTo)[1];
    return scale.classes[v] ?? GREY;
  }

  function drawLegend() {
    const scale = SCALES[state.colourBy];
    const rows = scale.bins
      ? scale.bins.map(([, colour, label]) => [colour, label]).concat([[GREY, 'unknown']])
      : Object.entries(scale.classes)
          .map(([name, colour]) => [colour, name])
          .concat(scale.none ? [[GREY, scale.none]] : []);
    const legend = el('legend');
    legend.replaceChildren(Object.assign(document.createElement('strong'), { textContent: scale.title }));
    for (const [colour, label] of rows) {
      const row = document.createElement('div');
      const swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = colour;
      row.append(swatch, document.createTextNode(label));
      legend.append(row);
    }
  }

  function say(text, isError) {
    const status = el('status');
    status.textContent = text;
    status.className = isError ? 'error' : '';
  }

  function basemapStyle(url) {
    const style = { version: 8, sources: {}, layers: [{ id: 'background', type: 'background', paint: { 'background-color': '#eef0f2' } }] };
    if (!url) return style;
    if (/\{z\}/.test(url)) {
      style.sources.basemap = { type: 'raster', tiles: [url], tileSize: 256 };
      style.layers.push({ id: 'basemap', type: 'raster', source: 'basemap' });
      return style;
    }
    return url; // a whole MapLibre style document
  }

  const map = new maplibregl.Map({
    container: 'map',
    style: basemapStyle(config.basemap),
    center: config.center,
    zoom: config.zoom,
    hash: true,
    attributionControl: { customAttribution: config.attribution },
  });
  map.addControl(new maplibregl.NavigationControl(), 'top-right');
  window.edifice.map = map;

  function recolour() {
    for (const f of state.features) f.properties._colour = colourOf(f.properties);
    const source = map.getSource('buildings');
    if (source) source.setData({ type: 'FeatureCollection', features: state.features });
    drawLegend();
  }

  let pending = null;
  let timer = 0;
  const round6 = (v) => Math.round(v * 1e6) / 1e6;

  /**
   * The API's bboxes for the view. MapLibre's bounds go on past ±180° (a view across the
   * antimeridian, or a copy of the world panned to): taken back to -180..180, a view across the
   * line is asked as two boxes, as the API wants it.
   */
  function viewBoxes(b) {
    const shift = 360 * Math.floor((b.getWest() + 180) / 360);
    const west = b.getWest() - shift;
    const east = b.getEast() - shift;
    const south = round6(b.getSouth());
    const north = round6(b.getNorth());
    if (east <= 180) return [[round6(west), south, round6(east), north]];
    return [
      [round6(west), south, 180, north],
      [-180, south, round6(east - 360), north],
    ];
  }

  async function load() {
    if (!state.key) return;
    const b = map.getBounds();
    if (b.getEast() - b.getWest() > MAX_SIDE_DEG || b.getNorth() - b.getSouth() > MAX_SIDE_DEG) {
      say(`Zoom in: a view may span at most ${MAX_SIDE_DEG} degrees a side.`, true);
      return;
    }
    if (pending) pending.abort();
    pending = new AbortController();
    const signal = pending.signal;
    const urls = viewBoxes(b).map((bbox) => `${config.base}/buildings?bbox=${bbox.join(',')}&limit=${PAGE}&f=geojson&geometry=footprint`);
    state.lastUrls = urls;
    state.lastUrl = urls[0];
    say('Loading…');
    try {
      const answers = [];
      for (const url of urls) {
        const res = await fetch(url, { headers: { Authorization: `Bearer ${state.key}`, Accept: 'application/geo+json' }, signal });
        const body = await res.json();
        if (!res.ok) {
          // The side already answered was charged all the same.
          for (const a of answers) state.spent += Number(a.res.headers.get('X-Credits-Charged') ?? 0);
          state.error = body && body.error ? body.error : { code: String(res.status), message: res.statusText };
          say(`${res.status} ${state.error.code}: ${state.error.message}`, true);
          return;
        }
        answers.push({ res, body });
      }
      state.error = null;
      state.features = answers.flatMap((a) => a.body.features);
      state.byId = new Map(state.features.map((f) => [f.properties.building_id, f.properties]));
      state.charged = answers.reduce((n, a) => n + Number(a.res.headers.get('X-Credits-Charged') ?? 0), 0);
      state.remaining = answers[answers.length - 1].res.headers.get('X-Credits-Remaining');
      state.spent += state.charged;
      state.loads++;
      recolour();
      const totals = answers.map((a) => a.body.numberMatched ?? a.body.total);
      const total = totals.every((n) => typeof n === 'number') ? totals.reduce((n, m) => n + m, 0) : null;
      const shown = `${state.features.length} building${state.features.length === 1 ? '' : 's'}`;
      const largest = urls.length === 1 ? `the ${PAGE} largest` : `the ${PAGE} largest each side of the antimeridian`;
      say(
        `${shown} drawn${total !== null && total > state.features.length ? ` (${largest} of ${total} in view)` : ''}. ` +
          `This view cost ${state.charged} credit${state.charged === 1 ? '' : 's'}; ${state.spent} on this page so far` +
          `${state.remaining === null ? '' : `, ${state.remaining} left`}.`,
      );
    } catch (err) {
      if (err.name !== 'AbortError') say(`Could not load buildings: ${err.message}`, true);
    }
  }
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(load, 250);
  };

  map.on('load', () => {
    map.addSource('buildings', { type: 'geojson', data: { type: 'FeatureCollection', features: [] }, promoteId: 'building_id' });
    map.addLayer({
      id: 'buildings-fill',
      type: 'fill',
      source: 'buildings',
      paint: { 'fill-color': ['get', '_colour'], 'fill-opacity': 0.8 },
    });
    map.addLayer({ id: 'buildings-line', type: 'line', source: 'buildings', paint: { 'line-color': '#333', 'line-width': 0.5 } });
    map.on('moveend', schedule);
    map.on('click', 'buildings-fill', (e) => {
      const props = state.byId.get(e.features[0].properties.building_id);
      const shown = Object.fromEntries(Object.entries(props ?? {}).filter(([k]) => k !== '_colour'));
      el('details').textContent = JSON.stringify(shown, null, 2);
    });
    map.on('mouseenter', 'buildings-fill', () => {
      map.getCanvas().style.cursor = 'pointer';
    });
    map.on('mouseleave', 'buildings-fill', () => {
      map.getCanvas().style.cursor = '';
    });
    drawLegend();
  });

  el('key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    state.key = el('key').value.trim();
    el('key').value = '';
    load();
  });
  el('colour-by').addEventListener('change', (e) => {
    state.colourBy = e.target.value;
    recolour();
  });
})();
