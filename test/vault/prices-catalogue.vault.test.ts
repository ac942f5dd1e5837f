import test from 'ava';
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { PluginDependencies, ProviderPlugin, ProviderRegistration } from '../../core/spec/index.js';
import { CATALOGUE_VERSION, PriceTable } from '../../core/vault/pricing.js';

const PROVIDERS_DIR = fileURLToPath(new URL('../../plugins/providers/', import.meta.url));
/** Folders under plugins/providers that hold shared code, not a provider. */
const NOT_PROVIDERS = new Set(['google-shared', 'openai-compatible']);

/** A current model of every shipped provider the catalogue prices, with the headers a request would carry. */
const PRICED: Record<string, { model: string; headers?: Record<string, string> }> = {
  anthropic: { model: 'claude-sonnet-4-5-20250929' },
  'azure-ai-foundry': { model: 'phi-4' },
  'azure-openai': { model: 'prod-chat-deployment', headers: { 'x-gateway-cloud-a-model-name': 'gpt-4o-mini' } },
  bedrock: { model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
  cerebras: { model: 'llama-3.3-70b' },
  cohere: { model: 'command-a-03-2025' },
  'cloudflare-workers-ai': { model: '@cf/meta/llama-3.1-8b-instruct-fp8' },
  deepseek: { model: 'deepseek-chat' },
  fireworks: { model: 'accounts/fireworks/models/llama-v3p1-8b-instruct' },
  gemini: { model: 'models/gemini-2.5-flash' },
  groq: { model: 'llama-3.3-70b-versatile' },
  mistral: { model: 'mistral-small-latest' },
  moonshot: { model: 'kimi-k2-0711-preview' },
  novita: { model: 'meta-llama/llama-3.1-8b-instruct' },
  openai: { model: 'gpt-4.1-mini' },
  ovhcloud: { model: 'Meta-Llama-3_3-70B-Instruct' },
  zhipu: { model: 'glm-4-plus' },
  minimax: { model: 'MiniMax-M1' },
  baseten: { model: 'openai/gpt-oss-120b' },
  openrouter: { model: 'openai/gpt-4o-mini' },
  perplexity: { model: 'sonar' },
  together: { model: 'meta-llama/Llama-3.3-70B-Instruct-Turbo' },
  'vertex-ai': { model: 'publishers/google/models/gemini-2.5-flash' },
  voyage: { model: 'voyage-3.5' },
  xai: { model: 'grok-3-mini' },
};

/** Shipped providers the catalogue has no prices for (a current model each): priced only by `pricing` in the config. */
const UNPRICED: Record<string, string> = {
  dashscope: 'qwen-plus',
  deepinfra: 'meta-llama/Meta-Llama-3.1-8B-Instruct',
  hyperbolic: 'meta-llama/Meta-Llama-3.1-8B-Instruct',
  jina: 'jina-embeddings-v3',
  lambda: 'llama3.1-8b-instruct',
  llamacpp: 'default',
  lmstudio: 'qwen2.5-7b-instruct',
  nebius: 'meta-llama/Meta-Llama-3.1-8B-Instruct',
  'nvidia-nim': 'meta/llama-3.1-8b-instruct',
  ollama: 'llama3.2',
  sambanova: 'Meta-Llama-3.1-8B-Instruct',
  vllm: 'meta-llama/Llama-3.1-8B-Instruct',
  nscale: 'meta-llama/Llama-3.1-8B-Instruct',
  featherless: 'Qwen/Qwen2.5-7B-Instruct',
  siliconflow: 'Qwen/Qwen2.5-7B-Instruct',
  scaleway: 'llama-3.1-8b-instruct',
  'vercel-ai-gateway': 'openai/gpt-4o-mini',
  litellm: 'gpt-4o-mini',
  portkey: 'gpt-4o-mini',
  'github-models': 'openai/gpt-4.1-mini',
  'volcengine-ark': 'doubao-seed-1-6-250615',
  huggingface: 'meta-llama/Llama-3.1-8B-Instruct:cerebras',
  watsonx: 'ibm/granite-3-3-8b-instruct',
  ai21: 'jamba-mini',
  elevenlabs: 'eleven_multilingual_v2',
  deepgram: 'nova-3',
  databricks: 'databricks-meta-llama-3-3-70b-instruct',
  'snowflake-cortex': 'claude-sonnet-4-5',
  friendli: 'meta-llama-3.1-8b-instruct',
  upstage: 'solar-pro2',
  writer: 'palmyra-x5',
  inception: 'mercury-2',
  parasail: 'parasail-llama-33-70b-fp8',
  mixedbread: 'mixedbread-ai/mxbai-embed-large-v1',
  'cloudflare-ai-gateway': 'openai/gpt-4o-mini',
  'stability-ai': 'stable-image-core',
  sagemaker: 'my-llama-endpoint',
  replicate: 'meta/meta-llama-3-8b-instruct',
};

const unusedDependencies = {} as PluginDependencies;

/** Every shipped provider plugin, by id: each folder's exported factories, called with no params. */
async function shippedProviders(): Promise<Map<string, ProviderPlugin>> {
  const plugins = new Map<string, ProviderPlugin>();
  for (const folder of readdirSync(PROVIDERS_DIR)) {
    if (NOT_PROVIDERS.has(folder) || !statSync(`${PROVIDERS_DIR}${folder}`).isDirectory()) continue;
    const module = (await import(`${PROVIDERS_DIR}${folder}/index.js`)) as Record<string, unknown>;
    for (const exported of Object.values(module)) {
      if (typeof exported !== 'function' || exported.length > 1) continue;
      let registration: unknown;
      try {
        registration = (exported as (params?: unknown) => unknown)();
      } catch {
        continue;
      }
      const candidate = registration as Partial<ProviderRegistration> | undefined;
      if (candidate?.manifest?.kind === 'provider' && typeof candidate.create === 'function') {
        plugins.set(candidate.manifest.id, candidate.create(unusedDependencies));
      }
    }
  }
  return plugins;
}

const table = new PriceTable();

test('every shipped provider is listed as priced or as unpriced', async (t) => {
  const ids = [...(await shippedProviders()).keys()].sort();
  t.deepEqual(ids, [...Object.keys(PRICED), ...Object.keys(UNPRICED)].sort());
  t.log(`${Object.keys(PRICED).length} of ${ids.length} shipped providers priced by the catalogue ${CATALOGUE_VERSION}; none for: ${Object.keys(UNPRICED).join(', ')}`);
});

test('the catalogue prices a current model of every shipped provider it covers', async (t) => {
  const plugins = await shippedProviders();
  for (const [id, { model, headers }] of Object.entries(PRICED)) {
    const plugin = plugins.get(id);
    t.truthy(plugin?.pricing, `${id} declares its catalogue provider`);
    const lookup = table.lookUp(plugin!, model, headers);
    t.is(lookup.source, `catalogue@${CATALOGUE_VERSION}`, `${id}/${model} is priced by the catalogue`);
    t.true((lookup.price?.input ?? 0) > 0, `${id}/${model} has an input price`);
  }
});

test('the catalogue has no price for the providers listed as unpriced (move them when it does)', async (t) => {
  const plugins = await shippedProviders();
  for (const [id, model] of Object.entries(UNPRICED)) {
    t.is(table.lookUp(plugins.get(id)!, model).source, 'none', `${id}/${model}`);
  }
});

test('provider model names are mapped onto the catalogue: Azure deployments, Bedrock regions, Vertex and Gemini paths', async (t) => {
  const plugins = await shippedProviders();
  const price = (id: string, model: string, headers?: Record<string, string>) => table.lookUp(plugins.get(id)!, model, headers);
  t.deepEqual(price('azure-openai', 'my-deployment', { 'x-gateway-cloud-a-model-name': 'gpt-4o-mini' }).price, { input: 0.15, output: 0.6, cachedInput: 0.075 });
  t.is(price('azure-openai', 'my-deployment').source, 'none', 'a deployment name alone says nothing of its model');
  t.like(price('azure-openai', 'gpt-4o').price, { input: 2.5, output: 10 });
  for (const model of ['anthropic.claude-3-5-haiku-20241022-v1:0', 'us.anthropic.claude-3-5-haiku-20241022-v1:0', 'eu.anthropic.claude-3-5-haiku-20241022-v1:0']) {
    t.like(price('bedrock', model).price, { input: 0.8, output: 4 }, model);
  }
  for (const model of ['gemini-2.5-flash', 'gemini-2.5-flash-001', 'google/gemini-2.5-flash', 'publishers/google/models/gemini-2.5-flash@001', 'projects/p-123456/locations/us-central1/publishers/google/models/gemini-2.5-flash']) {
    t.like(price('vertex-ai', model).price, { input: 0.3, output: 2.5 }, model);
  }
  t.like(price('vertex-ai', 'claude-sonnet-4-5@20250929').price, { input: 3, output: 15 }, 'Claude on Vertex');
  t.like(price('gemini', 'models/gemini-2.5-flash').price, { input: 0.3, output: 2.5 });
  t.like(price('groq', 'llama-3.3-70b-versatile').price, { input: 0.59, output: 0.79 });
  t.like(price('together', 'meta-llama/Llama-3.3-70B-Instruct-Turbo').price, { input: 0.88, output: 0.88 });
});

test('the configuration wins over the catalogue, under the gateway provider id', async (t) => {
  const plugins = await shippedProviders();
  const custom = new PriceTable({ models: { groq: { 'llama-3.3-70b-versatile': { input: 1, output: 2 } }, 'azure-openai': { 'gpt-4o-mini': { input: 3, output: 4 } } } });
  t.deepEqual(custom.lookUp(plugins.get('groq')!, 'llama-3.3-70b-versatile'), { price: { input: 1, output: 2 }, source: 'config' });
  t.deepEqual(custom.lookUp(plugins.get('azure-openai')!, 'prod', { 'x-gateway-cloud-a-model-name': 'gpt-4o-mini' }).price, { input: 3, output: 4 }, 'by the model the deployment runs');
  t.is(custom.lookUp(plugins.get('groq')!, 'gemma2-9b-it').source, `catalogue@${CATALOGUE_VERSION}`, 'other models keep the catalogue price');
});
