import { assertParams } from '../params-schema.js';
import { BootError } from '../errors.js';
import type { GuardrailManifest, GuardrailPlugin, GuardrailRegistration, GuardrailSide } from '../spec/guardrail.js';
import type { PluginDependencies, PluginManifest } from '../spec/manifest.js';
import type { FailMode, GuardrailStep, PolicyDefinition, StreamWindow } from './policy.js';

const NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const DEFAULT_TIMEOUT_MS = 1000;

/** One guardrail of a compiled chain. */
export interface CompiledStep {
  readonly id: string;
  readonly plugin: GuardrailPlugin;
  readonly manifest: GuardrailManifest;
  readonly params: unknown;
  readonly registration: GuardrailRegistration;
  readonly onError: FailMode;
  readonly timeoutMs: number;
}

/** A policy validated and instantiated at boot. */
export interface CompiledPolicy {
  readonly name: string;
  readonly description?: string;
  readonly input: readonly CompiledStep[];
  readonly output: readonly CompiledStep[];
  readonly mode: 'sequential' | 'parallel';
  readonly revealReasons: boolean;
  readonly passthrough: 'refuse' | 'allow-unjudged';
  readonly window: StreamWindow;
  readonly wholeAnswer: 'buffer' | 'after';
}

/** A policy as `GET /admin/policies` shows it: params marked `writeOnly` in the schema are hidden. */
export interface PolicyListing {
  readonly name: string;
  readonly description?: string;
  readonly mode: 'sequential' | 'parallel';
  readonly revealReasons: boolean;
  readonly passthrough: 'refuse' | 'allow-unjudged';
  readonly stream: { readonly window: StreamWindow; readonly wholeAnswer: 'buffer' | 'after' };
  readonly input: readonly StepListing[];
  readonly output: readonly StepListing[];
}

interface StepListing {
  readonly guardrail: string;
  readonly params: unknown;
  readonly onError: FailMode;
  readonly timeoutMs: number;
  readonly incremental: boolean;
}

const isStep = (entry: GuardrailRegistration | GuardrailStep): entry is GuardrailStep => 'guardrail' in entry && !('manifest' in entry);

/**
 * The configured policies, validated at boot: every guardrail's params against its manifest's
 * schema (the error names policy, guardrail and field), sides, time budgets and stream windows.
 * Exposed on the gateway as `policies` (the vault checks `has(name)` when a key is created).
 */
export class PolicyRegistry {
  private readonly policies = new Map<string, CompiledPolicy>();

  constructor(definitions: Readonly<Record<string, PolicyDefinition>>, dependencies: (manifest: PluginManifest) => PluginDependencies) {
    for (const [name, definition] of Object.entries(definitions)) {
      const label = `policy "${name}"`;
      if (!NAME_PATTERN.test(name)) throw new BootError('INVALID_CONFIG', `${label}: a policy name must match ${NAME_PATTERN}`);
      if (typeof definition !== 'object' || definition === null) throw new BootError('INVALID_CONFIG', `${label} must be an object`);
      if (definition.mode !== undefined && definition.mode !== 'sequential' && definition.mode !== 'parallel') {
        throw new BootError('INVALID_CONFIG', `${label}: mode must be "sequential" or "parallel"`);
      }
      const compileSide = (side: GuardrailSide): CompiledStep[] =>
        (definition[side] ?? []).map((entry, index) => {
          const where = `${label}, ${side} guardrail #${index + 1}`;
          const { guardrail, onError = 'fail-closed', timeoutMs = DEFAULT_TIMEOUT_MS } = isStep(entry) ? entry : { guardrail: entry };
          const manifest = guardrail?.manifest;
          if (!manifest || manifest.kind !== 'guardrail' || typeof guardrail.create !== 'function') {
            throw new BootError('INVALID_CONFIG', `${where} is not a guardrail (call the plugin's factory: pii({ ... }))`);
          }
          const at = `${where} "${manifest.id}"`;
          if (!manifest.stages.includes(side)) throw new BootError('INVALID_CONFIG', `${at} cannot judge the ${side} (it supports: ${manifest.stages.join(', ')})`);
          if (onError !== 'fail-closed' && onError !== 'fail-open') throw new BootError('INVALID_CONFIG', `${at}: onError must be "fail-closed" or "fail-open"`);
          if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new BootError('INVALID_CONFIG', `${at}: timeoutMs must be a positive integer`);
          if (manifest.params) assertParams(manifest.params, guardrail.params ?? {}, at, 'params');
          let plugin: GuardrailPlugin;
          try {
            plugin = guardrail.create(dependencies(manifest));
          } catch (error) {
            throw new BootError('INVALID_PARAMS', `${at}: ${(error as Error).message}`);
          }
          return { id: manifest.id, plugin, manifest, params: guardrail.params, registration: guardrail, onError, timeoutMs };
        });
      this.policies.set(name, {
        name,
        description: definition.description,
        input: compileSide('input'),
        output: compileSide('output'),
        mode: definition.mode ?? 'sequential',
        revealReasons: definition.revealReasons === true,
        passthrough: checkPassthrough(label, definition.passthrough ?? 'refuse'),
        window: checkWindow(label, definition.stream?.window ?? { kind: 'sentence' }),
        wholeAnswer: checkWholeAnswer(label, definition.stream?.wholeAnswer ?? 'buffer'),
      });
    }
  }

