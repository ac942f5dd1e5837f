import { defineConfig } from './config/index.js';
import { anthropic } from './plugins/providers/anthropic/index.js';
import { gemini } from './plugins/providers/gemini/index.js';
import { cerebras } from './plugins/providers/cerebras/index.js';
import { dashscope } from './plugins/providers/dashscope/index.js';
import { deepinfra } from './plugins/providers/deepinfra/index.js';
import { deepseek } from './plugins/providers/deepseek/index.js';
import { fireworks } from './plugins/providers/fireworks/index.js';
import { groq } from './plugins/providers/groq/index.js';
import { hyperbolic } from './plugins/providers/hyperbolic/index.js';
import { jina } from './plugins/providers/jina/index.js';
import { lambda } from './plugins/providers/lambda/index.js';
import { llamacpp } from './plugins/providers/llamacpp/index.js';
import { lmstudio } from './plugins/providers/lmstudio/index.js';
import { mistral } from './plugins/providers/mistral/index.js';
import { moonshot } from './plugins/providers/moonshot/index.js';
import { nebius } from './plugins/providers/nebius/index.js';
import { novita } from './plugins/providers/novita/index.js';
import { nvidiaNim } from './plugins/providers/nvidia-nim/index.js';
import { ollama } from './plugins/providers/ollama/index.js';
import { openrouter } from './plugins/providers/openrouter/index.js';
import { perplexity } from './plugins/providers/perplexity/index.js';
import { sambanova } from './plugins/providers/sambanova/index.js';
import { together } from './plugins/providers/together/index.js';
import { vllm } from './plugins/providers/vllm/index.js';
import { voyage } from './plugins/providers/voyage/index.js';
import { xai } from './plugins/providers/xai/index.js';
import { nscale } from './plugins/providers/nscale/index.js';
import { featherless } from './plugins/providers/featherless/index.js';
import { huggingface } from './plugins/providers/huggingface/index.js';
import { ai21 } from './plugins/providers/ai21/index.js';
import { friendli } from './plugins/providers/friendli/index.js';
import { upstage } from './plugins/providers/upstage/index.js';
import { writer } from './plugins/providers/writer/index.js';
import { inception } from './plugins/providers/inception/index.js';
import { parasail } from './plugins/providers/parasail/index.js';
import { mixedbread } from './plugins/providers/mixedbread/index.js';
import { azureAIFoundry } from './plugins/providers/azure-ai-foundry/index.js';
import { cloudflareAIGateway } from './plugins/providers/cloudflare-ai-gateway/index.js';
import { stabilityAI } from './plugins/providers/stability-ai/index.js';
import { sagemaker } from './plugins/providers/sagemaker/index.js';
import { replicate } from './plugins/providers/replicate/index.js';
import { siliconflow } from './plugins/providers/siliconflow/index.js';
import { scaleway } from './plugins/providers/scaleway/index.js';
import { ovhcloud } from './plugins/providers/ovhcloud/index.js';
import { vercelAiGateway } from './plugins/providers/vercel-ai-gateway/index.js';
import { litellm } from './plugins/providers/litellm/index.js';
import { portkey } from './plugins/providers/portkey/index.js';
import { githubModels } from './plugins/providers/github-models/index.js';
import { zhipu } from './plugins/providers/zhipu/index.js';
import { minimax } from './plugins/providers/minimax/index.js';
import { baseten } from './plugins/providers/baseten/index.js';
import { volcengineArk } from './plugins/providers/volcengine-ark/index.js';
import { azureOpenAI } from './plugins/providers/azure-openai/index.js';
import { bedrock } from './plugins/providers/bedrock/index.js';
import { cohere } from './plugins/providers/cohere/index.js';
import { cloudflareWorkersAI } from './plugins/providers/cloudflare-workers-ai/index.js';
import { watsonx } from './plugins/providers/watsonx/index.js';
import { elevenlabs } from './plugins/providers/elevenlabs/index.js';
import { deepgram } from './plugins/providers/deepgram/index.js';
import { databricks } from './plugins/providers/databricks/index.js';
import { snowflakeCortex } from './plugins/providers/snowflake-cortex/index.js';
import { builtinGuardrails, pii } from './plugins/guardrails/index.js';
import { openai } from './plugins/providers/openai/index.js';
import { vertexAI } from './plugins/providers/vertex-ai/index.js';

/**
 * The shipped configuration. Every provider and guardrail is registered here explicitly; copy this
 * file's shape to build your own (or keep yours outside the repository: GATEWAY_CONFIG=<path>).
 */
export default defineConfig({
  providers: [
    openai(),
    // Native APIs, each translated by its own plugin.
    anthropic(),
    gemini(),
    vertexAI(),
    azureOpenAI(),
    bedrock(),
    cohere(),
    // Native plugins added with issue 38.
    cloudflareWorkersAI(),
    watsonx(),
    elevenlabs(),
    deepgram(),
    databricks(),
    snowflakeCortex(),
    // The OpenAI-compatible family: each a manifest on plugins/providers/openai-compatible.
    groq(),
    together(),
    fireworks(),
    deepseek(),
    openrouter(),
    perplexity(),
    xai(),
    cerebras(),
    deepinfra(),
    mistral(),
    nvidiaNim(),
    sambanova(),
    hyperbolic(),
    novita(),
    nebius(),
    lambda(),
    moonshot(),
    dashscope(),
    vllm(),
    lmstudio(),
    llamacpp(),
    ollama(),
    jina(),
    voyage(),
    // OpenAI-compatible manifests added with issue 38 (upstream gateways included).
    nscale(),
    featherless(),
    siliconflow(),
    scaleway(),
    ovhcloud(),
    vercelAiGateway(),
    litellm(),
    portkey(),
    githubModels(),
    zhipu(),
    minimax(),
    baseten(),
    volcengineArk(),
    huggingface(),
    ai21(),
    friendli(),
    upstage(),
    writer(),
    inception(),
    parasail(),
    mixedbread(),
    azureAIFoundry(),
    cloudflareAIGateway(),
    stabilityAI(),
    sagemaker(),
    replicate(),
  ],
  // Request logs also go to external sinks listed here (docs/logs.md#sinks), e.g.
  // logs: { sinks: [nats({ servers: 'nats:4222', subject: 'gateway.logs', token: process.env.NATS_TOKEN })] },
  // with `import { nats } from './plugins/sinks/nats/index.js';`. None by default.
  // Listed at GET /admin/plugins (with their params schemas) whether or not a policy uses them.
  guardrails: [...builtinGuardrails],
  policies: {
    // Redacts PII in the request before it leaves and in the answer (streams included) before it
    // reaches the client.
    'pii-redact': {
      description: 'Redacts PII in input and output, streams included.',
      input: [pii({ action: 'redact' })],
      output: [pii({ action: 'redact' })],
    },
    // Refuses requests containing PII; cuts an answer (or a stream) before PII would reach the client.
    'pii-block': {
      description: 'Denies input containing PII and cuts output containing PII.',
      input: [pii({ action: 'deny' })],
      output: [pii({ action: 'deny' })],
    },
  },
});
