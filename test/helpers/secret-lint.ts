import { parse } from '@babel/parser';

/**
 * The rule "every comparison of a secret goes through safeEqual" (src/lib/crypto.ts) as an AST check.
 * Timing cannot be asserted in a test; the rule can.
 *
 * What counts as a secret (a "secret source"):
 * - a name (variable, parameter, property, function) containing one of the words of SECRET_WORDS or
 *   SECRET_WORD_PAIRS, split at camelCase, `_` and `-`: `signature`, `webhookSecret`, `key_hash`,
 *   `rawKey`, `accessToken`, `sessionCookie`, `webhookSecretOf(...)`... (plural `tokens`, the rate
 *   limiter's, is not), unless its last word says it is about the secret, not the secret
 *   (ABOUT_WORDS: `sessionCookieName`, `keyPrefix`, `tokenIssuedAt`);
 * - the result of a function that makes or reveals one: SECRET_FUNCTIONS (`hmacSha256`, `sha256Hex`...)
 *   and the methods of SECRET_METHODS (`.digest()`, `.open()` of the secret box...);
 * - a request header that carries one: `headers.get(...)` of SECRET_HEADERS, or of a header-name
 *   constant whose property is secret-named (`PLATFORM_B_HEADERS.secret`);
 * - anything derived from a secret without losing it: `?? || &&`, `a ? b : c`, `+`, template
 *   literals, string methods that keep the content (`.trim()`, `.slice()`, `.toLowerCase()`...),
 *   indexing (`sig[0]`), and a local variable initialised or assigned from any of these.
 *
 * What counts as a comparison: `=== !== == !=`, the string and buffer methods of COMPARE_METHODS
 * (`startsWith`, `includes`, `equals`, `Buffer.compare`...) and `switch` over a secret. Comparing a
 * secret with `null`, `undefined`, `''`, a number, a boolean, `typeof` or a `.length` only asks whether
 * it is there, not what it is, and is allowed.
 *
 * Not covered (reviewed by hand): secrets passed through a function parameter with a neutral name
 * (the rule is per file and does not follow calls), hash-keyed lookups (`map.get(secret)`; keys and
 * tokens are found by their SHA-256 and then compared with safeEqual). Local names are not scoped: a
 * name assigned a secret anywhere in a file is a secret everywhere in it (this errs towards flagging).
 */
export const SECRET_WORDS = new Set([
  'secret', 'secrets', 'signature', 'signatures', 'sig', 'token', 'password', 'passwd', 'hmac', 'digest',
  'hash', 'credential', 'credentials', 'apikey', 'authorization', 'bearer', 'nonce', 'otp', 'session', 'cookie',
]);
export const SECRET_WORD_PAIRS: [string, string][] = [['api', 'key'], ['raw', 'key'], ['private', 'key'], ['signing', 'key'], ['client', 'key']];
export const SECRET_FUNCTIONS = new Set(['hmacSha256', 'sha256Hex', 'randomSecret', 'createHmac', 'createHash', 'randomBytes']);
export const SECRET_METHODS = new Set(['digest', 'open', 'webhookSecretOf', 'credentialsOf']);
export const SECRET_HEADERS = new Set([
  'authorization', 'x-api-key', 'x-probe-key', 'x-probe-token', 'x-probe-signature', 'x-svc-webhook-secret',
  'x-auth-token', 'x-platform-a-hmac-sha256', 'x-platform-a-access-token', 'x-platform-c-webhook-signature',
]);
export const COMPARE_METHODS = new Set(['startsWith', 'endsWith', 'includes', 'indexOf', 'lastIndexOf', 'localeCompare', 'equals', 'compare', 'search']);
/** Methods whose result still carries the receiver's content. */
const PRESERVING_METHODS = new Set([
  'trim', 'trimStart', 'trimEnd', 'toLowerCase', 'toUpperCase', 'slice', 'substring', 'substr', 'normalize', 'toString',
  'replace', 'replaceAll', 'padStart', 'padEnd', 'at', 'charAt', 'concat', 'split', 'subarray', 'valueOf', 'exec',
]);
/** A predicate about a secret (`verifyBodySignature`, `isToken`) returns a boolean, not the secret. */
const PREDICATE = /^(verify|is|has|check|validate|looks|safe)[A-Z_]/;

