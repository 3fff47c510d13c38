import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isConclaveError } from '@conclave/core';
import { thrown } from '@conclave/test-harness';
import { driverMissingProvider, missingDrivers } from '../src/backend-drivers';
import { EXIT, errorLine, exitCodeFor } from '../src/cli-errors';
import { installedBackendPackages, type BackendPackage } from '../src/installed-backends';

/** The command installs no driver: a backend whose driver is absent is named, with what to install. */

describe('missingDrivers', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'conclave-drivers-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function install(folder: string, manifest: object): void {
    const dir = join(root, 'node_modules', folder);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest));
    writeFileSync(join(dir, 'index.js'), 'module.exports = {};');
  }

  function fakeBackend(): BackendPackage {
    install('@conclave/fake', {
      name: '@conclave/fake',
      conclave: { backend: 'fake' },
      peerDependencies: { '@conclave/core': '*', 'fake-driver': '*', 'fake-grpc': '*', '@types/fake-driver': '*' },
    });
    const [pkg] = installedBackendPackages(root);
    return pkg!;
  }

  test('a backend\'s drivers are its peers other than conclave and type packages; those not installed are missing', () => {
    const pkg = fakeBackend();
    expect(pkg.drivers).toEqual(['fake-driver', 'fake-grpc']);
    expect(missingDrivers(pkg)).toEqual(['fake-driver', 'fake-grpc']);
    install('fake-driver', { name: 'fake-driver', main: 'index.js' });
    expect(missingDrivers(pkg)).toEqual(['fake-grpc']);
    install('fake-grpc', { name: 'fake-grpc', main: 'index.js' });
    expect(missingDrivers(pkg)).toEqual([]);
  });
});

describe('driverMissingProvider', () => {
  const pkg: BackendPackage = { name: '@conclave/fake', kind: 'fake', builtOver: [], drivers: ['fake-driver'], dir: __dirname };

  test('refuses every URL with DRIVER_MISSING, one line naming the package to install, exit code as for a usage error', () => {
    const provider = driverMissingProvider(pkg, ['fake-driver'], undefined);
    const err = thrown(() => provider.fromUrl('fake://h:1'));
    expect(isConclaveError(err, 'DRIVER_MISSING')).toBe(true);
    expect(errorLine(err)).toBe('conclave: the fake backend needs fake-driver, not installed beside @conclave/fake: npm install fake-driver (backend fake)');
    expect(exitCodeFor(err)).toBe(EXIT.USAGE);
  });

  test("keeps the schemes and URL forms of the provider when the package loaded, else serves its kind; the help says what to install", () => {
    const loaded = { kind: 'fake', schemes: ['fake', 'fakes'], urlForms: [{ form: 'fake://h', what: 'a fake' }], fromUrl: () => ({}) as never };
    const withLoaded = driverMissingProvider(pkg, ['fake-driver'], loaded);
    expect(withLoaded.schemes).toEqual(['fake', 'fakes']);
    expect(withLoaded.urlForms).toEqual([{ form: 'fake://h', what: 'a fake (needs fake-driver: npm install fake-driver)' }]);
    const alone = driverMissingProvider(pkg, ['fake-driver', 'fake-grpc'], undefined);
    expect(alone.schemes).toEqual(['fake']);
    expect(alone.urlForms![0]!.what).toMatch(/needs fake-driver and fake-grpc: npm install fake-driver fake-grpc/);
  });
});
