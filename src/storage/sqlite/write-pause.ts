import type { Database } from 'bun:sqlite';
import { createWritePause, type WritePause } from '../../lib/write-pause.ts';

/** One pause per connection, shared by its writers and its checkpointer (collected with the connection). */
const pauses = new WeakMap<Database, WritePause>();

export function writePause(sqlite: Database): WritePause {
  let pause = pauses.get(sqlite);
  if (!pause) {
    pause = createWritePause();
    pauses.set(sqlite, pause);
  }
  return pause;
}
