import OpenAI from 'openai';
import { CHECKS, type Check, CheckSkipped } from './checks.js';
import { startScenarioServer } from './fake-server.js';
import { KIT_ACCOUNT_KEY, startKitGateway } from './gateway.js';
import type { ConformanceSubject } from '../spec/conformance.js';

export interface CheckResult {
  readonly name: string;
  readonly outcome: 'pass' | 'fail' | 'skip';
  /** Why it failed or was skipped. */
  readonly detail?: string;
}

export interface ConformanceReport {
  readonly provider: string;
  readonly name: string;
  readonly results: readonly CheckResult[];
  /** True when no check failed. */
  readonly passed: boolean;
}

export interface ConformanceOptions {
  /** Run only these checks (by name). */
  readonly only?: readonly string[];
  /** The battery (default {@link CHECKS}). */
  readonly checks?: readonly Check[];
}

/**
 * Runs the battery on one provider plugin: a loopback fake answers through the subject's renderer,
 * a gateway with only this plugin registered sits in front of it, and the official `openai` SDK is
 * the client. Checks run one after another (they share the fake's scenario).
 */
export async function runConformance(subject: ConformanceSubject, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const id = subject.registration.manifest.id;
  const credential = subject.credential ?? 'test-provider-key';
  const server = await startScenarioServer(subject.fake);
  const gateway = await startKitGateway(subject.registration);
  const plugin = gateway.gateway.registry.provider(id);
  const results: CheckResult[] = [];
  try {
    if (!plugin) throw new Error(`the gateway did not register provider "${id}"`);
    const rawHeaders: Record<string, string> = {
      'x-gateway-api-key': KIT_ACCOUNT_KEY,
      'x-gateway-provider': id,
      'x-gateway-custom-host': server.baseUrl,
      ...subject.headers,
    };
    const client = new OpenAI({ apiKey: credential, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: rawHeaders });
    const context = { subject, plugin, server, gateway, client, rawHeaders: { ...rawHeaders, authorization: `Bearer ${credential}` }, credential };
    const checks = (options.checks ?? CHECKS).filter((check) => !options.only || options.only.includes(check.name));
    for (const check of checks) {
      try {
        await check.run(context);
        results.push({ name: check.name, outcome: 'pass' });
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        results.push({ name: check.name, outcome: error instanceof CheckSkipped ? 'skip' : 'fail', detail });
      } finally {
        server.scenario = undefined;
      }
    }
  } finally {
    await gateway.close();
    await server.close();
  }
  return { provider: id, name: plugin?.name ?? id, results, passed: results.every((result) => result.outcome !== 'fail') };
}

/** The report as a fixed-width table with a summary line. */
export function formatReport(report: ConformanceReport): string {
  const width = Math.max(5, ...report.results.map((result) => result.name.length));
  const label = { pass: 'PASS', fail: 'FAIL', skip: 'SKIP' } as const;
  const lines = [`conformance: ${report.provider} (${report.name})`, `${'check'.padEnd(width)}  result  detail`, `${'-'.repeat(width)}  ------  ------`];
  for (const result of report.results) lines.push(`${result.name.padEnd(width)}  ${label[result.outcome].padEnd(6)}  ${result.detail ?? ''}`.trimEnd());
  const count = (outcome: CheckResult['outcome']) => report.results.filter((result) => result.outcome === outcome).length;
  lines.push(`${count('pass')} passed, ${count('fail')} failed, ${count('skip')} skipped: ${report.passed ? 'CONFORMS' : 'DOES NOT CONFORM'}`);
  return lines.join('\n');
}
