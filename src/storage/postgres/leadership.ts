import { SQL, type ReservedSQL } from 'bun';

/**
 * The session-level advisory lock the leader holds: svc's own key space (0x7376630000000002: "svc"
 * in ASCII, then 2; the migration lock is 1). Passed as text and cast: a JS number cannot hold it exactly.
 */
export const LEADER_LOCK_KEY = '8319946213264719874';

/** How often a follower tries to take the lead: a dead leader is replaced within about this long. */
const TRY_EVERY_MS = 1000;
/** How often the leader checks that its session (and so its lock) is still there. */
const CHECK_EVERY_MS = 250;

export interface Leadership {
  /** Whether this instance leads now. */
  leads(): boolean;
  /** Stops trying; a leader hands the lock back, so another instance takes over at its next try. */
  stop(): Promise<void>;
}

/**
 * One leader among the instances sharing the PostgreSQL database at `url` (issue 31: the roller,
 * retention and the reconcile scheduler run on the leader only). The leader is the instance whose
 * session holds LEADER_LOCK_KEY. A session-level advisory lock ends with its session: an instance
 * that dies (its socket closed by the kernel) loses it at once, and a follower takes it within
 * TRY_EVERY_MS. The leader checks its session every CHECK_EVERY_MS and steps down as soon as a
 * check fails (the connection was lost or the session ended), so it stops acting as leader before
 * a follower can have taken over, whenever it is the session, not the network, that ended.
 * `onChange` is told each change of role.
 */
export function postgresLeadership(url: string, onChange: (leads: boolean) => void = () => {}, lockKey = LEADER_LOCK_KEY): Leadership {
  // A client of its own, one connection: the lock belongs to that session.
  const client = new SQL({ url, max: 1 });
  let session: ReservedSQL | null = null;
  let leading = false;
  let stopped = false;
  let timer: Timer | null = null;
  /** The step under way: stop() waits for it, or a session it reserved meanwhile would stay reserved and keep the client from closing. */
  let running: Promise<void> | null = null;

  const become = (leads: boolean) => {
    if (leading === leads) return;
    leading = leads;
    onChange(leads);
  };
  const dropSession = async () => {
    const held = session;
    session = null;
    become(false);
    // Released inside no transaction, the connection returns to the pool; a broken one is closed.
    await held?.release();
  };
  const schedule = (ms: number) => {
    if (!stopped) timer = setTimeout(() => void (running = step()), ms);
  };
  async function step(): Promise<void> {
    try {
      if (leading) {
        await session!`SELECT 1`;
        schedule(CHECK_EVERY_MS);
        return;
      }
      session ??= await client.reserve();
      const [row] = await session`SELECT pg_try_advisory_lock(${lockKey}::bigint) AS taken`;
      if (stopped) return;
      if (row.taken) {
        become(true);
        schedule(CHECK_EVERY_MS);
      } else schedule(TRY_EVERY_MS);
    } catch {
      // The session is gone (and the lock with it) or the server cannot be reached: follow, try again.
      await dropSession().catch(() => {});
      schedule(TRY_EVERY_MS);
    }
  }
  running = step();

  return {
    leads: () => leading,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      // A step under way finishes first (it schedules no other): a session it reserved is then
      // released below. Without the wait, a SIGTERM during the first try hung the stop (seen in CI).
      await running;
      const held = session;
      if (leading && held) await held`SELECT pg_advisory_unlock(${lockKey}::bigint)`.catch(() => {});
      await dropSession().catch(() => {});
      // Closing the client ends the session: no lock outlives stop(), not even when unlocking failed.
      await client.close();
    },
  };
}
