import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { FakeMcpServer, mcpClient } from './mcp-harness.js';

// An upstream MCP server behind OAuth 2 client credentials: the gateway gets a token from a loopback
// token endpoint, sends it as the Bearer token, keeps it, gets a new one before it expires and after
// the server refuses it (401).

const SECRET = 'oauth-client-secret-4242';

/** A loopback token endpoint: issues tok-1, tok-2, … with `expiresIn` seconds, recording each request. */
class TokenEndpoint {
  readonly requests: Array<{ headers: IncomingHttpHeaders; form: URLSearchParams }> = [];
  expiresIn = 3600;
  issued: string[] = [];
  private server?: Server;
  url = '';
  constructor(private readonly onIssue: (token: string) => void) {}

  async start(): Promise<this> {
    this.server = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      const form = new URLSearchParams(body);
      this.requests.push({ headers: request.headers, form });
      const expected = `Basic ${Buffer.from(`agent-client:${SECRET}`).toString('base64')}`;
      if (request.headers.authorization !== expected || form.get('grant_type') !== 'client_credentials') {
        response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
        return;
      }
      const token = `tok-${this.issued.length + 1}`;
      this.issued.push(token);
      this.onIssue(token);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: this.expiresIn }));
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/oauth/token`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

let gateway: TestGateway;
let fake: FakeMcpServer;
let tokens: TokenEndpoint;
let key: string;

test.before(async (t) => {
  fake = await new FakeMcpServer().start();
  fake.acceptedTokens = new Set();
  tokens = await new TokenEndpoint((token) => fake.acceptedTokens!.add(token)).start();
  gateway = await startGateway();
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'oauth-client', api_key: SECRET });
  const created = await admin(gateway, 'POST', '/admin/mcp-servers', {
    name: 'guarded',
    transport: 'streamable-http',
    url: fake.url,
    credential: credential.json.id,
    oauth: { token_url: tokens.url, client_id: 'agent-client', scope: 'tools.read tools.call' },
  });
  if (created.status !== 201) throw new Error(created.text);
  t.is(created.json.status, 'ok', 'the probe got a token and listed the tools');
  ({ key } = await createKey(t, gateway, { name: 'oauth-agent', mcp: { servers: { guarded: { tools: ['echo'] } } } }));
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.stop();
  await tokens?.stop();
});

const call = async (note: string) => {
  const client = await mcpClient(`${gateway.url}/mcp`, { authorization: `Bearer ${key}` });
  try {
    return await client.callTool({ name: 'guarded__echo', arguments: { note } });
  } finally {
    await client.close();
  }
};

test.serial('the token request: client credentials with HTTP Basic and the scope; the token goes upstream as the Bearer token, never the secret', async (t) => {
  const result = await call('one');
  t.deepEqual(result.content, [{ type: 'text', text: '{"note":"one"}' }]);
  const first = tokens.requests[0];
  t.is(first.form.get('grant_type'), 'client_credentials');
  t.is(first.form.get('scope'), 'tools.read tools.call');
  t.is(first.form.get('client_secret'), null);
  const upstream = fake.headers.at(-1)!;
  t.regex(String(upstream.authorization), /^Bearer tok-\d+$/);
  t.false(JSON.stringify(fake.headers).includes(SECRET));
  const shown = await admin(gateway, 'GET', '/admin/mcp-servers');
  t.false(shown.text.includes(SECRET));
});

test.serial('the token is kept while valid, and fetched again when the server refuses it (401)', async (t) => {
  await call('warm');
  const fetched = tokens.requests.length;
  await call('again');
  await call('and again');
  t.is(tokens.requests.length, fetched, 'no token request while the token is valid');
  // The server revokes every token it accepted: the next call gets 401, and the gateway asks for a new one and retries.
  fake.acceptedTokens!.clear();
  const result = await call('after revocation');
  t.deepEqual(result.content, [{ type: 'text', text: '{"note":"after revocation"}' }]);
  t.is(tokens.requests.length, fetched + 1);
  t.is(String(fake.headers.at(-1)!.authorization), `Bearer ${tokens.issued.at(-1)}`);
});

test.serial('a short-lived token is fetched again before it expires', async (t) => {
  tokens.expiresIn = 1;
  fake.acceptedTokens!.clear(); // forces a new (one-second) token at the next call
  await call('short');
  const fetched = tokens.requests.length;
  const short = tokens.issued.at(-1)!;
  // Refreshed at half its lifetime: past it, the next call asks for a new token before using the old one.
  await new Promise((resolve) => setTimeout(resolve, 600));
  await call('renewed');
  t.is(tokens.requests.length, fetched + 1);
  t.true(fake.acceptedTokens!.has(short), 'the old token was still accepted: it was renewed before it expired, not after a refusal');
  t.is(String(fake.headers.at(-1)!.authorization), `Bearer ${tokens.issued.at(-1)}`);
  tokens.expiresIn = 3600;
});

test.serial('oauth needs a credential (the client secret), and its token URL passes the custom-host policy', async (t) => {
  const missing = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'no-secret', transport: 'streamable-http', url: fake.url, oauth: { token_url: tokens.url, client_id: 'x' } });
  t.is(missing.status, 400);
  t.is(missing.json.error.param, 'oauth');
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'metadata-client', api_key: 's' });
  const metadata = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'metadata', transport: 'streamable-http', url: fake.url, credential: credential.json.id, oauth: { token_url: 'http://169.254.169.254/token', client_id: 'x' } });
  t.is(metadata.status, 400);
  t.is(metadata.json.error.param, 'oauth.token_url');
});
