/**
 * Countries asked for by visitors (POST /public/country-requests): stored as asked, listed by
 * the admin CLI newest first and counted by country, so the team sees which country to cover next.
 */
import type { Clock } from './clock.ts';
import type { Db } from './db.ts';

export interface CountryRequest {
  id: number;
  /** ISO 3166-1 alpha-2, uppercase. */
  country: string;
  email: string | null;
  comment: string | null;
  createdAt: number;
}

export interface CountryDemand {
  country: string;
  requests: number;
  /** When the latest request for it came. */
  latestAt: number;
}

export interface CountryRequestRow {
  id: number;
  country: string;
  email: string | null;
  comment: string | null;
  created_at: number;
}

export const toCountryRequest = (r: CountryRequestRow): CountryRequest => ({
  id: r.id,
  country: r.country,
  email: r.email,
  comment: r.comment,
  createdAt: r.created_at,
});

export function checkCountry(country: string): void {
  if (!/^[A-Z]{2}$/.test(country)) throw new RangeError(`A country is two uppercase letters, got "${country}".`);
}

export class CountryRequests {
  private readonly insert;
  private readonly selectAll;
  private readonly selectCounts;

  constructor(
    db: Db,
    private readonly now: Clock,
  ) {
    this.insert = db.prepare<[string, string | null, string | null, string, number], CountryRequestRow>(
      'INSERT INTO country_requests (country, email, comment, client, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *',
    );
    this.selectAll = db.prepare<[number], CountryRequestRow>('SELECT * FROM country_requests ORDER BY created_at DESC, id DESC LIMIT ?');
    this.selectCounts = db.prepare<[], { country: string; requests: number; latest_at: number }>(
      'SELECT country, count(*) AS requests, max(created_at) AS latest_at FROM country_requests GROUP BY country ORDER BY requests DESC, country',
    );
  }

  add(request: { country: string; email: string | null; comment: string | null; client: string }): CountryRequest {
    checkCountry(request.country);
    return toCountryRequest(this.insert.get(request.country, request.email, request.comment, request.client, this.now())!);
  }

  /** The latest `limit` requests, newest first. */
  list(limit = 1000): CountryRequest[] {
    return this.selectAll.all(limit).map(toCountryRequest);
  }

  /** Requests per country, most asked first. */
  demand(): CountryDemand[] {
    return this.selectCounts.all().map((r) => ({ country: r.country, requests: r.requests, latestAt: r.latest_at }));
  }
}
