/**
 * Registered businesses: the RegisteredBusiness object of GET /buildings/{id}/registered-businesses,
 * and the building-level summary of spec 2.1 (registered_business_employees and
 * registered_business_turnover are those of the building's largest business, DESIGN
 * "Interpretations").
 */
import type { BusinessRecord } from '../snapshot/schema.ts';

/** Stated size: exact number (min = max), band (min..max) or open-ended top band (max null). */
export interface EmployeesOut {
  min: number;
  max: number | null;
}

/** Latest turnover, in whole units of currency. */
export interface TurnoverOut {
  amount: number;
  currency: string | null;
  financial_year: number | null;
}

export interface RegisteredBusinessOut {
  business_id: string;
  registration_number: string | null;
  name: string;
  active: boolean;
  employees: EmployeesOut | null;
  turnover: TurnoverOut | null;
}

export function employeesOf(b: BusinessRecord): EmployeesOut | null {
  return b.employees_min === null ? null : { min: b.employees_min, max: b.employees_max };
}

export function turnoverOf(b: BusinessRecord): TurnoverOut | null {
  return b.turnover === null ? null : { amount: b.turnover, currency: b.turnover_currency, financial_year: b.turnover_financial_year };
}

/** a outranks b: larger stated size (band start; none = smallest), then larger turnover, then smaller business_id. */
function outranks(a: BusinessRecord, b: BusinessRecord): boolean {
  const ea = a.employees_min ?? -1;
  const eb = b.employees_min ?? -1;
  if (ea !== eb) return ea > eb;
  const ta = a.turnover ?? -Infinity;
  const tb = b.turnover ?? -Infinity;
  if (ta !== tb) return ta > tb;
  return a.business_id < b.business_id;
}

/**
 * The largest business at the address, active or not: largest employees_min, ties by larger
 * turnover (amounts compared as numbers whatever their currency), then by business_id; null
 * when there is none.
 */
export function largestBusiness(businesses: readonly BusinessRecord[]): BusinessRecord | null {
  let best: BusinessRecord | null = null;
  for (let i = 0; i < businesses.length; i++) {
    const b = businesses[i];
    if (best === null || outranks(b, best)) best = b;
  }
  return best;
}

export function serializeBusiness(b: BusinessRecord): RegisteredBusinessOut {
  return {
    business_id: b.business_id,
    registration_number: b.registration_number,
    name: b.name,
    active: b.active,
    employees: employeesOf(b),
    turnover: turnoverOf(b),
  };
}
