/**
 * The admission of an authenticated request: its key, then the per-key limit and the workspace's
 * daily quota. On the SQLite ledger it is decided at once, on this thread (`admitHere`); a
 * replica of a fleet awaits PostgreSQL and Redis for it (fleet-ledger.ts). Either way the server
 * goes on from one answer of this form.
 */
import type { Ledger } from '../ledger/index.ts';
import type { LimitsResult } from '../ledger/limits-result.ts';
import type { AuthResult } from '../ledger/keys.ts';

export type Admission =
  /** No key, or a key that is not one (401); `challenge` is the WWW-Authenticate header. */
  | { ok: false; status: 401; code: 'unauthorized'; message: string; challenge: string }
  /** Refused after its key was known (403 suspended, 429 limits): the headers of spec section 8, the balance to add. */
  | {
      ok: false;
      status: 403 | 429;
      code: 'forbidden' | 'rate_limited' | 'quota_exceeded';
      message: string;
      retryAfterS: number;
      keyPrefix: string;
      workspaceId: string;
      headers: Record<string, string>;
    }
  | { ok: true; keyId: string; keyPrefix: string; workspaceId: string; headers: Record<string, string> };

/** The 401 of a key that is missing or not one. */
export function unauthenticated(auth: AuthResult & { ok: false; status: 401 }, token: string | undefined): Admission {
  return {
    ok: false,
    status: 401,
    code: auth.code,
    message: auth.message,
    challenge: token === undefined ? 'Bearer' : 'Bearer error="invalid_token"',
  };
}

/** The 403 of a key whose workspace is suspended, with the headers of its limits. */
export function suspended(auth: Extract<AuthResult, { ok: false; status: 403 }>, headers: Record<string, string>): Admission {
  const { code, message, keyPrefix, workspaceId } = auth;
  return { ok: false, status: 403, code, message, retryAfterS: 0, keyPrefix, workspaceId, headers };
}

/** The admission once the key is known and the limits decided. */
export function admitted(auth: AuthResult & { ok: true }, limits: LimitsResult): Admission {
  if (!limits.ok) {
    return { ...limits, keyPrefix: auth.keyPrefix, workspaceId: auth.workspaceId };
  }
  return { ok: true, keyId: auth.keyId, keyPrefix: auth.keyPrefix, workspaceId: auth.workspaceId, headers: limits.headers };
}

/** On this thread's SQLite ledger, at once. A suspended workspace is refused before its limits count the request. */
export function admitHere(ledger: Ledger, token: string | undefined): Admission {
  const auth = ledger.authenticate(token);
  if (!auth.ok && auth.status === 401) return unauthenticated(auth, token);
  if (!auth.ok) {
    return suspended(auth, ledger.limitHeaders(auth));
  }
  return admitted(auth, ledger.checkLimits(auth));
}
