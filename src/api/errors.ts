/**
 * The one exception of the contract layer. Anything the API refuses is thrown as an `ApiError`
 * carrying its HTTP status and the spec's stable `code`; the http layer turns it into the body
 * of spec section 7 with `errorBody` and turns anything else into a logged 500.
 */

/**
 * Every `error.code` of the structured error format (spec 7; DESIGN "Interpretations"). The last
 * five answer a record that does not exist, a method a path does not take, bodies (country,
 * removal and report requests), and an unexpected failure of the server (500, logged).
 */
export const ERROR_CODES = [
  'invalid_parameter',
  'unauthorized',
  'insufficient_credits',
  'forbidden',
  'rate_limited',
  'quota_exceeded',
  'unavailable',
  'not_found',
  'method_not_allowed',
  'payload_too_large',
  'unsupported_media_type',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The status of each code. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, 400 | 401 | 402 | 403 | 404 | 405 | 413 | 415 | 429 | 500 | 503>> = {
  invalid_parameter: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  forbidden: 403,
  rate_limited: 429,
  quota_exceeded: 429,
  unavailable: 503,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  internal: 500,
};

/** The codes of the flat error format of the endpoints under /public (spec 7). */
export const PUBLIC_ERROR_CODES = ['not_found', 'invalid_parameter', 'rate_limited', 'unavailable', 'internal'] as const;
export type PublicErrorCode = (typeof PUBLIC_ERROR_CODES)[number];

/** `{error: code}`, with `message` for invalid_parameter only: spec 7, endpoints under /public. */
export type PublicErrorBody = { error: PublicErrorCode; message?: string };

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

/**
 * The flat body of an error under /public. A code the flat format does not have (a method the
 * page does not take, say) is reported as invalid_parameter with its message.
 */
export function publicErrorBody(err: ApiError): PublicErrorBody {
  if (err.code === 'invalid_parameter') return { error: 'invalid_parameter', message: err.message };
  if ((PUBLIC_ERROR_CODES as readonly string[]).includes(err.code)) return { error: err.code as PublicErrorCode };
  return { error: 'invalid_parameter', message: err.message };
}

/** The status a refusal under /public answers with: its own for the flat codes and 405, else 400. */
export function publicErrorStatus(err: ApiError): number {
  const body = publicErrorBody(err);
  return body.error === err.code || err.code === 'method_not_allowed' ? err.status : 400;
}

/** A client's name or value cut short for a message, so that a huge input is not echoed back. */
export const cut = (text: string): string => (text.length > 64 ? `${text.slice(0, 64)}…` : text);

/** A client's value as it appears in a message: quoted, and cut short. */
export const show = (value: string): string => JSON.stringify(cut(value));
