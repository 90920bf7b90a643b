/**
 * Registered businesses as a client sees them over HTTP (DESIGN "Interpretations"): every
 * business filter, both sorts and the building's registered_business_* fields read every
 * business at the address, active or not, and each building shows the value it ranks by.
 * Hand-made buildings, each reproducing a case found on real data; expectations written by hand.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blankRecord } from '../src/snapshot/record.ts';
import type { BusinessRecord } from '../src/snapshot/schema.ts';
import { SnapshotWriter } from '../src/snapshot/writer.ts';
import { getFresh, removeDir, startTestServer, workspaceWithKey, type TestServer } from './http-helpers.ts';

const DATE = '2026-11-21';
const BBOX = 'bbox=26.0,44.4,26.2,44.5';

const business = (over: Partial<BusinessRecord>): BusinessRecord => ({
  business_id: 'b',
  registration_number: null,
  name: 'Firma SRL',
  active: true,
  employees_min: null,
  employees_max: null,
  turnover: null,
  turnover_currency: null,
  turnover_financial_year: null,
  ...over,
});

/** Building `name` at its own point, its businesses given; volume only orders the default sort. */
const building = (name: string, lon: number, volume: number, businesses: BusinessRecord[]) =>
  blankRecord(`test:${name}`, lon, 44.43, {
    volume_m3: volume,
    businesses: businesses.map((b, i) => ({ ...b, business_id: `${name}-${i}` })),
  });

const BUILDINGS = [
  // One inactive business of 19,905,376 RON.
  building('inactive', 26.101, 600, [
    business({
      name: 'Ceramica Veche SRL',
      active: false,
      employees_min: 10,
      employees_max: 19,
      turnover: 19_905_376,
      turnover_currency: 'RON',
      turnover_financial_year: 2022,
    }),
  ]),
  // The largest business by size states no turnover; a small one states 476,063,163 RON.
  building('holding', 26.102, 500, [
    business({ name: 'Mare Holding SA', employees_min: 250, employees_max: null }),
    business({
      name: 'Mic Comert SRL',
      employees_min: 1,
      employees_max: 1,
      turnover: 476_063_163,
      turnover_currency: 'RON',
      turnover_financial_year: 2023,
    }),
  ]),
  // The largest business by size states RON 0; a small one 20,000,000 EUR.
  building('mixed', 26.103, 400, [
    business({
      name: 'Depozit SRL',
      employees_min: 100,
      employees_max: 100,
      turnover: 0,
      turnover_currency: 'RON',
      turnover_financial_year: 2022,
    }),
    business({
      name: 'Export GmbH',
      employees_min: 1,
      employees_max: 1,
      turnover: 20_000_000,
      turnover_currency: 'EUR',
      turnover_financial_year: 2023,
    }),
  ]),
  building('euro', 26.104, 300, [
    business({
      name: 'Birou SRL',
      employees_min: 5,
      employees_max: 9,
      turnover: 18_771_493,
      turnover_currency: 'EUR',
      turnover_financial_year: 2023,
    }),
  ]),
  // A statement for 2024 without a turnover, and another business's 2,000,000 RON for 2021.
  building('statement', 26.105, 200, [
    business({ name: 'Anul Nou SRL', turnover_financial_year: 2024 }),
    business({ name: 'Alt Comert SRL', turnover: 2_000_000, turnover_currency: 'RON', turnover_financial_year: 2021 }),
  ]),
  building('none', 26.106, 100, []),
];

let server: TestServer;
let key: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edifice-businesses-'));
  const writer = new SnapshotWriter({
    country: 'RO',
    snapshotDate: DATE,
    sources: [{ name: 't', licence: 'CC0-1.0', attribution: 't', retrieved: DATE }],
  });
  for (const r of BUILDINGS) writer.add(r);
  await writer.finish(join(dir, 'snapshots', 'RO', `${DATE}.arrow`));
  server = await startTestServer(dir);
  key = workspaceWithKey(server.ledger, 10_000).key;
});

afterAll(() => {
  if (server) {
    server.close();
    removeDir(server.dir);
  }
});

interface Shown {
  id: string;
  employees: { min: number; max: number | null } | null;
  turnover: { amount: number; currency: string | null; financial_year: number | null } | null;
  count: number;
}

const nameOf = new Map(BUILDINGS.map((b) => [b.building_id, b.source_id.slice('test:'.length)]));

async function page(query: string): Promise<Shown[]> {
  const res = await getFresh(server.url, `/v1/buildings?${BBOX}&limit=100&${query}`, { Authorization: `Bearer ${key}` });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data as Record<string, any>[]).map((b) => ({
    id: nameOf.get(b.building_id)!,
    employees: b.registered_business_employees,
    turnover: b.registered_business_turnover,
    count: b.registered_business_count,
  }));
}

const ids = async (query: string) => (await page(query)).map((b) => b.id);

