import { runChain } from '../guardrails/chain.js';
import type { CompiledPolicy } from '../guardrails/registry.js';
import type { GuardrailRecord } from '../guardrails/slice.js';
import { chainedRestorer, restoreValue } from '../guardrails/output/index.js';
import type { Restorer } from '../spec/guardrail.js';

/** A guardrail record with the policy whose chain gave it (a tool call may pass two policies). */
export interface McpGuardrailRecord extends GuardrailRecord {
  readonly policy: string;
}

/** The policies that judge one tool call, in order: the caller's (else the default policy), then the server's own. */
export interface ToolGuard {
  readonly policies: readonly CompiledPolicy[];
  /** Every verdict given, for the request's log entry. */
  readonly records: McpGuardrailRecord[];
  readonly metadata: Readonly<Record<string, string>>;
}

/** Where a judged string sits inside a JSON value: the keys and indexes leading to it. */
type Path = ReadonlyArray<string | number>;

/** Every string inside `value` (object members and array items, depth-first), with its path. */
function stringLeaves(value: unknown, path: Path = [], found: Array<{ path: Path; text: string }> = []): Array<{ path: Path; text: string }> {
  if (typeof value === 'string') found.push({ path, text: value });
  else if (Array.isArray(value)) value.forEach((item, index) => stringLeaves(item, [...path, index], found));
  else if (typeof value === 'object' && value !== null) for (const [key, item] of Object.entries(value)) stringLeaves(item, [...path, key], found);
  return found;
}

/** `value` with the string at each path replaced (copies along the paths, the rest shared). */
function replaced(value: unknown, leaves: ReadonlyArray<{ path: Path }>, texts: readonly string[]): unknown {
  let result = value;
  leaves.forEach((leaf, index) => {
    result = setAt(result, leaf.path, texts[index]);
  });
  return result;
}

function setAt(value: unknown, path: Path, text: string): unknown {
  if (path.length === 0) return text;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((item, index) => (index === head ? setAt(item, rest, text) : item));
  const object = value as Record<string, unknown>;
  return { ...object, [head]: setAt(object[head as string], rest, text) };
}

/** The texts a result is judged by: its text content items and every string of its structured content. */
function resultLeaves(result: Record<string, unknown>): Array<{ path: Path; text: string }> {
  const leaves: Array<{ path: Path; text: string }> = [];
  if (Array.isArray(result.content)) {
    result.content.forEach((item: unknown, index) => {
      const content = item as { type?: unknown; text?: unknown };
      if (content?.type === 'text' && typeof content.text === 'string') leaves.push({ path: ['content', index, 'text'], text: content.text });
    });
  }
  if (result.structuredContent !== undefined) leaves.push(...stringLeaves(result.structuredContent, ['structuredContent']));
  return leaves;
}

/** What a denial tells the client: the reason only when the policy reveals reasons. */
const denialText = (policy: CompiledPolicy, side: 'input' | 'output', reason: string) =>
  `The ${side === 'input' ? 'tool call' : "tool's result"} was refused by the gateway's content policy${policy.revealReasons ? `: ${reason}` : '.'}`;

/** A denial as MCP clients show it: a tool result with `isError`, never a JSON-RPC error. */
export const denialResult = (text: string) => ({ content: [{ type: 'text', text }], isError: true });

/**
 * Runs every policy's chain of `side` over the texts of `value` in order, each seeing what the ones
 * before it rewrote: the rewritten value, or the denial's message.
 */
async function judge(
  guard: ToolGuard,
  side: 'input' | 'output',
  value: unknown,
  leavesOf: (value: unknown) => Array<{ path: Path; text: string }>,
): Promise<{ value: unknown; restorers: Restorer[] } | { denied: string }> {
  let current = value;
  const restorers: Restorer[] = [];
  for (const policy of guard.policies) {
    const chain = side === 'input' ? policy.input : policy.output;
    if (chain.length === 0) continue;
    const leaves = leavesOf(current);
    if (leaves.length === 0) continue;
    const input = { side, operation: 'mcp' as const, texts: leaves.map((leaf) => leaf.text), metadata: guard.metadata, parameters: {}, partial: false };
    const outcome = await runChain(chain, input, policy.mode, (entry) => guard.records.push({ ...entry, policy: policy.name }));
    if (outcome.action === 'deny') return { denied: denialText(policy, side, outcome.reason) };
    if (outcome.action === 'transform') {
      current = replaced(current, leaves, outcome.texts);
      restorers.push(...outcome.restorers);
    }
  }
  return { value: current, restorers };
}

/**
 * Judges a tool call's arguments (input): every string in them. A masking guardrail's placeholders
 * (a transform verdict with a restorer) go to the tool instead of the values, and `restorer` puts the values
 * back in the tool's result.
 */
export async function judgeArguments(
  guard: ToolGuard,
  args: Record<string, unknown> | undefined,
): Promise<{ value: Record<string, unknown> | undefined; restorer?: Restorer } | { denied: string }> {
  if (args === undefined) return { value: undefined };
  const judged = await judge(guard, 'input', args, (value) => stringLeaves(value));
  if ('denied' in judged) return judged;
  const value = judged.value as Record<string, unknown>;
  return judged.restorers.length > 0 ? { value, restorer: chainedRestorer(judged.restorers) } : { value };
}

/**
 * Judges a tool's result (output): its text content and structured content. Then, after the output
 * guardrails judged what the tool wrote, the values the arguments' masking took out are put back
 * (only the placeholders this call issued; the request's memory only).
 */
export async function judgeResult(guard: ToolGuard, result: Record<string, unknown>, restorer?: Restorer): Promise<{ value: Record<string, unknown> } | { denied: string }> {
  const judged = await judge(guard, 'output', result, (value) => resultLeaves(value as Record<string, unknown>));
  if ('denied' in judged) return judged;
  const value = judged.value as Record<string, unknown>;
  return { value: restorer ? restoreValue(value, restorer) : value };
}
