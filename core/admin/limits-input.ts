import { invalid, optionalEnum, optionalNumber, requireObject, requireString } from '../api/validate.js';
import type { LevelLimits, VirtualKeyLimits } from '../vault/records.js';

/** The fields of every level's limits (docs/limits.md#levels). */
const LEVEL_FIELDS = ['budget_usd', 'budget_period', 'soft_budget_usd', 'requests_per_minute', 'requests_per_day', 'tokens_per_minute', 'max_concurrent'] as const;
/** What a key or team adds: rules for each end user and for tag values. */
const RULE_FIELDS = ['end_users', 'tags'] as const;
/** What only a key adds: the users and models its requests may name. */
const ACCESS_FIELDS = ['allowed_users', 'allowed_models'] as const;

function onlyFields(body: Record<string, unknown>, allowed: readonly string[], prefix: string): void {
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) throw invalid(`unknown field; expected one of ${allowed.join(', ')}.`, { param: `${prefix}${field}` });
  }
}

function stringList(value: unknown, param: string): void {
  if (!Array.isArray(value)) throw invalid('expected an array of strings.', { param });
  if (value.length > 1000) throw invalid('at most 1000 entries.', { param });
  value.forEach((entry, index) => requireString(entry, `${param}[${index}]`, { nonEmpty: true, max: 256 }));
}

/** One level's limits at `param` (e.g. `limits.tags.feature.search`); every failure is a 400 naming the field. */
function levelLimits(value: unknown, param: string, extra: readonly string[]): Record<string, unknown> {
  const limits = requireObject(value, param);
  const at = (field: string) => `${param}.${field}`;
  onlyFields(limits, [...LEVEL_FIELDS, ...extra], `${param}.`);
  optionalNumber(limits.budget_usd, at('budget_usd'), { min: 0, max: 1e9 });
  optionalNumber(limits.soft_budget_usd, at('soft_budget_usd'), { min: 0, max: 1e9 });
  optionalEnum(limits.budget_period, at('budget_period'), ['total', 'day', 'week', 'month']);
  if (limits.budget_period !== undefined && limits.budget_usd === undefined && limits.soft_budget_usd === undefined) {
    throw invalid(`needs ${at('budget_usd')} or ${at('soft_budget_usd')}.`, { param: at('budget_period') });
  }
  optionalNumber(limits.requests_per_minute, at('requests_per_minute'), { min: 0, max: 1e9, integer: true });
  optionalNumber(limits.requests_per_day, at('requests_per_day'), { min: 0, max: 1e12, integer: true });
  optionalNumber(limits.tokens_per_minute, at('tokens_per_minute'), { min: 0, max: 1e12, integer: true });
  optionalNumber(limits.max_concurrent, at('max_concurrent'), { min: 0, max: 1e6, integer: true });
  return limits;
}

/** `end_users` and `tags` rules: each a level's limits. */
function rules(limits: Record<string, unknown>, param: string): void {
  if (limits.end_users !== undefined) levelLimits(limits.end_users, `${param}.end_users`, []);
  if (limits.tags === undefined) return;
  const tags = requireObject(limits.tags, `${param}.tags`);
  if (Object.keys(tags).length > 32) throw invalid('at most 32 metadata keys.', { param: `${param}.tags` });
  for (const [metadataKey, byValue] of Object.entries(tags)) {
    const values = requireObject(byValue, `${param}.tags.${metadataKey}`);
    if (Object.keys(values).length === 0 || Object.keys(values).length > 1000) throw invalid('expected 1 to 1000 values (or "*").', { param: `${param}.tags.${metadataKey}` });
    for (const [value, tagLimits] of Object.entries(values)) levelLimits(tagLimits, `${param}.tags.${metadataKey}.${value}`, []);
  }
}

/** A virtual key's `limits`: a level's, the end-user and tag rules, and the allowed users and models. */
export function parseKeyLimits(value: unknown): VirtualKeyLimits {
  const limits = levelLimits(value, 'limits', [...RULE_FIELDS, ...ACCESS_FIELDS]);
  rules(limits, 'limits');
  if (limits.allowed_users !== undefined) stringList(limits.allowed_users, 'limits.allowed_users');
  if (limits.allowed_models !== undefined) stringList(limits.allowed_models, 'limits.allowed_models');
  return limits as VirtualKeyLimits;
}

/** A team's `limits`: a level's, and the end-user and tag rules for all its keys. */
export function parseTeamLimits(value: unknown): VirtualKeyLimits {
  const limits = levelLimits(value, 'limits', RULE_FIELDS);
  rules(limits, 'limits');
  return limits as VirtualKeyLimits;
}

/** A user's, service account's or the organization's `limits`: a level's own only. */
export function parseLevelLimits(value: unknown): LevelLimits {
  return levelLimits(value, 'limits', []) as LevelLimits;
}