  has(name: string): boolean {
    return this.policies.has(name);
  }

  get(name: string): CompiledPolicy | undefined {
    return this.policies.get(name);
  }

  /** One registration per guardrail plugin the policies use (for the plugin listing). */
  registrations(): GuardrailRegistration[] {
    const byId = new Map<string, GuardrailRegistration>();
    for (const policy of this.policies.values()) {
      for (const compiled of [...policy.input, ...policy.output]) if (!byId.has(compiled.id)) byId.set(compiled.id, compiled.registration);
    }
    return [...byId.values()];
  }

  list(): PolicyListing[] {
    const steps = (chain: readonly CompiledStep[]) =>
      chain.map((compiled) => ({
        guardrail: compiled.id,
        params: hideWriteOnly(compiled.params, compiled.manifest.params),
        onError: compiled.onError,
        timeoutMs: compiled.timeoutMs,
        incremental: compiled.manifest.incremental,
      }));
    return [...this.policies.values()].map((policy) => ({
      name: policy.name,
      ...(policy.description ? { description: policy.description } : {}),
      mode: policy.mode,
      revealReasons: policy.revealReasons,
      passthrough: policy.passthrough,
      stream: { window: policy.window, wholeAnswer: policy.wholeAnswer },
      input: steps(policy.input),
      output: steps(policy.output),
    }));
  }
}

function checkPassthrough(label: string, value: string): 'refuse' | 'allow-unjudged' {
  if (value === 'refuse' || value === 'allow-unjudged') return value;
  throw new BootError('INVALID_CONFIG', `${label}: passthrough must be 'refuse' or 'allow-unjudged', got ${JSON.stringify(value)}`);
}

function checkWindow(label: string, window: StreamWindow): StreamWindow {
  const positive = (value: unknown) => value === undefined || (Number.isInteger(value) && (value as number) > 0);
  if (window.kind === 'sentence' && positive(window.maxChars) && positive(window.holdChars)) return window;
  if (window.kind === 'chars' && positive(window.size) && window.size !== undefined) return window;
  throw new BootError('INVALID_CONFIG', `${label}: stream.window must be { kind: 'sentence', maxChars?, holdChars? } or { kind: 'chars', size } with positive integers`);
}

function checkWholeAnswer(label: string, value: string): 'buffer' | 'after' {
  if (value === 'buffer' || value === 'after') return value;
  throw new BootError('INVALID_CONFIG', `${label}: stream.wholeAnswer must be "buffer" or "after"`);
}

/** Replaces top-level params whose schema says `writeOnly: true` (secrets) with "[hidden]". */
function hideWriteOnly(params: unknown, schema: Record<string, unknown> | undefined): unknown {
  const properties = schema?.properties as Record<string, { writeOnly?: boolean }> | undefined;
  if (typeof params !== 'object' || params === null || !properties) return params;
  const shown: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) shown[key] = properties[key]?.writeOnly ? '[hidden]' : value;
  return shown;
}
