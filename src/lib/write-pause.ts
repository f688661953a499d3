/**
 * A short pause of the writes of one connection that can wait. Under steady writes a WAL
 * checkpoint never catches up with the last COMMIT, so no writer ever starts the log over and it
 * grows without limit; the checkpointer (db/checkpoint.ts) pauses writes for the time its
 * checkpoint copies the last pages. Writers that can wait (the scan writer's group commits) hold
 * their batch until the pause ends: the event loop goes on serving requests, only those commits wait.
 */
export interface WritePause {
  readonly paused: boolean;
  pause(): void;
  /** Ends the pause and runs every function queued by `afterPause`. */
  resume(): void;
  /** Runs `fn` once the pause ends (at once when there is none). */
  afterPause(fn: () => void): void;
  /**
   * A flag in shared memory that holds 1 while writes are paused, for the writers of another thread
   * (the roller's Worker deletes scans for retention): `sharedWritePause` reads it there.
   */
  readonly shared: Int32Array;
}

/** How often a Worker's writer looks whether the pause it waits out has ended. */
const SHARED_PAUSE_POLL_MS = 5;

/** The pause of a connection of another thread, seen through its shared flag (WritePause.shared). */
export function sharedWritePause(flag: Int32Array): Pick<WritePause, 'paused' | 'afterPause'> {
  const paused = () => Atomics.load(flag, 0) === 1;
  return {
    get paused() {
      return paused();
    },
    afterPause(fn) {
      if (!paused()) return fn();
      const timer = setInterval(() => {
        if (paused()) return;
        clearInterval(timer);
        fn();
      }, SHARED_PAUSE_POLL_MS);
    },
  };
}

/** A pause of the writes that can wait, with the shared flag other threads' writers read. */
export function createWritePause(): WritePause {
  let paused = false;
  let waiting: (() => void)[] = [];
  const shared = new Int32Array(new SharedArrayBuffer(4));
  return {
    shared,
    get paused() {
      return paused;
    },
    pause() {
      paused = true;
      Atomics.store(shared, 0, 1);
    },
    resume() {
      paused = false;
      Atomics.store(shared, 0, 0);
      const run = waiting;
      waiting = [];
      for (const fn of run) fn();
    },
    afterPause(fn) {
      if (paused) waiting.push(fn);
      else fn();
    },
  };
}
