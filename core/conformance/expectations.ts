import { type CheckContext, expect } from './check.js';
import { KIT_ACCOUNT_KEY } from './gateway.js';
import type { ReceivedRequest } from '../spec/conformance.js';

/** A value as the table shows it. */
export const show = (value: unknown): string => JSON.stringify(value);

let traces = 0;
/** A trace id no other request of this run carries. */
export const nextTrace = (operation: string): string => `conformance-${operation}-${process.pid}-${++traces}`;

/** What a request for one operation must show upstream: one request, the provider's credential, no gateway header or key. */
export function expectOneCleanRequest(context: CheckContext, requests: ReceivedRequest[], what: string): ReceivedRequest {
  expect(requests.length === 1, `the provider received ${requests.length} requests for ${what}`);
  const problems = context.subject.fake.checkAuth(requests[0], context.credential);
  expect(problems.length === 0, `the ${what} request's credential: ${problems.join('; ')}`);
  const leaked = Object.entries(requests[0].headers).filter(([name, value]) => name.startsWith('x-gateway-') || value?.includes(KIT_ACCOUNT_KEY));
  expect(leaked.length === 0, `gateway headers reached the provider: ${leaked.map(([name]) => name).join(', ')}`);
  return requests[0];
}

/** A request the plugin does not declare: 400 `unsupported_operation` naming the provider, nothing sent. */
export async function expectRefused(context: CheckContext, path: string, init: RequestInit): Promise<void> {
  const before = context.server.received.length;
  const response = await fetch(`${context.gateway.url}${path}`, { ...init, method: 'POST', headers: { ...context.rawHeaders, ...(init.headers as Record<string, string>) } });
  const body = (await response.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
  expect(response.status === 400, `HTTP ${response.status}, expected 400`);
  expect(body.error?.code === 'unsupported_operation', `code ${show(body.error?.code)}, expected "unsupported_operation"`);
  expect(String(body.error?.message).includes(`"${context.plugin.id}"`), `the message ${show(body.error?.message)} does not name the provider`);
  const sent = context.server.received.length - before;
  expect(sent === 0, `the provider received ${sent} requests`);
}
