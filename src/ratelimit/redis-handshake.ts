/**
 * Why Redis closed a new connection, when Bun's client says only "Connection closed": the client
 * ends the connection without passing on the server's answer when its handshake (HELLO 3, with the
 * URL's credentials) is refused, so a wrong password, a missing one and a Redis too old for RESP3
 * all read as a network failure. One plain connection asks the same, one command at a time, and
 * names what Redis refused. The answer never holds the password (Redis does not repeat it, and
 * `scrub` cuts it out should it ever).
 */

const NEWLINE = '\r\n';
/** The most of an error reply kept in a log line. */
const REPLY_CHARS = 200;

/** A command in RESP, as every Redis reads it. */
const command = (args: string[]) => `*${args.length}${NEWLINE}${args.map((arg) => `$${Buffer.byteLength(arg)}${NEWLINE}${arg}${NEWLINE}`).join('')}`;

/** What an error reply (its first line, `-CODE text`) says about the handshake. */
function refusal(line: string, asked: 'AUTH' | 'HELLO', scrub: (text: string) => string): string {
  const reply = scrub(line.slice(1)).slice(0, REPLY_CHARS);
  const code = reply.split(' ', 1)[0];
  if (code === 'WRONGPASS' || (asked === 'AUTH' && /invalid password/i.test(reply))) return `Redis refused the user name or password in the URL (${reply})`;
  if (code === 'NOAUTH') return `Redis asks for a password and the URL gives none (${reply})`;
  if (asked === 'HELLO' && /unknown command/i.test(reply)) return `Redis does not know HELLO: svc needs Redis 6 or newer (${reply})`;
  return `Redis refused the connection's ${asked} (${reply})`;
}

/**
 * Asks Redis at `url` what the client's handshake asks (AUTH with the URL's credentials when it has
 * a password, then HELLO 3) and answers what it refused; null when it refused nothing, or could not
 * be asked within `timeoutMs` (the client's own error then stands).
 */
export async function handshakeRefusal(url: string, timeoutMs: number, scrub: (text: string) => string): Promise<string | null> {
  const target = new URL(url);
  let received = '';
  let waiting: ((line: string | null) => void) | null = null;
  const answer = (line: string | null) => {
    const resolve = waiting;
    waiting = null;
    resolve?.(line);
  };
  const deliver = () => {
    const end = received.indexOf(NEWLINE);
    if (end < 0 || !waiting) return;
    // Only a reply's first line tells success from refusal; the rest (HELLO's map) is not needed.
    const line = received.slice(0, end);
    received = '';
    answer(line);
  };
  const decoder = new TextDecoder();
  let timer: Timer | undefined;
  let socket: Bun.Socket<undefined> | null = null;
  /** Set once the answer is given (or given up on): a connection that opens later is ended at once. */
  let over = false;
  const asking = (async () => {
    socket = await Bun.connect({
      hostname: target.hostname.replace(/^\[|\]$/g, ''),
      port: Number(target.port || 6379),
      tls: target.protocol === 'rediss:',
      socket: {
        data(_socket, chunk) {
          received += decoder.decode(chunk, { stream: true });
          deliver();
        },
        close: () => answer(null),
        error: () => answer(null),
      },
    });
    const connected = socket;
    if (over) {
      connected.end();
      return null;
    }
    const ask = (args: string[]) =>
      new Promise<string | null>((resolve) => {
        waiting = resolve;
        connected.write(command(args));
        deliver();
      });
    const password = decodeURIComponent(target.password);
    if (password) {
      const user = decodeURIComponent(target.username);
      const line = await ask(user ? ['AUTH', user, password] : ['AUTH', password]);
      if (line?.startsWith('-')) return refusal(line, 'AUTH', scrub);
      if (line === null) return null;
    }
    const line = await ask(['HELLO', '3']);
    return line?.startsWith('-') ? refusal(line, 'HELLO', scrub) : null;
  })();
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  try {
    return await Promise.race([asking.catch(() => null), late]);
  } finally {
    over = true;
    clearTimeout(timer);
    (socket as Bun.Socket<undefined> | null)?.end();
  }
}
