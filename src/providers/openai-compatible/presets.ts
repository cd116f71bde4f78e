/**
 * Providers that speak the OpenAI Chat Completions protocol, as data. A preset is enabled when
 * its key variable (or, for keyless servers, its base-URL variable) is set, or when the config
 * file names it. Every `*_BASE_URL` variable overrides the default endpoint.
 */
export interface OpenAICompatiblePreset {
  name: string;
  baseUrl: string;
  keyEnv: string | null;
  baseUrlEnv: string;
  /** Keyless servers (Ollama) are enabled by their base URL variable alone. */
  keyless?: boolean;
  /** Whether the server accepts `stream_options` (all current ones do; a config can say no). */
  streamOptions?: boolean;
}

export const presets: readonly OpenAICompatiblePreset[] = [
  { name: 'openai', baseUrl: 'https://api.openai.com/v1', keyEnv: 'OPENAI_API_KEY', baseUrlEnv: 'OPENAI_BASE_URL' },
  { name: 'deepseek', baseUrl: 'https://api.deepseek.com/v1', keyEnv: 'DEEPSEEK_API_KEY', baseUrlEnv: 'DEEPSEEK_BASE_URL' },
  { name: 'xai', baseUrl: 'https://api.x.ai/v1', keyEnv: 'XAI_API_KEY', baseUrlEnv: 'XAI_BASE_URL' },
  { name: 'mistral', baseUrl: 'https://api.mistral.ai/v1', keyEnv: 'MISTRAL_API_KEY', baseUrlEnv: 'MISTRAL_BASE_URL' },
  {
    name: 'qwen',
    baseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
    keyEnv: 'DASHSCOPE_API_KEY',
    baseUrlEnv: 'DASHSCOPE_BASE_URL',
  },
  { name: 'huggingface', baseUrl: 'https://router.huggingface.co/v1', keyEnv: 'HF_TOKEN', baseUrlEnv: 'HF_BASE_URL' },
  { name: 'groq', baseUrl: 'https://api.groq.com/openai/v1', keyEnv: 'GROQ_API_KEY', baseUrlEnv: 'GROQ_BASE_URL' },
  {
    name: 'openrouter',
    baseUrl: 'https://openrouter.ai/api/v1',
    keyEnv: 'OPENROUTER_API_KEY',
    baseUrlEnv: 'OPENROUTER_BASE_URL',
  },
  { name: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', keyEnv: null, baseUrlEnv: 'OLLAMA_BASE_URL', keyless: true },
];

export function findPreset(name: string): OpenAICompatiblePreset | undefined {
  return presets.find((p) => p.name === name);
}
