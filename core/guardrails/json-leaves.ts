/** The keys and indexes leading to a string inside a JSON value. */
export type LeafPath = ReadonlyArray<string | number>;

/**
 * Every string inside a JSON value (object members and array items, depth-first) with its path: the
 * texts input guardrails judge in a tool call's structured input (Messages `tool_use.input`, Gemini
 * `functionCall.args`), so that values restored to the client there are masked again when the
 * conversation goes back up.
 */
export function jsonLeaves(value: unknown, path: Array<string | number> = [], found: Array<{ path: LeafPath; text: string }> = []): Array<{ path: LeafPath; text: string }> {
  if (typeof value === 'string') found.push({ path: [...path], text: value });
  else if (Array.isArray(value)) value.forEach((item, index) => jsonLeaves(item, [...path, index], found));
  else if (typeof value === 'object' && value !== null) for (const [key, item] of Object.entries(value)) jsonLeaves(item, [...path, key], found);
  return found;
}

/** Writes `text` at `path` inside `root`, a copy the caller owns (changed in place). */
export function setLeaf(root: unknown, path: LeafPath, text: string): void {
  let node = root as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  node[path[path.length - 1]] = text;
}
