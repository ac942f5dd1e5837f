import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const require = createRequire(import.meta.url);

/** The official SDK's client (streamable HTTP) connected to `url` with only `headers`, as a coding agent is set up. */
export async function mcpClient(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** A free loopback port (bound then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `@modelcontextprotocol/server-everything` over streamable HTTP (or the legacy SSE transport), as a child process on a loopback port. */
export async function startEverything(transport: 'streamableHttp' | 'sse' = 'streamableHttp'): Promise<{ url: string; stop: () => Promise<void> }> {
  const script = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [script, transport], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${output}`)), 20_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening on port|running on port/i.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/${transport === 'sse' ? 'sse' : 'mcp'}`,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** The command line of `@modelcontextprotocol/server-memory` (stdio), for the gateway's `mcp.servers`. */
export function memoryServerCommand(memoryFile: string): { command: string; args: string[]; env: Record<string, string> } {
  return { command: process.execPath, args: [require.resolve('@modelcontextprotocol/server-memory/dist/index.js')], env: { MEMORY_FILE_PATH: memoryFile } };
}

export interface FakeTool {
  readonly name: string;
  readonly description?: string;
  /** Default `{ type: 'object' }`. */
  readonly inputSchema?: Record<string, unknown>;
}

/**
 * A fake MCP server (streamable HTTP, JSON answers) for faults: `slow` answers after `slowMs`,
 * `big` returns `bigBytes` of text, `garbage` answers with a body that is not JSON-RPC, `crash`
 * drops the connection, `fails` answers a result with `isError: true`; every other tool echoes its arguments. Its tools can be changed, its
 * sessions forgotten (the next request with an old session id gets 404), its requests' headers read.
 */
export class FakeMcpServer {
  tools: FakeTool[] = [{ name: 'echo' }, { name: 'slow' }, { name: 'big' }, { name: 'garbage' }, { name: 'crash' }, { name: 'fails' }];
  slowMs = 2000;
  bigBytes = 4096;
  readonly headers: IncomingHttpHeaders[] = [];
  /** When set, a request whose `Authorization` is not `Bearer <one of these>` gets 401 (an OAuth-protected server). */
  acceptedTokens?: Set<string>;
  readonly calls: Array<{ name: string; arguments: unknown; session: string | undefined }> = [];
  initializeCount = 0;
  /** The notifications received after initialization (method and params). */
  readonly notifications: Array<{ method: string; params: unknown }> = [];
  private sessions = new Set<string>();
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((request, response) => void this.serve(request, response));
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`;
    return this;
  }

  forgetSessions(): void {
    this.sessions.clear();
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async serve(request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse): Promise<void> {
    this.headers.push(request.headers);
    if (this.acceptedTokens !== undefined && !this.acceptedTokens.has(String(request.headers.authorization).replace(/^Bearer /, ''))) {
      response.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' }).end('{"error":"invalid_token"}');
      return;
    }
    if (request.method !== 'POST') {
      response.writeHead(request.method === 'DELETE' ? 200 : 405).end();
      return;
    }
    let text = '';
    for await (const chunk of request) text += chunk;
    const message = JSON.parse(text) as { id?: number; method: string; params?: any };
    const session = request.headers['mcp-session-id'] as string | undefined;
    const json = (body: unknown, headers: Record<string, string> = {}) => response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (message.method === 'initialize') {
      this.initializeCount += 1;
      const id = `fake-${this.initializeCount}`;
      this.sessions.add(id);
      json({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'fake', version: '1' } } }, { 'mcp-session-id': id });
      return;
    }
    if (session === undefined || !this.sessions.has(session)) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
      return;
    }
    if (message.id === undefined) {
      this.notifications.push({ method: message.method, params: message.params });
      response.writeHead(202).end();
      return;
    }
    if (message.method === 'tools/list') {
      json({ jsonrpc: '2.0', id: message.id, result: { tools: this.tools.map((tool) => ({ name: tool.name, description: tool.description ?? `the ${tool.name} tool`, inputSchema: tool.inputSchema ?? { type: 'object' } })) } });
      return;
    }
    if (message.method !== 'tools/call') {
      json({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
      return;
    }
    const name = message.params.name as string;
    this.calls.push({ name, arguments: message.params.arguments, session });
    if (name === 'slow') await new Promise((resolve) => setTimeout(resolve, this.slowMs));
    if (name === 'garbage') return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"this is": not json-rpc');
    if (name === 'crash') return void response.socket?.destroy();
    if (name === 'fails') return void json({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'the tool failed' }], isError: true } });
    const content = name === 'big' ? 'x'.repeat(this.bigBytes) : JSON.stringify(message.params.arguments ?? {});
    json({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: content }] } });
  }
}
