import { type CompatibleProviderManifest, defineCompatibleProvider } from '../openai-compatible/index.js';

/** NVIDIA NIM: base URL, auth and documented differences from OpenAI (see docs/providers/nvidia-nim.md). */
export const nvidiaNimManifest: CompatibleProviderManifest = {
  id: 'nvidia-nim',
  // LiteLLM's `<prefix>/<model>` names, for `llm-gateway import litellm`.
  foreignNames: { litellm: ['nvidia_nim'] },
  name: 'NVIDIA NIM',
  description: 'NVIDIA NIM hosted API catalog or a self-hosted NIM (OpenAI-compatible chat and embeddings).',
  baseUrl: 'https://integrate.api.nvidia.com/v1',
  modelCatalogue: { catalogProvider: 'nvidia' },
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
  chat: {
    n: false,
  },
};

/** NVIDIA NIM hosted API catalog or a self-hosted NIM (OpenAI-compatible chat and embeddings). */
export const nvidiaNim = defineCompatibleProvider(nvidiaNimManifest);
