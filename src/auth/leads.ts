import { and, desc, eq, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db/index.ts';
import { leads, type LeadRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { randomSecret, safeEqual, sha256Hex } from '../lib/crypto.ts';
import { ApiError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import type { KeysetCursor } from '../lib/query.ts';
import { isoOrNull } from '../lib/time.ts';
import { createVerifiedCache } from './verified-cache.ts';

export interface Lead {
  id: string;
  email: string;
  verified: boolean;
  tokenActive: boolean;
  createdAt: string;
  verifiedAt: string | null;
}

/** Filters of the lead listing; all optional. */
export interface LeadFilter {
  /** Part of the address, any case (`@example.com` finds a domain's leads). */
  email?: string | undefined;
  verified?: boolean | undefined;
  /** Whether the lead holds a token that authenticates (not revoked). */
  active?: boolean | undefined;
}

/** Generous enough for any real address, strict enough to refuse junk. */
const EMAIL_PATTERN = /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function normalizeEmail(email: string): string | null {
  const trimmed = email.trim().toLowerCase();
  return trimmed.length <= 254 && EMAIL_PATTERN.test(trimmed) ? trimmed : null;
}

function toLead(row: LeadRow): Lead {
  return {
    id: row.id,
    email: row.email,
    verified: row.verified,
    tokenActive: row.tokenHash !== null,
    createdAt: new Date(row.createdAt).toISOString(),
    verifiedAt: isoOrNull(row.verifiedAt),
  };
}

/** Leads known to have sent a scan, so later scans skip the write; cleared when full (the write is idempotent). */
const SCAN_SEEN_MEMO = 10_000;
/** Leads found by token kept in memory (src/auth/verified-cache.ts). */
const FOUND_BY_TOKEN = 10_000;

export function createLeadStore(db: Db, clock: Clock) {
  const byTokenHash = db.select().from(leads).where(eq(leads.tokenHash, sql.placeholder('hash'))).prepare();
  const markFirstScan = db
    .update(leads)
    .set({ firstScanAt: sql`${sql.placeholder('now')}` })
    .where(and(eq(leads.id, sql.placeholder('id')), isNull(leads.firstScanAt)))
    .prepare();
  const scanSeen = new Set<string>();
  // A token is looked up on every mode-1 probe request: a found lead is reused until leads changes.
  const foundByToken = createVerifiedCache<Lead>(db.$client, 'leads', FOUND_BY_TOKEN);

  const issueToken = (id: string): string | null => {
    const apiToken = randomSecret(32);
    const row = db
      .update(leads)
      .set({ tokenHash: sha256Hex(apiToken), tokenIssuedAt: clock.now(), tokenRevokedAt: null })
      .where(eq(leads.id, id))
      .returning({ id: leads.id })
      .get();
    return row ? apiToken : null;
  };

  /** Insert a lead with a fresh id and token; `row` is undefined when the email is already registered (nothing is written). */
  function insertLead(email: string, verified: boolean): { id: string; apiToken: string; row: LeadRow | undefined } {
    const normalized = normalizeEmail(email);
    if (!normalized) throw new ApiError(400, 'invalid_email', 'email must be a valid address of at most 254 characters');
    const id = newId();
    const apiToken = randomSecret(32);
    const now = clock.now();
    const row = db
      .insert(leads)
      .values({ id, email: normalized, verified, verifiedAt: verified ? now : null, tokenHash: sha256Hex(apiToken), tokenIssuedAt: now, createdAt: now })
      .onConflictDoNothing({ target: leads.email })
      .returning()
      .get();
    return { id, apiToken, row };
  }

  return {
    /** A new lead (unverified unless `verified`) with its first token; 409 if the email exists (operators: CLI and admin API). */
    create(email: string, verified = false): { lead: Lead; apiToken: string } {
      const { apiToken, row } = insertLead(email, verified);
      if (!row) throw new ApiError(409, 'lead_exists', 'a lead with this email already exists; ask an administrator to rotate its token');
      return { lead: toLead(row), apiToken };
    },

    /**
     * Public sign-up (the API and the start page's form): an email that is already registered gets
     * the same answer as a new one, so sign-up tells no one whether an address is known. For a known
     * email nothing is written or changed: the id and token are fresh random values that name and
     * authenticate nothing, and the lead keeps its own token (the operator rotates it if it was lost).
     * Both cases run the same statement and draw the same random values, so they take the same time.
     */
    signUp(email: string): { id: string; apiToken: string } {
      const { id, apiToken } = insertLead(email, false);
      return { id, apiToken };
    },

    get(id: string): Lead | null {
      const row = db.select().from(leads).where(eq(leads.id, id)).get();
      return row ? toLead(row) : null;
    },

    verify(id: string): Lead | null {
      const row = db
        .update(leads)
        .set({ verified: true, verifiedAt: sql`coalesce(${leads.verifiedAt}, ${clock.now()})` })
        .where(eq(leads.id, id))
        .returning()
        .get();
      return row ? toLead(row) : null;
    },

    /** Issues a new token; the previous one stops authenticating immediately. */
    rotate(id: string): string | null {
      return issueToken(id);
    },

    revoke(id: string): Lead | null {
      const row = db
        .update(leads)
        .set({ tokenHash: null, tokenRevokedAt: clock.now() })
        .where(eq(leads.id, id))
        .returning()
        .get();
      return row ? toLead(row) : null;
    },

    /** A page of leads, newest first, keyset-paged over (createdAt, id). */
    list(filter: LeadFilter, after: KeysetCursor | null, limit: number): { items: Lead[]; next: KeysetCursor | null } {
      const rows = db
        .select()
        .from(leads)
        .where(
          and(
            filter.email ? sql`instr(${leads.email}, ${filter.email.trim().toLowerCase()}) > 0` : undefined,
            filter.verified === undefined ? undefined : eq(leads.verified, filter.verified),
            filter.active === undefined ? undefined : filter.active ? isNotNull(leads.tokenHash) : isNull(leads.tokenHash),
            after ? or(lt(leads.createdAt, after.at), and(eq(leads.createdAt, after.at), lt(leads.id, after.id))) : undefined,
          ),
        )
        .orderBy(desc(leads.createdAt), desc(leads.id))
        .limit(limit + 1)
        .all();
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return { items: page.map(toLead), next: rows.length > limit && last ? { at: last.createdAt, id: last.id } : null };
    },

    /** A scan sent with the lead's token was committed: the lead is in use, so retention keeps it. */
    noteScan(id: string): void {
      if (scanSeen.has(id)) return;
      markFirstScan.run({ id, now: clock.now() });
      if (scanSeen.size >= SCAN_SEEN_MEMO) scanSeen.clear();
      scanSeen.add(id);
    },

    /** The lead holding this token, or null (unknown, rotated away or revoked); in memory while the database is unchanged. */
    findByToken(token: string): Lead | null {
      if (token.length < 43 || token.length > 256) return null;
      const hash = sha256Hex(token);
      return foundByToken.get(hash, () => {
        const row = byTokenHash.get({ hash });
        if (!row || row.tokenHash === null || !safeEqual(row.tokenHash, hash)) return null;
        return toLead(row);
      });
    },
  };
}

export type LeadStore = ReturnType<typeof createLeadStore>;
