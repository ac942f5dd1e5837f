import { randomUUID } from 'node:crypto';
import type { SharedState } from '../store/state.js';
import { periodsOf, toNanos } from '../vault/limits.js';
import type { VirtualKeyLimits } from '../vault/records.js';
import { JsonRpcError } from './methods.js';
import { RPC } from './sdk.js';

const DAY_MS = 86_400_000;
let sequence = 0;
/** Request ids are lease members in every instance's shared counters: a pid alone repeats across containers. */
const PROCESS_ID = randomUUID();

/** What admitting one tool call needs: the key, its limits, the server's tool limit and cost. */
export interface ToolAdmission {
  readonly keyId: string;
  readonly limits?: VirtualKeyLimits;
  readonly server: string;
  readonly tool: string;
  /** Calls a minute this key may make to this tool (the server's `tool_requests_per_minute`); absent: no limit. */
  readonly requestsPerMinute?: number;
  /** Charged to the key's budget for each call that reaches the server (`cost_per_call_usd`). */
  readonly costUsd?: number;
}

/**
 * Admits a tool call in one atomic step of the shared state, as model requests are admitted: the
 * key's calls to this tool in the last minute (per key and tool), and the key's budget with the
 * call's cost reserved. Resolves with the settle that charges the cost once the call is over; a
 * refusal is a JSON-RPC error (-32000) saying which limit and when to retry.
 */
export async function admitToolCall(state: SharedState, admission: ToolAdmission): Promise<() => Promise<void>> {
  const budgetUsd = admission.limits?.budget_usd;
  if (admission.requestsPerMinute === undefined && (admission.costUsd === undefined || admission.costUsd === 0)) return async () => {};
  const now = Date.now();
  const periods = periodsOf(admission.keyId, now);
  const budgetPeriod = admission.limits?.budget_period ?? 'total';
  const toolBase = `mcpusage:${admission.keyId}:${admission.server}:${admission.tool}`;
  const reservationNanos = toNanos(admission.costUsd ?? 0);
  const requestId = `${PROCESS_ID}:${++sequence}`;
  const ttlOf = (period: typeof budgetPeriod): number | undefined =>
    period === 'day' ? periods.msUntilDayEnds + DAY_MS : period === 'week' ? periods.msUntilWeekEnds + DAY_MS : period === 'month' ? periods.msUntilMonthEnds + DAY_MS : undefined;
  // Two levels in one step: the key's calls to this tool, and the key's budget.
  const result = await state.admit({
    now,
    requestId,
    levels: [
      {
        minuteWindowKey: `${toolBase}:minute`,
        dayCounterKey: `${toolBase}:day:${new Date(now).toISOString().slice(0, 10)}`,
        totalCounterKey: `${toolBase}:total`,
        spentKey: `${toolBase}:spent`,
        reservedKey: `${toolBase}:reserved`,
        tokensWindowKey: `${toolBase}:tokens`,
        concurrentKey: `${toolBase}:inflight`,
        ...(admission.requestsPerMinute !== undefined ? { requestsPerMinute: admission.requestsPerMinute } : {}),
      },
      {
        minuteWindowKey: periods.minuteWindow,
        spentKey: periods.spent[budgetPeriod],
        reservedKey: periods.reserved[budgetPeriod],
        tokensWindowKey: `usage:${admission.keyId}:tokens`,
        concurrentKey: `usage:${admission.keyId}:inflight`,
        ...(budgetUsd !== undefined ? { budgetNanos: toNanos(budgetUsd), periodTtlMs: ttlOf(budgetPeriod) } : {}),
      },
    ],
    reservationNanos,
    tokens: 0,
    msUntilDayEnds: periods.msUntilDayEnds,
  });
  if (!result.admitted) {
    if (result.reason === 'budget') throw new JsonRpcError(RPC.LimitRefused, `This key's budget is spent: the call to tool "${admission.tool}" of MCP server "${admission.server}" was refused.`);
    const seconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
    throw new JsonRpcError(RPC.LimitRefused, `Rate limit: this key may call tool "${admission.tool}" of MCP server "${admission.server}" ${admission.requestsPerMinute} times a minute; retry in ${seconds} s.`);
  }
  return async () => {
    const spent = (['total', 'day', 'week', 'month'] as const).map((period) => {
      const ttlMs = ttlOf(period);
      return ttlMs === undefined ? { key: periods.spent[period] } : { key: periods.spent[period], ttlMs };
    });
    await state.settle({
      requestId,
      reservationNanos: result.reservedNanos,
      actualNanos: reservationNanos,
      estimatedTokens: 0,
      levels: [{ ...(budgetUsd !== undefined ? { reservedKey: periods.reserved[budgetPeriod] } : {}), spent }],
    });
  };
}
