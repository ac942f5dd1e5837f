/** The Node major version the gateway needs (type stripping, node:sqlite, the compile cache). */
export const REQUIRED_NODE_MAJOR = 24;

/**
 * A message saying this Node is too old, or undefined when it is recent enough. Imports nothing,
 * so an entry point can call it before loading anything that needs Node 24.
 */
export function nodeVersionProblem(version: string = process.versions.node): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= REQUIRED_NODE_MAJOR) return undefined;
  return (
    `llm-gateway needs Node ${REQUIRED_NODE_MAJOR} or later; this is Node ${version} (${process.execPath}).\n` +
    `Install Node ${REQUIRED_NODE_MAJOR}, or use the container image, whose base is Node ${REQUIRED_NODE_MAJOR}. In a clone, ` +
    'run it through npm scripts after npm ci, which puts the pinned node devDependency first on PATH.\n'
  );
}
