/**
 * The one exception of the contract layer. Anything the API refuses is thrown as an `ApiError`
 * carrying its HTTP status and the spec's stable `code`; the http layer turns it into the body
 * of spec section 7 with `errorBody` and turns anything else into a logged 500.
 */

/** Every `error.code` an authenticated endpoint answers with (spec 7; DESIGN "Interpretations"). */
export const ERROR_CODES = [
  'invalid_parameter', 'unauthorized', 'insufficient_credits', 'forbidden', 'rate_limited', 'quota_exceeded', 'unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The status of each code. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, 400 | 401 | 402 | 403 | 429 | 503>> = {
  invalid_parameter: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  forbidden: 403,
  rate_limited: 429,
  quota_exceeded: 429,
  unavailable: 503,
};

/** `{error: {code, message, parameter}}`: spec 7, authenticated endpoints. */
export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    /** The query or path parameter at fault for invalid_parameter; the empty string otherwise. */
    parameter: string;
  };
}

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The query or path parameter at fault (invalid_parameter); '' when no parameter is. */
    readonly parameter = '',
    /** Seconds a client should wait before retrying (429, 503); the http layer sends Retry-After. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }

  /** 400 invalid_parameter: a bad, missing or unknown query or path parameter. */
  static invalidParameter(parameter: string, message: string): ApiError {
    return new ApiError('invalid_parameter', message, parameter);
  }

  /** 400 invalid_parameter on building_id: the path names no building of any covered country. */
  static unknownBuilding(buildingId: string): ApiError {
    return new ApiError('invalid_parameter', `building_id: no building has the id ${buildingId}`, 'building_id');
  }

  toBody(): ErrorBody {
    return errorBody(this);
  }
}

export function errorBody(err: ApiError): ErrorBody {
  return { error: { code: err.code, message: err.message, parameter: err.parameter } };
}
