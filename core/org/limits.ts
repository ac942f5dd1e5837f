/**
 * The limits objects of every level (docs/limits.md#levels), kept with the organization's records
 * (teams, users, service accounts carry them) and used by the vault's keys and admission.
 */

/**
 * The limits of one level (a virtual key, team, user, service account, the organization, or a rule
 * for end users or tags). All optional; field names are the admin API's (docs/limits.md#levels).
 */
export interface LevelLimits {
  /** Budget in USD for `budget_period`. */
  readonly budget_usd?: number;
  /** `total` (default), or the current UTC calendar `day`, `week` (from Monday) or `month`. */
  readonly budget_period?: 'total' | 'day' | 'week' | 'month';
  /** Spend in `budget_period` that raises an alert and refuses nothing. */
  readonly soft_budget_usd?: number;
  /** Sliding 60-second window. */
  readonly requests_per_minute?: number;
  /** Current UTC calendar day. */
  readonly requests_per_day?: number;
  /** Input + output tokens in a sliding 60-second window: estimated at admission, corrected by the answer's usage. */
  readonly tokens_per_minute?: number;
  /** Requests in flight at once; one more is refused at once (429). */
  readonly max_concurrent?: number;
}

/** The limits a virtual key or team may carry: its own, plus rules for each end user and for tag values. */
export interface VirtualKeyLimits extends LevelLimits {
  /** Matched against the request body's `user` field. */
  readonly allowed_users?: readonly string[];
  /** Matched against the request's `model`. */
  readonly allowed_models?: readonly string[];
  /** Applied to each end user (the request's `user`) separately. */
  readonly end_users?: LevelLimits;
  /** Per metadata key (from `x-gateway-metadata`): limits per value, `*` for each other value. */
  readonly tags?: Readonly<Record<string, Readonly<Record<string, LevelLimits>>>>;
}