export interface Finding {
  file: string;
  line: number;
  column: number;
  code: string;
  why: string;
}

export interface LintResult {
  findings: Finding[];
  /** safeEqual calls, and whether at least one argument was recognised as a secret. */
  safeEqualCalls: { file: string; line: number; code: string; recognised: boolean }[];
}

type Node = { type: string; start?: number | null; end?: number | null; loc?: { start: { line: number; column: number } } | null; [key: string]: any };

function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_\-.]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

/** A name ending in one of these is about a secret, not the secret: `sessionCookieName`, `keyPrefix`, `tokenIssuedAt`. */
const ABOUT_WORDS = new Set(['name', 'names', 'path', 'prefix', 'length', 'at', 'ms', 'seconds', 'minutes', 'ttl', 'count', 'kind', 'type', 'header', 'headers', 'field', 'column', 'scope', 'scopes', 'status']);

export function isSecretName(name: string): boolean {
  const parts = words(name);
  if (ABOUT_WORDS.has(parts[parts.length - 1]!)) return false;
  if (parts.some((w) => SECRET_WORDS.has(w))) return true;
  return SECRET_WORD_PAIRS.some(([a, b]) => parts.some((w, i) => w === a && parts[i + 1] === b));
}

const WRAPPERS = new Set(['TSAsExpression', 'TSNonNullExpression', 'TSSatisfiesExpression', 'TSTypeAssertion', 'ParenthesizedExpression']);
/** The expression under type assertions, parentheses and `await`. */
const unwrap = (node: Node): Node => (WRAPPERS.has(node.type) ? unwrap(node.expression) : node.type === 'AwaitExpression' ? unwrap(node.argument) : node);

const propertyName = (node: Node): string | null => {
  if (!node.computed && node.property?.type === 'Identifier') return node.property.name;
  if (node.property?.type === 'StringLiteral') return node.property.value;
  return null;
};

const calleeName = (callee: Node): string | null => {
  const c = unwrap(callee);
  if (c.type === 'Identifier') return c.name;
  if (c.type === 'MemberExpression' || c.type === 'OptionalMemberExpression') return propertyName(c);
  return null;
};

function* children(node: Node): Generator<Node> {
  for (const key of Object.keys(node)) {
    if (key === 'loc' || key === 'leadingComments' || key === 'trailingComments' || key === 'innerComments' || key === 'extra') continue;
    const value = node[key];
    if (Array.isArray(value)) {
      for (const item of value) if (item && typeof item.type === 'string') yield item;
    } else if (value && typeof value.type === 'string') {
      yield value;
    }
  }
}

function* walk(node: Node): Generator<Node> {
  yield node;
  for (const child of children(node)) yield* walk(child);
}

