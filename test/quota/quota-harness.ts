import type { ServerResponse } from 'node:http';
import type { ExecutionContext } from 'ava';
import type { QuotaClock } from '../../core/quota/scheduler.js';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import type { TestGateway } from '../harness.js';
import { admin, FIXED_MESSAGES } from '../vault/vault-harness.js';

/**
 * A simulated clock for the providers' quotas: time moves only when the test advances it, firing
 * the timers that fall due in order. The gateway's scheduler and the fake provider read the same
 * clock, so both count one window.
 */
export class ManualClock implements QuotaClock {
  private time: number;
  private timers: Array<{ at: number; callback: () => unknown }> = [];

  constructor(start = Math.ceil(Date.now() / 60_000) * 60_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => unknown, ms: number): unknown {
    const timer = { at: this.time + Math.max(0, ms), callback };
    this.timers.push(timer);
    return timer;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((timer) => timer !== handle);
  }

  /**
   * Moves the time on by `ms`, firing each timer due on the way at its own time and waiting for what
   * it started (the scheduler's pass over its queue, store round trips included) before the next.
   */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    for (;;) {
      const due = this.timers.filter((timer) => timer.at <= target).sort((left, right) => left.at - right.at)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.time = Math.max(this.time, due.at);
      await due.callback();
    }
    this.time = target;
  }
}

/** Moves a simulated clock on by `ms` a second at a time, letting the gateway act on each second's timers before the next. */
export async function advance(clock: ManualClock, ms: number, stepMs = 1000): Promise<void> {
  for (let done = 0; done < ms; done += stepMs) {
    await clock.advance(Math.min(stepMs, ms - done));
  }
}

/** The usage the TPM fake answers with: FIXED_MESSAGES' prompt bound (60) and 20 of the 40 `max_tokens`, so 20 estimated tokens go back per request. */
export const QUOTA_USAGE = { prompt_tokens: 60, completion_tokens: 20, total_tokens: 80 };
/** What the gateway reserves for one request of {@link quotaChat}: 60 prompt tokens (bound) + 40 max_tokens. */
export const QUOTA_ESTIMATE = 100;

/** A fake provider that enforces its own tokens per minute on `clock` (a sliding window of `windowMs`) and answers 429 past it. */
export interface TpmFake {
  readonly fake: Fake;
  /** Requests it refused with its own 429. */
  refused: number;
  /** Tokens served in the window ending now, as the provider counts them. */
  used(): number;
}

export async function startTpmFake(clock: QuotaClock, tokensPerMinute: number, windowMs = 60_000): Promise<TpmFake> {
  const log: Array<{ at: number; tokens: number }> = [];
  const state = { refused: 0 };
  const used = () => {
    const since = clock.now() - windowMs;
    return log.filter((entry) => entry.at > since).reduce((sum, entry) => sum + entry.tokens, 0);
  };
  const handler = (_request: RecordedRequest, response: ServerResponse) => {
    if (used() + QUOTA_USAGE.total_tokens > tokensPerMinute) {
      state.refused += 1;
      response.writeHead(429, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Rate limit reached for tokens per min', type: 'tokens', code: 'rate_limit_exceeded' } }));
      return;
    }
    log.push({ at: clock.now(), tokens: QUOTA_USAGE.total_tokens });
    const answer = {
      id: 'chatcmpl-quota',
      object: 'chat.completion',
      created: 1741569952,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, logprobs: null, finish_reason: 'stop' }],
      usage: QUOTA_USAGE,
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  };
  const fake = await startFake(handler);
  return Object.assign(state, { fake, used });
}

/** Creates through the admin API an organization credential with `quota`, and teams (name → weight) with one key each on it. */
export async function quotaSetup(t: ExecutionContext, gateway: TestGateway, upstream: string, quota: Record<string, unknown>, teams: Record<string, number | undefined>, tag: string) {
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: `quota-${tag}`, provider: 'openai', api_key: 'sk-quota-secret-0123456789', quota, team_id: null });
  if (credential.status !== 201) t.fail(`credential: ${credential.status} ${credential.text}`);
  const keys: Record<string, string> = {};
  for (const [name, weight] of Object.entries(teams)) {
    const team = await admin(gateway, 'POST', '/admin/teams', { name: `${name}-${tag}`, ...(weight === undefined ? {} : { quota_weight: weight }) });
    if (team.status !== 201) t.fail(`team: ${team.status} ${team.text}`);
    const key = await admin(gateway, 'POST', '/admin/virtual-keys', { name: `${name}-${tag}`, provider: 'openai', credential_id: credential.json.id, custom_host: upstream, team_id: team.json.id });
    if (key.status !== 201) t.fail(`key: ${key.status} ${key.text}`);
    keys[name] = key.json.key;
  }
  return { credentialId: credential.json.id as string, keys };
}

/** One chat through the gateway with a key. */
export async function quotaChat(gateway: TestGateway, key: string, headers: Record<string, string> = {}, signal?: AbortSignal) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES, max_tokens: 40 }),
    signal,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? (JSON.parse(text) as any) : undefined };
}

/** Requests waiting for the quota `cred:<id>` on this gateway (its /metrics gauge, read in process). */
export async function queueDepth(gateway: TestGateway, credentialId: string): Promise<number> {
  const metric = gateway.gateway.metrics.registry.getSingleMetric('gateway_quota_queue_depth');
  const values = (await metric?.get())?.values ?? [];
  return values.find((value) => value.labels.quota === `cred:${credentialId}`)?.value ?? 0;
}

/** Waits (real time, polling) until `depth` requests wait for the quota; fails the test after 5 s. */
export async function untilDepth(t: ExecutionContext, gateway: TestGateway, credentialId: string, depth: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while ((await queueDepth(gateway, credentialId)) !== depth) {
    if (Date.now() > deadline) t.fail(`the queue never reached ${depth} (it holds ${await queueDepth(gateway, credentialId)})`);
    if (Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
