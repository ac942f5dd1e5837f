import { ALLOW, defineGuardrail } from '../../../core/spec/index.js';
import { injectionScore } from './prompt-injection-signals.js';

export interface PromptInjectionParams {
  /** Score at or above which a text is denied (default 3: one strong signal, or two weaker ones). */
  threshold?: number;
}

/** Denies input that shows prompt-injection signals (phrases and chat-format imitation). */
export const promptInjection = defineGuardrail<PromptInjectionParams>(
  {
    id: 'prompt-injection',
    version: '1.0.0',
    description: 'Denies input showing prompt-injection signals: instruction overrides, prompt extraction, role hijacks, imitated chat structure.',
    stages: ['input'],
    incremental: false,
    params: { type: 'object', additionalProperties: false, properties: { threshold: { type: 'integer', minimum: 1 } } },
  },
  (params) => {
    const threshold = params.threshold ?? 3;
    return (input) => {
      for (const text of input.texts) {
        const { score, signals } = injectionScore(text);
        if (score >= threshold) return { action: 'deny', reason: `prompt injection signals (score ${score}): ${signals.join(', ')}` };
      }
      return ALLOW;
    };
  },
);
