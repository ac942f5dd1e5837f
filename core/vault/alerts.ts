import { randomUUID } from 'node:crypto';
import type { ControlPlaneHttp } from '../spec/manifest.js';
import type { SharedState } from '../store/state.js';
import type { VirtualKeyRecord } from './records.js';
import { type BudgetPeriod, calendarAt, type LevelName } from './levels.js';

/** The shares of a budget that raise an alert, in percent. */
export const ALERT_THRESHOLDS = [80, 100] as const;
export type AlertThreshold = (typeof ALERT_THRESHOLDS)[number];

/** Where alerts are posted (`alerts.webhook` in gateway.config.ts). */
export interface AlertWebhook {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Deadline of one attempt (default 5000 ms). */
  readonly timeoutMs: number;
}

/**
 * A level's spend having reached a share of its budget (`budget.threshold`), or its soft budget
 * (`budget.soft`), in the budget's current period. For a level other than a key, `key_id` is
 * `<level>:<id>` (e.g. `team:t_1`) and `key_name` says whose it is.
 */
export interface BudgetAlert {
  readonly type: 'budget.threshold' | 'budget.soft';
  readonly level: LevelName;
  readonly key_id: string;
  readonly key_name: string;
  /** 80 or 100 (percent of the budget; a soft budget's alert: 100). */
  readonly threshold: AlertThreshold;
  readonly budget_usd: number;
  /** Spend in the period when the threshold was crossed. */
  readonly spent_usd: number;
  readonly period: BudgetPeriod;
  /** `total`, the UTC day (`2025-01-31`), week (`w2025-01-27`, its Monday) or month (`2025-01`) the alert belongs to. */
  readonly period_id: string;
  /** When the period's spend starts again from zero; null for a `total` budget. */
  readonly resets_at: string | null;
  /** When the crossing was seen. */
  readonly at: string;
}

/** What the settle hook knows of a request charged at a level with a budget or a soft budget. */
export interface ChargedBudget {
  readonly level: LevelName;
  /** The key's id, or `<level>:<id>` for another level. */
  readonly keyId: string;
  readonly keyName: string;
  readonly budgetNanos?: number;
  /** The soft budget: one alert when the period's spend reaches it, no refusal. */
  readonly softNanos?: number;
  readonly period: BudgetPeriod;
  /** The counter of the period's spend. */
  readonly spentKey: string;
  readonly now: number;
}

interface StoredAlert extends BudgetAlert {
  /** The claim that made this instance the one to send it, released when a later period replaces it. */
  readonly claim: { readonly name: string; readonly owner: string };
}

export interface AlertLogger {
  warn(object: object, message: string): void;
}

const SET = 'budget-alerts';
const recordKey = (keyId: string, threshold: number | 'soft') => `budget-alert:${keyId}:${threshold}`;
/** The levels whose alerts' `key_id` is `<level>:<id>`. */
const SUBJECT_PREFIXES = ['organization:', 'team:', 'user:', 'end_user:', 'tag:'];
const isLevelSubject = (keyId: string): boolean => SUBJECT_PREFIXES.some((prefix) => keyId.startsWith(prefix));
const NANOS_PER_USD = 1_000_000_000;

const TOTAL_PERIOD = Object.freeze({ id: 'total', resetsAt: null });

/** The period a budget counts at `now`, its id and when it resets. */
export function budgetPeriodAt(period: BudgetPeriod, now: number): { readonly id: string; readonly resetsAt: number | null } {
  if (period === 'total') return TOTAL_PERIOD;
  const calendar = calendarAt(now);
  return { id: calendar.ids[period], resetsAt: calendar.ends[period] };
}

/**
 * Budget alerts: after a request of a key with a budget is charged, the period's spend (returned by
 * the settle, or else read once) is compared with the budget;
 * each threshold (80 %, 100 %) it reaches for the first time in that period (and at that budget) is
 * claimed in the shared state, so that exactly one instance records it (shown by the dashboard
 * through `GET /admin/alerts`) and posts it to the webhook, when one is configured. Nothing here
 * runs for a key without a budget, and nothing delays the request: the work is started, not awaited.
 */
