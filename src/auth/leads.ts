import { and, desc, eq, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db/index.ts';
import { leads, type LeadRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { randomSecret, safeEqual, sha256Hex } from '../lib/crypto.ts';
import { emailSearchTerm, normalizeEmail } from '../lib/email.ts';
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
  /** The id of the email's first lead when this lead is a repeat sign-up of an address already registered; null for the first. */
  repeatOf: string | null;
}

/** Filters of the lead listing; all optional. */
export interface LeadFilter {
  /** Part of the address, any case (`@example.com` finds a domain's leads). */
  email?: string | undefined;
  verified?: boolean | undefined;
  /** Whether the lead holds a token that authenticates (not revoked). */
  active?: boolean | undefined;
}

function toLead(row: LeadRow): Lead {
  return {
    id: row.id,
    email: row.email,
    verified: row.verified,
    tokenActive: row.tokenHash !== null,
    createdAt: new Date(row.createdAt).toISOString(),
    verifiedAt: isoOrNull(row.verifiedAt),
    repeatOf: row.repeatOf,
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

  /**
   * Insert a lead with a fresh id and token. `asRepeat`: a public sign-up, which becomes a repeat of
   * the email's first lead when there is one (found in the same statement, so both cases run the same
   * work); otherwise the row is a first lead and `row` is undefined when the email has one already.
   */
  function insertLead(email: string, verified: boolean, asRepeat: boolean): { apiToken: string; row: LeadRow | undefined } {
    const normalized = normalizeEmail(email);
    const apiToken = randomSecret(32);
    const now = clock.now();
    const row = db
      .insert(leads)
      .values({
        id: newId(),
        email: normalized,
        repeatOf: asRepeat ? sql`(SELECT ${leads.id} FROM ${leads} WHERE ${leads.email} = ${normalized} AND ${leads.repeatOf} IS NULL)` : null,
        verified,
        verifiedAt: verified ? now : null,
        tokenHash: sha256Hex(apiToken),
        tokenIssuedAt: now,
        createdAt: now,
      })
      .onConflictDoNothing()
      .returning()
      .get();
    return { apiToken, row };
  }

  return {
    /** A new first lead (unverified unless `verified`) with its token; 409 if the email has one (operators: CLI). */
    create(email: string, verified = false): { lead: Lead; apiToken: string } {
      const { apiToken, row } = insertLead(email, verified, false);
      if (!row) throw new ApiError(409, 'lead_exists', 'a lead with this email already exists; ask an administrator to rotate its token');
      return { lead: toLead(row), apiToken };
    },

    /**
     * Public sign-up (the API and the start page's form). Every sign-up gets a new unverified lead
     * of its own whose token works at once, so a known email gets exactly what a new one gets and
     * sign-up tells no one whether an address is known. A sign-up with an email already registered
     * is a repeat: it names the first lead in `repeatOf` for the operator and changes nothing of it
     * (its token, verification and scans stay its own), so no sign-up can take over or lock out
     * an existing lead.
     */
    signUp(email: string): { id: string; apiToken: string; email: string } {
      const { apiToken, row } = insertLead(email, false, true);
      if (!row) throw new Error('a sign-up inserted no lead');
      return { id: row.id, apiToken, email: row.email };
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
            filter.email !== undefined ? sql`instr(${leads.email}, ${emailSearchTerm(filter.email)}) > 0` : undefined,
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
