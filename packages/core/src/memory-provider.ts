import type { BackendProvider } from './backend-provider';
import { providerUrl } from './create-backend';
import { ConclaveError } from './errors';
import { MemoryBackend } from './memory-backend';
import { redactUrl } from './redact-url';
import { describe as describeValue } from './validation';

/** `memory:` — a `MemoryBackend`, in this process only (demos, tests). It takes no settings. */
export const memoryProvider: BackendProvider = {
  kind: 'memory',
  schemes: ['memory'],
  urlForms: [{ form: 'memory:', what: 'in this process only (tries, demos)' }],
  fromUrl(url) {
    const text = providerUrl(memoryProvider, url);
    if (text !== 'memory:' && text !== 'memory://') {
      throw new ConclaveError('INVALID_URL', `the memory backend takes no settings: use "memory:", got ${describeValue(redactUrl(text))}`);
    }
    return new MemoryBackend();
  },
};