export class BudgetAlerts {
  /** Per key: the period, budget and highest threshold this instance has seen raised (skips reads once at 100 %). */
  private readonly seen = new Map<string, { periodId: string; budgetNanos: number; threshold: number }>();
  /** Sends and checks in progress (tests and shutdown may wait for them). */
  private readonly pending = new Set<Promise<void>>();
  /** Aborted by {@link close}: a send in flight or waiting to retry stops. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly options: {
      readonly state: () => SharedState;
      readonly http?: ControlPlaneHttp;
      readonly webhook?: AlertWebhook;
      readonly logger: AlertLogger;
      /** Waits between webhook attempts (default 1 s, then 5 s: three attempts). */
      readonly retryDelaysMs?: readonly number[];
    },
  ) {}

  /**
   * Called after a charge, with the period's spend after it when the settle returned it (else it is
   * read); returns at once. A spend below every threshold not yet raised starts nothing.
   */
  charged(budget: ChargedBudget, spentNanos?: number): void {
    if (this.stopping.signal.aborted) return;
    const period = budgetPeriodAt(budget.period, budget.now);
    if (budget.softNanos !== undefined) this.softCharged(budget, period, spentNanos);
    if (budget.budgetNanos === undefined) return;
    const already = this.alreadyRaised(budget, period);
    if (already >= 100) return;
    if (spentNanos === undefined) this.track(this.check(budget, period));
    else if (highestReached(spentNanos, budget.budgetNanos) > already) this.track(this.raise(budget, period, spentNanos));
  }

  /** A soft budget: one `budget.soft` alert the first time the period's spend reaches it (claimed once across instances). */
  private softCharged(budget: ChargedBudget, period: { readonly id: string; readonly resetsAt: number | null }, spentNanos: number | undefined): void {
    const softNanos = budget.softNanos!;
    const seenKey = `${budget.keyId}:soft`;
    const seen = this.seen.get(seenKey);
    if (seen && seen.periodId === period.id && seen.budgetNanos === softNanos) return;
    this.track(
      (async () => {
        const spent = spentNanos ?? (await this.options.state().read([budget.spentKey]))[0]!;
        if (spent < softNanos) return;
        if (this.seen.size >= 10_000) this.seen.clear();
        this.seen.set(seenKey, { periodId: period.id, budgetNanos: softNanos, threshold: 100 });
        await this.record(budget, period, spent, 'soft', softNanos);
      })(),
    );
  }

  /** The highest threshold this instance has raised for the key in this period at this budget (0: none). */
  private alreadyRaised(budget: ChargedBudget, period: { readonly id: string }): number {
    const seen = this.seen.get(budget.keyId);
    return seen && seen.periodId === period.id && seen.budgetNanos === budget.budgetNanos ? seen.threshold : 0;
  }

  /** Resolves when every check and webhook send started so far has finished. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Stops: no new check, sends in flight and retries are abandoned; resolves once the checks running have ended. */
  async close(): Promise<void> {
    this.stopping.abort();
    await this.idle();
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => {
      this.options.logger.warn({ err: { message: (error as Error)?.message } }, 'budget alert check failed');
    });
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  private async check(budget: ChargedBudget, period: { readonly id: string; readonly resetsAt: number | null }): Promise<void> {
    const [spent] = await this.options.state().read([budget.spentKey]);
    await this.raise(budget, period, spent);
  }

  /** Claims and records (and posts) each threshold `spent` reaches that this instance has not raised yet. */
  private async raise(budget: ChargedBudget, period: { readonly id: string; readonly resetsAt: number | null }, spent: number): Promise<void> {
    const already = this.alreadyRaised(budget, period);
    const fresh = ALERT_THRESHOLDS.filter((threshold) => reaches(spent, budget.budgetNanos!, threshold) && threshold > already);
    if (fresh.length === 0) return;
    if (this.seen.size >= 10_000) this.seen.clear();
    this.seen.set(budget.keyId, { periodId: period.id, budgetNanos: budget.budgetNanos!, threshold: Math.max(...fresh) });
    for (const threshold of fresh) await this.record(budget, period, spent, threshold, budget.budgetNanos!);
  }

  /** Claims, records and posts one alert (a threshold of the budget, or the soft budget); another instance's claim wins. */
  private async record(budget: ChargedBudget, period: { readonly id: string; readonly resetsAt: number | null }, spent: number, threshold: AlertThreshold | 'soft', limitNanos: number): Promise<void> {
    const state = this.options.state();
    // One claim per subject, threshold, period and budget: whichever instance gets it records and sends.
    const claim = { name: `budget-alert:${budget.keyId}:${threshold}:${period.id}:${limitNanos}`, owner: randomUUID() };
    if (!(await state.claim(claim.name, claim.owner))) return;
    const alert: BudgetAlert = {
      type: threshold === 'soft' ? 'budget.soft' : 'budget.threshold',
      level: budget.level,
      key_id: budget.keyId,
      key_name: budget.keyName,
      threshold: threshold === 'soft' ? 100 : threshold,
      budget_usd: limitNanos / NANOS_PER_USD,
      spent_usd: spent / NANOS_PER_USD,
      period: budget.period,
      period_id: period.id,
      resets_at: period.resetsAt === null ? null : new Date(period.resetsAt).toISOString(),
      at: new Date(budget.now).toISOString(),
    };
    const previous = await state.records.get<StoredAlert>(recordKey(budget.keyId, threshold));
    await state.records.set(recordKey(budget.keyId, threshold), { ...alert, claim } satisfies StoredAlert);
    await state.addToSet(SET, `${budget.keyId}:${threshold}`);
    // The claim of the period this one replaces is not needed any more: at most one per subject and threshold stays.
    if (previous && previous.claim.name !== claim.name) await state.release(previous.claim.name, previous.claim.owner);
    if (this.options.webhook && this.options.http) this.track(this.send(this.options.http, this.options.webhook, alert));
  }

  /** Posts the alert; a network error, a 429 or a 5xx is retried after each delay; failures are logged without the URL or headers. */
  private async send(http: ControlPlaneHttp, webhook: AlertWebhook, alert: BudgetAlert): Promise<void> {
    const delays = this.options.retryDelaysMs ?? [1000, 5000];
    for (let attempt = 0; ; attempt++) {
      let status: number | undefined;
      let code: string | undefined;
      try {
        const answer = await http.post(webhook.url, alert, {
          headers: { 'content-type': 'application/json', ...webhook.headers },
          timeout: webhook.timeoutMs,
          validateStatus: () => true,
          maxRedirects: 0,
          signal: this.stopping.signal,
        });
        if (answer.status >= 200 && answer.status < 300) return;
        status = answer.status;
      } catch (error) {
        if (this.stopping.signal.aborted) return;
        code = (error as { code?: string }).code ?? 'network_error';
      }
      const retryable = status === undefined || status === 429 || status >= 500;
      if (!retryable || attempt >= delays.length) {
        this.options.logger.warn({ alert: { key_id: alert.key_id, threshold: alert.threshold, period_id: alert.period_id }, status, code, attempts: attempt + 1 }, 'budget alert webhook failed');
        return;
      }
      const signal = this.stopping.signal;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, delays[attempt]);
        signal.addEventListener('abort', done, { once: true });
      });
      if (this.stopping.signal.aborted) return;
    }
  }

  /**
   * The alerts of the keys' current periods (at their current budgets), newest first. Alerts of
   * deleted keys are removed here.
   */
  async list(keys: readonly VirtualKeyRecord[], now = Date.now(), visible: (alert: BudgetAlert) => boolean = () => true): Promise<BudgetAlert[]> {
    const state = this.options.state();
    const byId = new Map(keys.map((key) => [key.id, key]));
    const alerts: BudgetAlert[] = [];
    for (const member of await state.members(SET)) {
      const split = member.lastIndexOf(':');
      const keyId = member.slice(0, split);
      const threshold = member.slice(split + 1) === 'soft' ? 'soft' : Number(member.slice(split + 1));
      if (isLevelSubject(keyId) || threshold === 'soft') {
        // Another level's alert (or a soft budget's): shown while its period lasts.
        const stored = await state.records.get<StoredAlert>(recordKey(keyId, threshold));
        // A key's soft alert shows with the key (among `keys`); another level's, to whom `visible` lets see it.
        if (stored && stored.period_id === budgetPeriodAt(stored.period, now).id && (isLevelSubject(keyId) || byId.has(keyId))) {
          const { claim: _claim, ...alert } = stored;
          if (visible(alert)) alerts.push(alert);
        }
        continue;
      }
      const key = byId.get(keyId);
      if (!key) {
        const stored = await state.records.get<StoredAlert>(recordKey(keyId, threshold));
        if (stored) await state.release(stored.claim.name, stored.claim.owner);
        await state.records.delete(recordKey(keyId, threshold));
        await state.removeFromSet(SET, member);
        continue;
      }
      const alert = current(key, await state.records.get<StoredAlert>(recordKey(keyId, threshold)), now);
      if (alert && visible(alert)) alerts.push(alert);
    }
    return alerts.sort((a, b) => b.at.localeCompare(a.at) || b.threshold - a.threshold);
  }

  /** The alerts of one key's current period, highest threshold first. */
  async forKey(key: VirtualKeyRecord, now = Date.now()): Promise<BudgetAlert[]> {
    if (key.limits?.budget_usd === undefined) return [];
    const state = this.options.state();
    const stored = await Promise.all(ALERT_THRESHOLDS.map((threshold) => state.records.get<StoredAlert>(recordKey(key.id, threshold))));
    return stored.map((alert) => current(key, alert, now)).filter((alert): alert is BudgetAlert => alert !== undefined).reverse();
  }
}

const reaches = (spent: number, budgetNanos: number, threshold: number): boolean => spent * 100 >= threshold * budgetNanos;

/** The highest threshold `spent` reaches (0: none). */
function highestReached(spent: number, budgetNanos: number): number {
  let highest = 0;
  for (const threshold of ALERT_THRESHOLDS) if (reaches(spent, budgetNanos, threshold)) highest = threshold;
  return highest;
}

/** The stored alert without its claim, when it belongs to the key's current period and budget. */
function current(key: VirtualKeyRecord, stored: StoredAlert | undefined | null, now: number): BudgetAlert | undefined {
  const budget = key.limits?.budget_usd;
  const period = key.limits?.budget_period ?? 'total';
  if (!stored || budget === undefined || stored.period !== period) return undefined;
  if (stored.budget_usd !== Math.round(budget * NANOS_PER_USD) / NANOS_PER_USD || stored.period_id !== budgetPeriodAt(period, now).id) return undefined;
  const { claim: _claim, ...alert } = stored;
  return { ...alert, level: 'key', key_name: key.name };
}
