import type { Clock } from '../lib/clock.ts';
import { randomSecret, safeEqual, sha256Hex } from '../lib/crypto.ts';
import { emailSearchTerm, normalizeEmail } from '../lib/email.ts';
import { ApiError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import type { MaybePromise } from '../lib/maybe-promise.ts';
import type { KeysetCursor } from '../lib/query.ts';
import { isoOrNull } from '../lib/time.ts';
import type { ChangeFeed } from '../storage/changes.ts';
import type { LeadRecords } from '../storage/auth.ts';
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

/** A lead as storage keeps it (src/storage/auth.ts): the SHA-256 of its token, never the token; times in epoch ms. */
export interface LeadRecord {
  id: string;
  /** Normalised (lib/email.ts). */
  email: string;
  repeatOf: string | null;
  verified: boolean;
  /** Null once revoked. */
  tokenHash: string | null;
  tokenIssuedAt: number | null;
  tokenRevokedAt: number | null;
  verifiedAt: number | null;
  /** When a scan sent with its token was first committed; null while it has sent none. */
  firstScanAt: number | null;
  createdAt: number;
}

/** A lead about to be stored: `repeatOf` is decided by storage (LeadRecords.addSignUp); it has sent no scan. */
export type NewLeadRecord = Omit<LeadRecord, 'repeatOf' | 'tokenRevokedAt' | 'firstScanAt'>;

/** The lead listing's filters as storage applies them. */
export interface LeadQuery {
  /** Found anywhere in the stored (lower-case) address, as given: no pattern characters. */
  emailContains?: string | undefined;
  verified?: boolean | undefined;
  /** Whether the lead holds a token (tokenHash not null). */
  tokenActive?: boolean | undefined;
}

function toLead(record: LeadRecord): Lead {
  return {
    id: record.id,
    email: record.email,
    verified: record.verified,
    tokenActive: record.tokenHash !== null,
    createdAt: new Date(record.createdAt).toISOString(),
    verifiedAt: isoOrNull(record.verifiedAt),
    repeatOf: record.repeatOf,
  };
}

/** Leads known to have sent a scan, so later scans skip the write; cleared when full (the write is idempotent). */
const SCAN_SEEN_MEMO = 10_000;
/** Leads found by token kept in memory (src/auth/verified-cache.ts). */
const FOUND_BY_TOKEN = 10_000;

/** `changes` tells the leads found by token and kept in memory when leads may have changed. */
export function createLeadStore(leads: LeadRecords, changes: ChangeFeed, clock: Clock) {
  const scanSeen = new Set<string>();
  // A token is looked up on every mode-1 probe request: a found lead is reused until leads changes.
  const foundByToken = createVerifiedCache<Lead>(changes.tableStamp(['leads']), FOUND_BY_TOKEN);

  /** A lead to store with a fresh id and token, unverified unless `verified`. */
  const newLead = (email: string, verified: boolean): { apiToken: string; lead: NewLeadRecord } => {
    const apiToken = randomSecret(32);
    const now = clock.now();
    return {
      apiToken,
      lead: { id: newId(), email: normalizeEmail(email), verified, verifiedAt: verified ? now : null, tokenHash: sha256Hex(apiToken), tokenIssuedAt: now, createdAt: now },
    };
  };

  /** The lead stored with this token's hash, compared in constant time, or null. */
  const byTokenHash = async (hash: string): Promise<Lead | null> => {
    const record = await leads.byTokenHash(hash);
    if (!record || record.tokenHash === null || !safeEqual(record.tokenHash, hash)) return null;
    return toLead(record);
  };

  return {
    /** A new first lead (unverified unless `verified`) with its token; 409 if the email has one (operators: CLI). */
    async create(email: string, verified = false): Promise<{ lead: Lead; apiToken: string }> {
      const { apiToken, lead } = newLead(email, verified);
      const record = await leads.addFirst(lead);
      if (!record) throw new ApiError(409, 'lead_exists', 'a lead with this email already exists; ask an administrator to rotate its token');
      return { lead: toLead(record), apiToken };
    },

    /**
     * Public sign-up (the API and the start page's form). Every sign-up gets a new unverified lead
     * of its own whose token works at once, so a known email gets exactly what a new one gets and
     * sign-up tells no one whether an address is known. A sign-up with an email already registered
     * is a repeat: it names the first lead in `repeatOf` for the operator and changes nothing of it
     * (its token, verification and scans stay its own), so no sign-up can take over or lock out
     * an existing lead.
     */
    async signUp(email: string): Promise<{ id: string; apiToken: string; email: string }> {
      const { apiToken, lead } = newLead(email, false);
      const record = await leads.addSignUp(lead);
      return { id: record.id, apiToken, email: record.email };
    },

    async get(id: string): Promise<Lead | null> {
      const record = await leads.get(id);
      return record && toLead(record);
    },

    async verify(id: string): Promise<Lead | null> {
      const record = await leads.verify(id, clock.now());
      return record && toLead(record);
    },

    /** Issues a new token; the previous one stops authenticating immediately. */
    async rotate(id: string): Promise<string | null> {
      const apiToken = randomSecret(32);
      return (await leads.replaceToken(id, sha256Hex(apiToken), clock.now())) ? apiToken : null;
    },

    async revoke(id: string): Promise<Lead | null> {
      const record = await leads.revokeToken(id, clock.now());
      return record && toLead(record);
    },

    /** A page of leads, newest first, keyset-paged over (createdAt, id). */
    async list(filter: LeadFilter, after: KeysetCursor | null, limit: number): Promise<{ items: Lead[]; next: KeysetCursor | null }> {
      const query: LeadQuery = {
        emailContains: filter.email === undefined ? undefined : emailSearchTerm(filter.email),
        verified: filter.verified,
        tokenActive: filter.active,
      };
      const records = await leads.list(query, after, limit + 1);
      const page = records.slice(0, limit);
      const last = page[page.length - 1];
      return { items: page.map(toLead), next: records.length > limit && last ? { at: last.createdAt, id: last.id } : null };
    },

    /**
     * A scan sent with the lead's token was committed: the lead is in use, so retention keeps it.
     * Written once per lead (a promise then); a lead known to have sent one costs nothing.
     */
    noteScan(id: string): MaybePromise<void> {
      if (scanSeen.has(id)) return;
      return leads.noteFirstScan(id, clock.now()).then(() => {
        if (scanSeen.size >= SCAN_SEEN_MEMO) scanSeen.clear();
        scanSeen.add(id);
      });
    },

    /** The lead holding this token, or null (unknown, rotated away or revoked); in memory while leads is unchanged (then without a promise). */
    findByToken(token: string): MaybePromise<Lead | null> {
      if (token.length < 43 || token.length > 256) return null;
      const hash = sha256Hex(token);
      return foundByToken.get(hash, () => byTokenHash(hash));
    },
  };
}

export type LeadStore = ReturnType<typeof createLeadStore>;
