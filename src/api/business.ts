/**
 * Registered businesses: the RegisteredBusiness object of GET /buildings/{id}/registered-businesses,
 * and the inner shapes of the building's registered_business_employees and
 * registered_business_turnover (which business each is taken from: catalog/largest-business.ts).
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
