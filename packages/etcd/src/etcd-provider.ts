import { providerUrl, type BackendProvider } from '@conclave/core/spi';
import { EtcdBackend } from './etcd-backend';
import { parseEtcdUrl } from './etcd-options';

/** `etcd://[user:pass@]h1:2379[,h2:2379…][?prefix=P&requestTimeoutMs=N]` → an `EtcdBackend`. */
export const etcdProvider: BackendProvider = {
  kind: 'etcd',
  schemes: ['etcd'],
  urlForms: [{ form: 'etcd://[user:pass@]h1:2379[,h2:2379…][?prefix=P&requestTimeoutMs=N]', what: 'etcd lease-attached keys, lowest create revision leads' }],
  fromUrl(url) {
    return new EtcdBackend(parseEtcdUrl(providerUrl(etcdProvider, url)));
  },
};
