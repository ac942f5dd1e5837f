/**
 * The process's streams and environment as the command line and the primary process of
 * `GATEWAY_WORKERS` use them (a base-layer file, so that a lower layer than `core/cli/` may name it).
 */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Read when a command takes a secret with `--stdin`; at a terminal, a prompt without echo. */
  readonly stdin: NodeJS.ReadableStream;
  readonly environment: NodeJS.ProcessEnv;
  /** `human` (the `llm-gateway` command's default) or `json` (the default here, and `--json`). */
  readonly output?: 'human' | 'json';
}
