import type OpenAI from 'openai';
import type { ProviderPlugin } from '../spec/provider.js';
import type { ScenarioServer } from './fake-server.js';
import type { KitGateway } from './gateway.js';
import type { ConformanceSubject } from '../spec/conformance.js';

/** Everything a check needs: the subject, its plugin as the gateway created it, the fake and clients. */
export interface CheckContext {
  readonly subject: ConformanceSubject;
  readonly plugin: ProviderPlugin;
  readonly server: ScenarioServer;
  readonly gateway: KitGateway;
  readonly client: OpenAI;
  /** Headers for a raw `fetch` through the gateway (the same the SDK sends). */
  readonly rawHeaders: Record<string, string>;
  readonly credential: string;
}

/** A failed expectation: the message is what the table shows. */
export class CheckFailure extends Error {}

/** A check that does not apply to this plugin or this core: reported as skipped with its reason. */
export class CheckSkipped extends Error {}

export interface Check {
  readonly name: string;
  /** What the check proves, one line. */
  readonly description: string;
  run(context: CheckContext): Promise<void>;
}

export function expect(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailure(message);
}

/** Which operation the core ran the request with `trace` as (undefined: none was logged in time). */
export async function routedAs(context: CheckContext, trace: string): Promise<string | undefined> {
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) {
    const entry = context.gateway.entries().find((candidate) => candidate.traceId === trace);
    if (entry) return entry.operation;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return undefined;
}
