import { loadedOnFirstUse } from '@conclave/core/spi';

/** The etcd3 module (gRPC, protobufjs), loaded when a backend first opens a client. */
export const etcd3 = loadedOnFirstUse(() => require('etcd3') as typeof import('etcd3'));

/** @grpc/grpc-js, loaded with etcd3. */
export const grpc = loadedOnFirstUse(() => require('@grpc/grpc-js') as typeof import('@grpc/grpc-js'));
