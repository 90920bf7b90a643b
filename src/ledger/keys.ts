/**
 * API keys: `edf_<keyId>_<secret><checksum>`, e.g. `edf_0Hq4W1kz7sXa_<22 chars><6 chars>`.
 *
 * - `edf_` makes a leaked key easy to scan for; `keyId` (12 base62) is public and names the key
 *   in listings and logs; the secret is 22 base62 characters (131 bits of randomness); the
 *   checksum is the CRC-32 of everything before it in 6 base62 digits, so a mistyped or
 *   truncated key is refused before any lookup.
 * - Only the SHA-256 of the whole key is stored. The plaintext exists once, in the answer to
 *   `create`.
 * - A key stops working when revoked, when it expires (refused from `expires_at` on), or when
 *   the member who created it leaves the workspace (even if they join again later).
 */
import { hash, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Clock } from './clock.ts';
import type { Db } from './db.ts';
import { LedgerError } from './errors.ts';
import { base62Fixed, randomBase62 } from './base62.ts';
import type { Member } from './workspaces.ts';

export const KEY_PREFIX = 'edf_';
const KEY_ID_CHARS = 12;
const SECRET_CHARS = 22;
const CHECKSUM_CHARS = 6;
const KEY_RE = /^edf_([0-9A-Za-z]{12})_[0-9A-Za-z]{22}([0-9A-Za-z]{6})$/;
export const KEY_LENGTH = KEY_PREFIX.length + KEY_ID_CHARS + 1 + SECRET_CHARS + CHECKSUM_CHARS;

export function keyChecksum(body: string): string {
  return base62Fixed(crc32(body) >>> 0, CHECKSUM_CHARS);
}

/** The key id of a well-formed key with a correct checksum, else null. Does no lookup. */
export function parseKey(raw: string): string | null {
  if (typeof raw !== 'string' || raw.length !== KEY_LENGTH) return null;
  const m = KEY_RE.exec(raw);
  if (!m) return null;
  if (keyChecksum(raw.slice(0, KEY_LENGTH - CHECKSUM_CHARS)) !== m[2]) return null;
  return m[1];
}

/** SHA-256 of the key's UTF-8, as stored. One-shot `crypto.hash` (Node >= 20.12): half the cost of a Hash object, on every request. */
export function hashKey(raw: string): Buffer {
  return hash('sha256', raw, 'buffer');
}

/** What may be shown and logged of a key: `edf_<keyId>`. */
export function keyPrefix(keyId: string): string {
  return `${KEY_PREFIX}${keyId}`;
}

/** The token of an `Authorization: Bearer <token>` header value, or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const m = /^Bearer[ ]+(\S+)[ ]*$/i.exec(authorization);
  return m ? m[1] : undefined;
}

export type KeyStatus = 'active' | 'revoked' | 'expired' | 'creator_left';

/** A key as listings show it: never the secret, never its hash. */
export interface KeyInfo {
  keyId: string;
  /** `edf_<keyId>_…`: the visible start of the key. */
  prefix: string;
  name: string | null;
  workspaceId: string;
  memberId: string;
  memberEmail: string;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  status: KeyStatus;
}

/** What authentication needs of a key, read in one indexed lookup. */
export interface KeyRecord {
  keyId: string;
  workspaceId: string;
  secretSha256: Buffer;
  expiresAt: number | null;
  revokedAt: number | null;
  memberLeftAt: number | null;
  workspaceSuspendedAt: number | null;
}

/** A key's row joined with its member's, as both ledgers select it. */
export interface KeyInfoRow {
  id: string;
  name: string | null;
  workspace_id: string;
  member_id: string;
  email: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  left_at: number | null;
}

export function keyStatus(k: { revokedAt: number | null; expiresAt: number | null; memberLeftAt: number | null }, now: number): KeyStatus {
  if (k.revokedAt !== null) return 'revoked';
  if (k.expiresAt !== null && now >= k.expiresAt) return 'expired';
  if (k.memberLeftAt !== null) return 'creator_left';
  return 'active';
}

const INFO_SELECT = `SELECT k.id, k.name, k.workspace_id, k.member_id, m.email, k.created_at, k.expires_at, k.revoked_at, m.left_at
  FROM api_keys k JOIN members m ON m.id = k.member_id`;

/** A new key for a current member, its options checked; what any store of keys writes. */
export function newKey(
  member: Member,
  options: { name?: string | null; expiresAt?: number | null },
  now: number,
): { key: string; keyId: string; name: string | null; expiresAt: number | null } {
  if (member.leftAt !== null) throw new LedgerError('invalid_state', `Member ${member.id} left the workspace; they cannot create keys.`);
  const name = options.name ?? null;
  if (name !== null && (typeof name !== 'string' || name.length < 1 || name.length > 100)) {
    throw new RangeError('A key name has 1 to 100 characters.');
  }
  const expiresAt = options.expiresAt ?? null;
  if (expiresAt !== null && (!Number.isSafeInteger(expiresAt) || expiresAt <= now)) {
    throw new RangeError(`expiresAt must be a time in the future (ms since epoch), got ${String(expiresAt)}.`);
  }
  const keyId = randomBase62(KEY_ID_CHARS);
  const body = `${KEY_PREFIX}${keyId}_${randomBase62(SECRET_CHARS)}`;
  return { key: body + keyChecksum(body), keyId, name, expiresAt };
}

/**
 * Whether a key that was found speaks for its workspace at `now`: 401 when revoked, expired or
 * its creator left, 403 when the workspace is suspended. `presented` is the SHA-256 of the key sent.
 */
