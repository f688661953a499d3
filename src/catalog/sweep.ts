/**
 * One step of the sweep after a complete sync pass: the next items in id order, each flagged when
 * the pass did not list it. The sweep goes through a catalogue in such steps (never all its ids at
 * once): `through` is the last id looked at, null once there are no more.
 */
export interface UnlistedChunk {
  unlisted: string[];
  through: string | null;
}

export function unlistedChunk(rows: { id: string; unlisted: unknown }[], limit: number): UnlistedChunk {
  return { unlisted: rows.filter((row) => row.unlisted).map((row) => row.id), through: rows.length < limit ? null : rows.at(-1)!.id };
}
