import type { GeminiContent, GeminiRequest } from '../../../spec/gemini.js';
import type { GuardrailParameters } from '../../../spec/guardrail.js';
import { jsonLeaves, setLeaf } from '../../../guardrails/json-leaves.js';

/** Where a text is in a request, found again in a copy, and how to write a rewritten one there. */
interface Slot {
  readonly text: string;
  readonly set: (copy: GeminiRequest, text: string) => void;
}

function contentSlots(content: GeminiContent, locate: (copy: GeminiRequest) => GeminiContent, slots: Slot[]): void {
  content.parts.forEach((part, index) => {
    if (typeof part.text === 'string' && part.thought !== true) slots.push({ text: part.text, set: (copy, text) => void (locate(copy).parts[index].text = text) });
    // The args of a function call the client sends back: each string in them.
    else if (part.functionCall && typeof part.functionCall.args === 'object' && part.functionCall.args !== null) {
      for (const leaf of jsonLeaves(part.functionCall.args)) slots.push({ text: leaf.text, set: (copy, text) => setLeaf(locate(copy).parts[index].functionCall!.args, leaf.path, text) });
    }
  });
}

/**
 * The texts input guardrails judge in a Gemini request: the system instruction's and every
 * content's text parts (thoughts aside) and the strings of the function calls' args it carries back; the token cap; and how a transform verdict is written back
 * into a copy of the request (the client's body stays as received).
 */
export function geminiJudgedRequest(request: GeminiRequest): {
  texts: string[];
  parameters: GuardrailParameters;
  rewrite: (texts: readonly string[], parameters: GuardrailParameters) => GeminiRequest;
} {
  const slots: Slot[] = [];
  const system = request.systemInstruction;
  if (typeof system === 'string') slots.push({ text: system, set: (copy, text) => void (copy.systemInstruction = text) });
  else if (system) contentSlots(system, (copy) => copy.systemInstruction as GeminiContent, slots);
  request.contents.forEach((content, index) => contentSlots(content, (copy) => copy.contents[index], slots));
  const maxTokens = request.generationConfig?.maxOutputTokens;
  return {
    texts: slots.map((slot) => slot.text),
    parameters: typeof maxTokens === 'number' ? { maxTokens } : {},
    rewrite(texts, parameters) {
      const copy = structuredClone(request);
      slots.forEach((slot, index) => {
        if (texts[index] !== slot.text) slot.set(copy, texts[index]);
      });
      if (parameters.maxTokens !== undefined) copy.generationConfig = { ...copy.generationConfig, maxOutputTokens: parameters.maxTokens };
      return copy;
    },
  };
}