describe('GET /buildings: every business filter reads every business, active or not', () => {
  it('a building whose only business is inactive is found by every filter its business meets, min turnover too', async () => {
    expect(await ids('registered_business_turnover_currency=RON&min_registered_business_turnover=1000000')).toEqual([
      'inactive',
      'holding',
      'statement',
    ]);
    expect(
      await ids(
        'registered_business_turnover_currency=RON&min_registered_business_turnover=19905376&max_registered_business_turnover=19905376',
      ),
    ).toEqual(['inactive']);
    expect(await ids('registered_business_turnover_currency=RON&max_registered_business_turnover=100000000')).toEqual([
      'inactive',
      'mixed',
      'statement',
    ]);
    expect(await ids('registered_business_name=ceramica')).toEqual(['inactive']);
    expect(await ids('registered_business_financial_year=2022')).toEqual(['inactive', 'mixed']);
    expect(await ids('min_registered_business_employees=10&max_registered_business_employees=19')).toEqual(['inactive']);
    // Only has_registered_business asks for an active one.
    expect(await ids('has_registered_business=true')).toEqual(['holding', 'mixed', 'euro', 'statement']);
  });

  it('the financial year matches a statement without a turnover, whatever business the turnover filters find', async () => {
    expect(await ids('registered_business_financial_year=2024')).toEqual(['statement']);
    expect(
      await ids(
        'registered_business_financial_year=2024&registered_business_turnover_currency=RON&min_registered_business_turnover=1000000',
      ),
    ).toEqual(['statement']);
    expect(
      await ids(
        'registered_business_financial_year=2024&registered_business_turnover_currency=RON&max_registered_business_turnover=3000000',
      ),
    ).toEqual(['statement']);
  });
});

describe('GET /buildings: a building shows the value it ranks by', () => {
  it('sort=registered_business_turnover in RON: the first building shows its 476,063,163 RON, and the page reads in order', async () => {
    const got = await page('sort=registered_business_turnover&registered_business_turnover_currency=RON');
    expect(got.map((b) => [b.id, b.turnover])).toEqual([
      ['holding', { amount: 476_063_163, currency: 'RON', financial_year: 2023 }],
      ['inactive', { amount: 19_905_376, currency: 'RON', financial_year: 2022 }],
      ['statement', { amount: 2_000_000, currency: 'RON', financial_year: 2021 }],
      ['mixed', { amount: 0, currency: 'RON', financial_year: 2022 }],
      // No turnover in RON: unknown, last, and shown so (by building_id).
      ...['euro', 'none'].sort((a, b) => (idOf(a) < idOf(b) ? -1 : 1)).map((id) => [id, null]),
    ]);
  });

  it('sort=registered_business_turnover in EUR: no building shows RON above one showing EUR', async () => {
    const got = await page('sort=registered_business_turnover&registered_business_turnover_currency=EUR');
    expect(got.slice(0, 2).map((b) => [b.id, b.turnover])).toEqual([
      ['mixed', { amount: 20_000_000, currency: 'EUR', financial_year: 2023 }],
      ['euro', { amount: 18_771_493, currency: 'EUR', financial_year: 2023 }],
    ]);
    expect(got.slice(2).map((b) => b.turnover)).toEqual([null, null, null, null]);
  });

  it('a turnover filter shows turnover in its currency, whatever the sort', async () => {
    const got = await page('registered_business_turnover_currency=EUR&min_registered_business_turnover=0');
    expect(got.map((b) => [b.id, b.turnover?.amount, b.turnover?.currency])).toEqual([
      ['mixed', 20_000_000, 'EUR'],
      ['euro', 18_771_493, 'EUR'],
    ]);
  });

  it('without a currency: the largest turnover in the currency most of its businesses state (a tie alphabetically)', async () => {
    const got = new Map((await page('')).map((b) => [b.id, b]));
    expect(got.get('holding')!.turnover).toEqual({ amount: 476_063_163, currency: 'RON', financial_year: 2023 });
    expect(got.get('mixed')!.turnover).toEqual({ amount: 20_000_000, currency: 'EUR', financial_year: 2023 });
    expect(got.get('statement')!.turnover).toEqual({ amount: 2_000_000, currency: 'RON', financial_year: 2021 });
    expect(got.get('inactive')!.turnover).toEqual({ amount: 19_905_376, currency: 'RON', financial_year: 2022 });
    expect(got.get('none')!.turnover).toBeNull();
    expect([...got.values()].map((b) => [b.id, b.count])).toEqual([
      ['inactive', 1],
      ['holding', 2],
      ['mixed', 2],
      ['euro', 1],
      ['statement', 2],
      ['none', 0],
    ]);
  });

  it('sort=registered_business_employees: each shows the largest stated size, the one it ranks by', async () => {
    const got = await page('sort=registered_business_employees');
    expect(got.slice(0, 4).map((b) => [b.id, b.employees])).toEqual([
      ['holding', { min: 250, max: null }],
      ['mixed', { min: 100, max: 100 }],
      ['inactive', { min: 10, max: 19 }],
      ['euro', { min: 5, max: 9 }],
    ]);
    expect(got.slice(4).map((b) => b.employees)).toEqual([null, null]);
  });

  it('the same building asked for with and without a currency shows each its own turnover (nothing kept from the other)', async () => {
    for (let round = 0; round < 2; round++) {
      const plain = new Map((await page('')).map((b) => [b.id, b.turnover]));
      const ron = new Map(
        (await page('registered_business_turnover_currency=RON&max_registered_business_turnover=1000000000')).map((b) => [
          b.id,
          b.turnover,
        ]),
      );
      const eur = new Map(
        (await page('sort=registered_business_turnover&registered_business_turnover_currency=EUR')).map((b) => [b.id, b.turnover]),
      );
      expect([plain.get('mixed')?.currency, ron.get('mixed')?.currency, eur.get('mixed')?.currency]).toEqual(['EUR', 'RON', 'EUR']);
      expect([plain.get('holding')?.currency, ron.get('holding')?.currency, eur.get('holding')]).toEqual(['RON', 'RON', null]);
    }
  });
});

function idOf(name: string): string {
  return BUILDINGS.find((b) => b.source_id === `test:${name}`)!.building_id;
}
