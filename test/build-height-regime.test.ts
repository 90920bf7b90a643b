/**
 * Height regimes as the Romanian seismic-risk lists write them. Every form below occurs in
 * test/fixtures/ro-seismic/*.csv; the expected floors are worked out by hand from the rules
 * in src/build/height-regime.ts: P = ground floor, nE = n upper floors, a bare n after P = n
 * upper floors, M/Ma/Mz one floor each, Pod none, S/D/Ds below ground (2S two), a numbered or
 * qualified floor that continues the count one floor, ranges their top, several bodies the tallest.
 */
import { describe, expect, it } from 'vitest';
import { parseHeightRegime } from '../src/build/height-regime.ts';
import { riskClass } from '../src/build/seismic.ts';

// [regime, floors above ground, floors including underground]
const READABLE: [string, number, number][] = [
  ['S+P+10E', 11, 12],
  ['P+4E+Ma', 6, 6],
  ['S+P+Mz+5E', 7, 8],
  ['2S+P+3E', 4, 6],
  ['D+P+E', 2, 3],
  ['P+10', 11, 11],
  ['P+2', 3, 3],
  ['P', 1, 1],
  ['S+P', 1, 2],
  ['S+P+2E+Ma', 4, 5],
  ['S+P+2E+Pod', 3, 4],
  ['S+P+10E+Eteh', 12, 13],
  ['S+Ds+P+3E', 4, 6],
  ['Sp+P+3E', 4, 5],
  ['S+P+1E; S+P', 2, 3],
  ['S+P+9E; S+P+7E', 10, 11],
  ['S+P+1E+Ma; S+P+3E+Ma', 5, 6],
  ['S+P+10E+1E tehnic', 12, 13],
  ['S+P+7E + 1E retras', 9, 10],
  ['S+P+9E+10R', 11, 12],
  ['S+P+4E+5Ep', 6, 7],
  ['S+P+8E+9Er', 10, 11],
  ['S+P+4E+E5r', 6, 7],
  ['S+P+7E+Et.8p/S+P+8E+E9t/S+P+4E+Et.5p/S+P', 10, 11],
  ['S+P+M+3E+4R', 6, 7],
  ['Dp+P+2E+1Eretras', 4, 5],
  ['S-P-2E-Ma', 4, 5],
  ['S PARTIAL+P+1E', 2, 3],
  ['Spartial+P+3E+Pod', 4, 5],
  ['Sparţial+P+Ma', 2, 3],
  ['P + Mansardă', 2, 2],
  ['D+P+2E+2Ma', 5, 6],
  ['S1+S2+P+6E+Ma', 8, 10],
  ['Sp+Dsp+Pp+1E', 2, 4],
  ['S+P+11…12E', 13, 14],
  ['S+P+8\u00859E', 10, 11], // the list's "…" survived as a C1 control character
  ['S+P+11E ÷ 12E', 13, 14],
  ['S+P+1E ... 2E', 3, 4],
  ['P+4-7E', 8, 8],
  ['P+8(9)E', 10, 10],
  ['P si P+1E', 2, 2],
  ['P+2 corp A P corp B P+2 corp C', 3, 3],
  ['S+P+1E+Ma (anexă: P)', 3, 4],
  ['S+P+4E (2÷4 retrase)', 5, 6],
  ['C1: S+Ds+1E+Maparţial C2: Ds+P', 2, 4],
  ['S+D+P+7E+Eth -tr.1 S+P+7E+Eth -tr.2', 9, 11],
  ['P+3Е', 4, 4], // Cyrillic Е
  ['S+P+1E+mA', 3, 4],
  ['S + P + 2E+Ms', 4, 5],
];

const UNREADABLE = [
  '',
  'S+P+Hp+1E',
  'H max=10,20m',
  '(partial beci)',
  'S+P+2ES+P+5E',
  'S+PE0',
  'canal the.+P+4E',
  'S1(S2)+P+E1(+M1)+E2+E3(+M3)+E4',
  'P+1F',
  'S+P+2E colegiul S+P+3E Opera',
];

describe('height regime parser', () => {
  it.each(READABLE)('%s → %i floors, %i with underground', (regime, floors, all) => {
    expect(parseHeightRegime(regime)).toEqual({ floors, floors_including_underground: all });
  });

  it.each(UNREADABLE)('"%s" is unreadable', (regime) => {
    expect(parseHeightRegime(regime)).toBeNull();
  });
});

describe('risk classes', () => {
  it("map the lists' codes to the spec's classes; N/A and empty are no class; others are not understood", () => {
    expect(['RS1', 'RS2', 'RS3', 'RS4', 'Rs II', 'U1', 'U2', 'U3', 'C', 'N/A', '', 'U4', 'RS5'].map(riskClass)).toEqual([
      'RsI',
      'RsII',
      'RsIII',
      'RsIV',
      'RsII',
      'U1',
      'U2',
      'U3',
      'consolidated',
      null,
      null,
      undefined,
      undefined,
    ]);
  });
});