export function keyVerdict(key: KeyRecord, presented: Buffer, now: number): AuthResult {
  if (!timingSafeEqual(key.secretSha256, presented)) return unauthorized('Unknown API key.');
  if (key.revokedAt !== null) return unauthorized('This API key was revoked.');
  if (key.expiresAt !== null && now >= key.expiresAt) {
    return unauthorized(`This API key expired at ${new Date(key.expiresAt).toISOString()}.`);
  }
  if (key.memberLeftAt !== null) return unauthorized('This API key stopped working when the member who created it left the workspace.');
  if (key.workspaceSuspendedAt !== null) {
    return {
      ok: false,
      status: 403,
      code: 'forbidden',
      message: 'This workspace is suspended.',
      keyId: key.keyId,
      keyPrefix: keyPrefix(key.keyId),
      workspaceId: key.workspaceId,
    };
  }
  return { ok: true, keyId: key.keyId, keyPrefix: keyPrefix(key.keyId), workspaceId: key.workspaceId };
}

export type AuthResult =
  | { ok: true; keyId: string; keyPrefix: string; workspaceId: string }
  | { ok: false; status: 401; code: 'unauthorized'; message: string }
  /** A valid key of a suspended workspace: known, so its answer can carry the workspace's headers. */
  | { ok: false; status: 403; code: 'forbidden'; message: string; keyId: string; keyPrefix: string; workspaceId: string };

export const unauthorized = (message: string): AuthResult => ({ ok: false, status: 401, code: 'unauthorized', message });

/**
 * The first answer of `authenticate`, before any lookup: 401 for a missing or malformed key,
 * else the key id to look up.
 */
export function keyIdOf(rawKey: string | undefined): AuthResult | string {
  if (rawKey === undefined || rawKey === '') return unauthorized('Missing API key: send the header Authorization: Bearer <API_KEY>.');
  return parseKey(rawKey) ?? unauthorized('Malformed API key: expected the whole key as it was shown at creation (edf_…).');
}

export class Keys {
  private readonly insert;
  private readonly selectRecord;
  private readonly selectInfo;
  private readonly selectInfos;
  private readonly updateRevoked;

  constructor(
    db: Db,
    private readonly now: Clock,
  ) {
    this.insert = db.prepare(`INSERT INTO api_keys (id, workspace_id, member_id, name, secret_sha256, created_at, expires_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)`);
    this.selectRecord = db.prepare<
      [string],
      {
        id: string;
        workspace_id: string;
        secret_sha256: Buffer;
        expires_at: number | null;
        revoked_at: number | null;
        left_at: number | null;
        suspended_at: number | null;
      }
    >(
      `SELECT k.id, k.workspace_id, k.secret_sha256, k.expires_at, k.revoked_at, m.left_at, w.suspended_at
         FROM api_keys k JOIN members m ON m.id = k.member_id JOIN workspaces w ON w.id = k.workspace_id
        WHERE k.id = ?`,
    );
    this.selectInfo = db.prepare<[string], KeyInfoRow>(`${INFO_SELECT} WHERE k.id = ?`);
    this.selectInfos = db.prepare<[string], KeyInfoRow>(`${INFO_SELECT} WHERE k.workspace_id = ? ORDER BY k.created_at, k.id`);
    this.updateRevoked = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  }

  /** Creates a key for a current member. The plaintext is in the answer and nowhere else. */
  create(member: Member, options: { name?: string | null; expiresAt?: number | null }): { key: string; keyId: string; prefix: string } {
    const now = this.now();
    const made = newKey(member, options, now);
    this.insert.run(made.keyId, member.workspaceId, member.id, made.name, hashKey(made.key), now, made.expiresAt);
    return { key: made.key, keyId: made.keyId, prefix: keyPrefix(made.keyId) };
  }

  lookup(keyId: string): KeyRecord | undefined {
    const r = this.selectRecord.get(keyId);
    if (!r) return undefined;
    return {
      keyId: r.id,
      workspaceId: r.workspace_id,
      secretSha256: r.secret_sha256,
      expiresAt: r.expires_at,
      revokedAt: r.revoked_at,
      memberLeftAt: r.left_at,
      workspaceSuspendedAt: r.suspended_at,
    };
  }

  info(keyId: string): KeyInfo {
    const r = this.selectInfo.get(keyId);
    if (!r) throw new LedgerError('not_found', `No API key ${keyId}.`);
    return this.toInfo(r);
  }

  list(workspaceId: string): KeyInfo[] {
    return this.selectInfos.all(workspaceId).map((r) => this.toInfo(r));
  }

  /** Revokes the key (a second revoke changes nothing) and returns it as it now is. */
  revoke(keyId: string): KeyInfo {
    this.info(keyId);
    this.updateRevoked.run(this.now(), keyId);
    return this.info(keyId);
  }

  private toInfo(r: KeyInfoRow): KeyInfo {
    return toKeyInfo(r, this.now());
  }
}

/** What a key's row says of it at `now` (never its secret). */
export function toKeyInfo(r: KeyInfoRow, now: number): KeyInfo {
  return {
    keyId: r.id,
    prefix: `${keyPrefix(r.id)}_…`,
    name: r.name,
    workspaceId: r.workspace_id,
    memberId: r.member_id,
    memberEmail: r.email,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    status: keyStatus({ revokedAt: r.revoked_at, expiresAt: r.expires_at, memberLeftAt: r.left_at }, now),
  };
}
