/**
 * For kill -9 tests: `connections` clients send requests in a loop (each with a fresh id from
 * `send`) until the server is gone; `kill` is called after `loadMs`. Resolves with the ids the
 * server acknowledged (answered `okStatus`) and how many other answers came back.
 */
export async function loadThenKill(options: {
  send: (id: string) => Promise<Response>;
  okStatus: number;
  kill: () => void;
  loadMs?: number;
  connections?: number;
}): Promise<{ acknowledged: string[]; failed: number }> {
  const { send, okStatus, kill, loadMs = 1_500, connections = 32 } = options;
  const acknowledged: string[] = [];
  let failed = 0;
  let sequence = 0;
  const stopAt = Date.now() + loadMs;
  const worker = async (connection: number) => {
    while (Date.now() < stopAt + 5_000) {
      const id = `c${connection}-${sequence++}`;
      try {
        const response = await send(id);
        if (response.status === okStatus) acknowledged.push(id);
        else failed++;
      } catch {
        return; // the server is gone
      }
    }
  };
  const load = Array.from({ length: connections }, (_, i) => worker(i));
  await Bun.sleep(loadMs);
  kill();
  await Promise.all(load);
  return { acknowledged, failed };
}
