/**
 * Romanian height regimes ("regim de înălțime"), as the seismic-risk lists write them:
 * `S+P+10E`, `P+4E+M`, `S+P+Mz+5E`, `2S+P+3E`, `D+P+E`, `P+10`.
 *
 * Above ground: `P` (parter, ground floor) 1; `nE` n upper floors, `E` one; a bare `n` after
 * the ground floor n upper floors; `M`/`Ma`/`Ms` (mansardă, attic storey) and `Mz`
 * (mezanin) one each; `Eth`/`Eteh` (technical floor) and retras (set-back) floors count too.
 * Below ground: `S` (subsol, basement), `D`/`Ds` (demisol, half-basement), `2S` two; `Sp`,
 * `Sth` partial or technical ones count as one. `Pod` (unused roof space) is no floor.
 *
 * A numbered floor after the number (`E5r`, `Et.8p`) or a qualified count that continues the
 * sequence (`S+P+9E+10R`, `S+P+4E+5Ep`) names one more floor, not that many. Ranges
 * (`11…12E`, `8(9)E`, `4-7E`) count their top. A list of several bodies (`S+P+1E; S+P`,
 * `S+P+4E S+P+2E`, `P si P+1E`) gives the tallest. Anything else is unparseable: null.
 */

export interface HeightRegime {
  /** Floors above ground. */
  floors: number;
  /** Floors above ground plus floors below. */
  floors_including_underground: number;
}

interface Count {
  above: number;
  below: number;
  /** Upper floors so far: decides whether a qualified number continues the sequence. */
  upper: number;
}

const QUALIFIER = '(?:partial|tehnic|teh|th|t|retrase|retras|retars|r|p)*';
const UNDERGROUND = /^(\d*)(?:s|d|ds)\d?(?:p|tp|th|t|partial|tehnic)?$/;
const GROUND = /^(?:p|pp|pi|pinalt|ppartial)$/;
const UPPER_COUNT = new RegExp(`^(\\d*)e${QUALIFIER}$`);
const UPPER_ORDINAL = new RegExp(`^e(?:t)?(\\d+)${QUALIFIER}$`);
const QUALIFIED_NUMBER = /^(\d+)(?:r|p|partial)$/;
const BARE_NUMBER = /^(\d+)$/;
const RANGE = /^(\d+)(?:…|-|\()(\d+)\)?e?$/;
const MEZZANINE = /^(\d*)mz$/;
const ATTIC = /^(\d*)(?:m|ma|mp|ms|mans|mansarda)\d?(?:partial|p)?$/;
const ROOF_SPACE = /^(?:pod|pd)$/;

function token(t: string, c: Count): boolean {
  let m: RegExpExecArray | null;
  if (GROUND.test(t)) {
    c.above += 1;
  } else if ((m = UNDERGROUND.exec(t))) {
    c.below += m[1] ? Number(m[1]) : 1;
  } else if ((m = UPPER_COUNT.exec(t))) {
    const n = m[1] ? Number(m[1]) : 1;
    // "5Ep" after "4E" is the fifth floor (partial); "2E retras" after "8E" two more floors.
    const qualified = t.length > m[1].length + 1;
    const add = qualified && n === c.upper + 1 ? 1 : n;
    c.upper += add;
    c.above += add;
  } else if (UPPER_ORDINAL.test(t)) {
    c.upper += 1;
    c.above += 1;
  } else if ((m = QUALIFIED_NUMBER.exec(t))) {
    const n = Number(m[1]);
    const add = n === c.upper + 1 ? 1 : n;
    c.upper += add;
    c.above += add;
  } else if ((m = BARE_NUMBER.exec(t))) {
    c.upper += Number(m[1]);
    c.above += Number(m[1]);
  } else if ((m = RANGE.exec(t))) {
    const top = Math.max(Number(m[1]), Number(m[2]));
    c.upper += top;
    c.above += top;
  } else if ((m = MEZZANINE.exec(t))) {
    c.above += m[1] ? Number(m[1]) : 1;
  } else if ((m = ATTIC.exec(t))) {
    c.above += m[1] ? Number(m[1]) : 1;
  } else if (!ROOF_SPACE.test(t)) {
    return false;
  }
  return true;
}

/** Lowercase, no diacritics, one separator style: what the token patterns expect. */
function normalise(value: string): string {
  return value
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/\u0415/g, 'E')
    .replace(/\u0435/g, 'e') // Cyrillic Е typed for E
    .toLowerCase()
    .replace(/\u0085|\.\.\.|÷/g, '…') // cp1252 ellipsis read as NEL, "...", "÷"
    .replace(/\s*…\s*/g, '…')
    .replace(/(\d+)e…/g, '$1…') // "1E … 2E" → "1…2E"
    .replace(/\(\s*partial\s*\)/g, 'partial')
    .replace(/\s+\([^)]*\)/g, ' ') // a remark in brackets: "(anexa: P)", "(partial)"
    .replace(/\b(?:corp|tr\.?)\s*[a-z0-9]+(?:-\d+)?\b|\bc\d+\s*:/g, ' ') // body labels: "corp C1", "-tr.2", "C1:"
    .replace(/\s*[+=]\s*/g, '+')
    .replace(/\s+(partial|tehnic|teh|retrase|retras|retars|r)\b/g, '$1') // "1E retras", "4E r"
    .replace(/\./g, '')
    .trim();
}

/** Parses a height regime; null when it cannot be read. */
export function parseHeightRegime(value: string): HeightRegime | null {
  const bodies = normalise(value)
    .split(/\s*[;/]\s*|\s+si\s+|\s+/)
    .filter((b) => b !== '' && b !== '+' && b !== '-');
  if (bodies.length === 0) return null;
  let floors = -1;
  let below = 0;
  for (const body of bodies) {
    // "S-P-2E-Ma" uses dashes as separators; a dash between digits ("4-7E") is a range.
    const tokens = body
      .replace(/(?<!\d)-|-(?!\d)/g, '+')
      .split('+')
      .filter((t) => t !== '');
    if (tokens.length === 0) return null;
    const c: Count = { above: 0, below: 0, upper: 0 };
    for (const t of tokens) if (!token(t, c)) return null;
    if (c.above === 0 && c.below === 0) return null;
    floors = Math.max(floors, c.above);
    below = Math.max(below, c.below);
  }
  return { floors, floors_including_underground: floors + below };
}