/** Check one file's source; `file` is only used in the findings. */
export function lintSource(file: string, source: string): LintResult {
  const ast = parse(source, { sourceType: 'module', plugins: ['typescript', 'jsx'], errorRecovery: false }).program as unknown as Node;
  const tainted = new Set<string>();

  const isHeaderRead = (node: Node): boolean => {
    if (calleeName(node.callee) !== 'get' || node.arguments.length !== 1) return false;
    const arg = unwrap(node.arguments[0]);
    if (arg.type === 'StringLiteral') return SECRET_HEADERS.has(arg.value.toLowerCase());
    if (arg.type === 'MemberExpression') return isSecretName(propertyName(arg) ?? '');
    return false;
  };

  /** Does `node` evaluate to a secret (or something still carrying one)? */
  function isSecret(input: Node | null | undefined): boolean {
    if (!input) return false;
    const node = unwrap(input);
    switch (node.type) {
      case 'Identifier':
        return tainted.has(node.name) || isSecretName(node.name);
      case 'MemberExpression':
      case 'OptionalMemberExpression': {
        if (node.computed) return isSecret(node.object) || (node.property.type === 'StringLiteral' && isSecretName(node.property.value));
        const name = propertyName(node);
        return name !== null && name !== 'length' && isSecretName(name);
      }
      case 'CallExpression':
      case 'OptionalCallExpression': {
        const name = calleeName(node.callee);
        if (name === null) return false;
        if (SECRET_FUNCTIONS.has(name) || SECRET_METHODS.has(name)) return true;
        if (isHeaderRead(node)) return true;
        const callee = unwrap(node.callee);
        if ((callee.type === 'MemberExpression' || callee.type === 'OptionalMemberExpression') && PRESERVING_METHODS.has(name)) {
          return isSecret(callee.object) || (name === 'exec' && node.arguments.some((a: Node) => isSecret(a)));
        }
        return isSecretName(name) && !PREDICATE.test(name) && name !== 'safeEqual';
      }
      case 'LogicalExpression':
        return isSecret(node.left) || isSecret(node.right);
      case 'ConditionalExpression':
        return isSecret(node.consequent) || isSecret(node.alternate);
      case 'BinaryExpression':
        return node.operator === '+' && (isSecret(node.left) || isSecret(node.right));
      case 'TemplateLiteral':
        return node.expressions.some((e: Node) => isSecret(e));
      case 'ArrayExpression':
        return node.elements.some((e: Node | null) => isSecret(e));
      case 'AssignmentExpression':
        return isSecret(node.right);
      default:
        return false;
    }
  }

  /** Comparing with one of these asks whether a secret is there, not what it is. */
  function isPresenceCheck(input: Node): boolean {
    const node = unwrap(input);
    if (node.type === 'NullLiteral' || node.type === 'NumericLiteral' || node.type === 'BooleanLiteral') return true;
    if (node.type === 'Identifier' && node.name === 'undefined') return true;
    if (node.type === 'StringLiteral' && node.value === '') return true;
    if (node.type === 'UnaryExpression' && (node.operator === 'typeof' || node.operator === '-')) return true;
    if ((node.type === 'MemberExpression' || node.type === 'OptionalMemberExpression') && propertyName(node) === 'length') return true;
    return false;
  }

  // Local variables derived from secrets, to a fixpoint (a later declaration may feed an earlier name).
  const nodes = [...walk(ast)];
  for (let grew = true; grew; ) {
    grew = false;
    for (const node of nodes) {
      let name: string | null = null;
      let value: Node | null = null;
      if (node.type === 'VariableDeclarator' && node.id.type === 'Identifier') [name, value] = [node.id.name, node.init];
      else if (node.type === 'AssignmentExpression' && node.left.type === 'Identifier') [name, value] = [node.left.name, node.right];
      if (name && !tainted.has(name) && value && isSecret(value)) {
        tainted.add(name);
        grew = true;
      }
    }
  }

  const at = (node: Node) => ({ line: node.loc!.start.line, column: node.loc!.start.column + 1 });
  const codeOf = (node: Node) => source.slice(node.start!, node.end!).replace(/\s+/g, ' ').slice(0, 120);
  const findings: Finding[] = [];
  const report = (node: Node, why: string) => findings.push({ file, ...at(node), code: codeOf(node), why });
  const safeEqualCalls: LintResult['safeEqualCalls'] = [];

  for (const node of nodes) {
    if (node.type === 'BinaryExpression' && ['===', '!==', '==', '!='].includes(node.operator)) {
      const [left, right] = [node.left as Node, node.right as Node];
      if ((isSecret(left) || isSecret(right)) && !isPresenceCheck(left) && !isPresenceCheck(right)) {
        report(node, `\`${node.operator}\` on a secret`);
      }
    } else if (node.type === 'CallExpression' || node.type === 'OptionalCallExpression') {
      const name = calleeName(node.callee);
      const callee = unwrap(node.callee);
      if (name === 'safeEqual') {
        safeEqualCalls.push({ file, line: at(node).line, code: codeOf(node), recognised: node.arguments.some((a: Node) => isSecret(a)) });
      } else if (name !== null && COMPARE_METHODS.has(name) && (callee.type === 'MemberExpression' || callee.type === 'OptionalMemberExpression')) {
        if (isSecret(callee.object) || node.arguments.some((a: Node) => isSecret(a))) report(node, `\`.${name}()\` on a secret`);
      }
    } else if (node.type === 'SwitchStatement' && isSecret(node.discriminant)) {
      report(node.discriminant, '`switch` over a secret');
    }
  }
  return { findings, safeEqualCalls };
}
